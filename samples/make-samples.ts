/**
 * Generates the sample rosters (fictional people, seeded so reruns give identical files):
 * - samples/reviewers.csv       clean CSV, UTF-8, comma
 * - samples/editorial.xlsx      two sheets: "Active reviewers" and "Editorial board"
 * - samples/legacy-export.csv   messy legacy export: Windows-1252, semicolons, a title line, blank
 *                               lines, "Last, First" names, several emails per cell, ORCID URLs,
 *                               Excel serial dates, duplicates and a few deliberately broken rows
 *
 * Run: npx tsx samples/make-samples.ts
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import { orcidCheckDigit } from '../src/mapping/transforms.js';
import { seededRandom } from '../src/seeded-random.js';

const here = (name: string): string => fileURLToPath(new URL(name, import.meta.url));

const random = seededRandom(20240301);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));

/**
 * A fictional ORCID iD with a correct ISO 7064 11,2 check digit, inside the first block ORCID
 * issues (0000-0001-5000-0007 to 0000-0003-5000-0001), as the `orcid` transform requires. Two
 * draws, as before, so the other columns of the samples stay as they were.
 */
function orcid(): string {
  const draw = (int(1, 3) - 1) * 10_000_000 + int(0, 9999999);
  const base = String(15_000_000 + Math.floor((draw * 2) / 3)).padStart(15, '0');
  const full = `${base}${orcidCheckDigit(base)}`;
  return `${full.slice(0, 4)}-${full.slice(4, 8)}-${full.slice(8, 12)}-${full.slice(12)}`;
}

const FIRST = [
  'Amara', 'Bjørn', 'Chiara', 'Daniel', 'Elif', 'Farid', 'Grete', 'Hiroshi', 'Ines', 'Jonas', 'Kavya', 'Lucía',
  'Mateo', 'Nadia', 'Oskar', 'Priya', 'Quentin', 'Rosa', 'Samuel', 'Tereza', 'Umar', 'Valentina', 'Wei', 'Ximena',
  'Yusuf', 'Zofia', 'Aoife', 'Bruno', 'Célia', 'Dmitri', 'Esther', 'Femi', 'Gabriel', 'Hanna', 'Ibrahim', 'Julia',
  'Kenji', 'Leila', 'Marco', 'Noor',
];
const LAST = [
  'Okafor', 'Lindqvist', 'Bianchi', 'Hartmann', 'Yılmaz', 'Haddad', 'Sørensen', 'Tanaka', 'Moreau', 'Becker',
  'Iyer', 'Fernández', 'Rossi', 'Kowalska', 'Nyström', 'Raman', 'Dubois', 'García', 'Mensah', 'Novák', 'Siddiqui',
  'Romano', 'Zhang', 'Ortega', 'Demir', 'Wiśniewska', 'Murphy', 'Costa', 'Lefèvre', 'Volkov', 'Cohen', 'Adeyemi',
  'Martin', 'Virtanen', 'Khalil', 'Schneider', 'Sato', 'Farahani', 'Conti', 'Rahman',
];
const INSTITUTIONS = [
  'Karolinska Institutet, Stockholm, Sweden',
  'University of Bologna, Bologna, Italy',
  'Charité – Universitätsmedizin Berlin, Germany',
  'University of Tokyo, Tokyo, Japan',
  'Institut Pasteur, Paris, France',
  'University of Cape Town, South Africa',
  'McGill University, Montreal, Canada',
  'Universidad de Buenos Aires, Argentina',
  'Aarhus University, Aarhus, Denmark',
  'Indian Institute of Science, Bengaluru, India',
  'University of Melbourne, Australia',
  'Trinity College Dublin, Ireland',
];
const AREAS = ['Oncology', 'Cardiology', 'Neurology', 'Immunology', 'Genetics', 'Epidemiology', 'Machine Learning', 'Statistics'];
const LEVELS = ['Junior', 'Senior', 'Expert'];
const AVAILABILITY = ['Available', 'Available', 'Busy', 'On leave'];

interface Person {
  first: string;
  last: string;
  email: string;
  orcid: string;
  affiliation: string;
  areas: string[];
  level: string;
  reviews: number;
  lastReview: Date;
  availability: string;
}

function asciiSlug(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ø/g, 'o')
    .replace(/ı/g, 'i')
    .replace(/ł/g, 'l')
    .toLowerCase()
    .replace(/[^a-z]/g, '');
}

function person(i: number): Person {
  const first = FIRST[i % FIRST.length]!;
  const last = LAST[(i * 7) % LAST.length]!;
  const areas = [...new Set([pick(AREAS), pick(AREAS)])];
  return {
    first,
    last,
    email: `${asciiSlug(first)}.${asciiSlug(last)}@${pick(['uni-example.org', 'research.example.edu', 'hospital.example.net'])}`,
    orcid: random() < 0.8 ? orcid() : '',
    affiliation: pick(INSTITUTIONS),
    areas,
    level: pick(LEVELS),
    reviews: int(0, 48),
    lastReview: new Date(Date.UTC(int(2019, 2024), int(0, 11), int(1, 28))),
    availability: pick(AVAILABILITY),
  };
}

const iso = (d: Date): string => d.toISOString().slice(0, 10);
const csvCell = (v: string): string => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

function makeReviewersCsv(): void {
  const header = ['Reviewer ID', 'First name', 'Last name', 'Email', 'ORCID', 'Affiliation', 'Expertise level', 'Subject areas', 'Reviews completed', 'Last review', 'Availability', 'Active'];
  const lines = [header.join(',')];
  for (let i = 0; i < 40; i++) {
    const p = person(i);
    const active = i === 17 || i === 33 ? 'No' : 'Yes';
    lines.push(
      [`R${String(1001 + i)}`, p.first, p.last, p.email, p.orcid, p.affiliation, p.level, p.areas.join('; '), String(p.reviews), iso(p.lastReview), p.availability, active]
        .map(csvCell)
        .join(','),
    );
  }
  writeFileSync(here('reviewers.csv'), `${lines.join('\n')}\n`);
}

async function makeEditorialXlsx(): Promise<void> {
  const workbook = new ExcelJS.Workbook();
  workbook.creator = 'rostersync samples';
  workbook.created = new Date(Date.UTC(2024, 2, 1));
  workbook.modified = workbook.created;

  const reviewers = workbook.addWorksheet('Active reviewers');
  reviewers.columns = [
    { header: 'ID', key: 'id', width: 10 },
    { header: 'Name', key: 'name', width: 24 },
    { header: 'Email', key: 'email', width: 34 },
    { header: 'ORCID', key: 'orcid', width: 40 },
    { header: 'Affiliation', key: 'affiliation', width: 44 },
    { header: 'Level', key: 'level', width: 10 },
    { header: 'Subject areas', key: 'areas', width: 30 },
    { header: 'Reviews completed', key: 'reviews', width: 10 },
    { header: 'Last review', key: 'lastReview', width: 14 },
    { header: 'Availability', key: 'availability', width: 12 },
    { header: 'COI', key: 'coi', width: 6 },
  ];
  // Legacy abbreviations the office still types; the mapping translates them with `values`.
  const levelShort: Record<string, string> = { Junior: 'Jr', Senior: 'Sr', Expert: 'Expert' };
  for (let i = 0; i < 20; i++) {
    const p = person(100 + i);
    const url = p.orcid ? `https://orcid.org/${p.orcid}` : '';
    const added = reviewers.addRow({
      id: 5001 + i,
      name: `${p.first} ${p.last}`,
      email: p.email,
      orcid: url ? { text: url, hyperlink: url } : null,
      affiliation: p.affiliation,
      level: i % 3 === 0 ? levelShort[p.level] : p.level,
      areas: p.areas.join('; '),
      reviews: p.reviews,
      lastReview: p.lastReview,
      availability: p.availability,
      coi: i % 7 === 3 ? 'Yes' : 'No',
    });
    added.getCell('lastReview').numFmt = 'dd/mm/yyyy';
  }

  const board = workbook.addWorksheet('Editorial board');
  board.columns = [
    { header: 'Board ID', key: 'id', width: 10 },
    { header: 'Full name', key: 'name', width: 26 },
    { header: 'Email', key: 'email', width: 34 },
    { header: 'ORCID', key: 'orcid', width: 22 },
    { header: 'Role', key: 'role', width: 22 },
    { header: 'Term ends', key: 'termEnds', width: 14 },
    { header: 'Subject areas', key: 'areas', width: 30 },
    { header: 'Notes', key: 'notes', width: 40 },
  ];
  const roles = ['EiC', 'Associate Editor', 'Associate Editor', 'Board member', 'Board member', 'Board member'];
  for (let i = 0; i < 12; i++) {
    const p = person(200 + i);
    const added = board.addRow({
      id: `EB-${String(i + 1).padStart(2, '0')}`,
      name: `${p.first} ${p.last}`,
      email: p.email,
      orcid: p.orcid || null,
      role: roles[i % roles.length],
      termEnds: new Date(Date.UTC(2025 + (i % 4), [5, 11][i % 2]!, 30)),
      areas: p.areas.join('; '),
      notes: i % 4 === 0 ? { richText: [{ text: 'Handles ', font: {} }, { text: 'statistics', font: { bold: true } }, { text: ' queries' }] } : null,
    });
    added.getCell('termEnds').numFmt = 'yyyy-mm-dd';
  }
  await workbook.xlsx.writeFile(here('editorial.xlsx'));
}

function makeLegacyCsv(): void {
  const header = ['PersonID', 'Name', 'E-mail', 'ORCID', 'Institution', 'Level', 'Areas', 'Reviews', 'Last review', 'Status', 'Remarks'];
  const rows: string[][] = [];
  const legacyLevel: Record<string, string> = { Junior: 'Jr', Senior: 'Sr', Expert: 'Prof' };
  for (let i = 0; i < 26; i++) {
    const p = person(300 + i);
    const second = random() < 0.35 ? `${asciiSlug(p.first)[0]}.${asciiSlug(p.last)}@alumni.example.org` : '';
    const emails = second ? `${p.email.toUpperCase()}; ${second}` : p.email;
    const orcidCell = p.orcid ? (random() < 0.6 ? `https://orcid.org/${p.orcid}` : p.orcid.replace(/-/g, ' ')) : '';
    const serial = Math.round(p.lastReview.getTime() / 86_400_000) + 25569;
    const lastReview = i % 2 === 0 ? String(serial) : `${String(p.lastReview.getUTCDate()).padStart(2, '0')}.${String(p.lastReview.getUTCMonth() + 1).padStart(2, '0')}.${p.lastReview.getUTCFullYear()}`;
    rows.push([
      String(70_000 + i * 13),
      `${p.last}, ${p.first}`,
      emails,
      orcidCell,
      ` ${p.affiliation.replace(' ', '  ')} `,
      legacyLevel[p.level]!,
      p.areas.join(', '),
      `${p.reviews},0`,
      lastReview,
      i === 5 || i === 19 ? 'inactive' : 'active',
      i % 5 === 0 ? 'Prefers short papers – no weekends' : '',
    ]);
  }
  // Deliberately broken rows, one problem each, so validate has something to explain.
  rows[3]![3] = rows[3]![3] ? rows[3]![3].replace(/\d$/, (d) => String((Number(d) + 1) % 10)) : '0000-0002-1825-0098';
  rows[8]![2] = 'jan.novak@';
  rows[11]![5] = 'Guru';
  rows[14]![8] = '30.02.2021';
  rows[22]![1] = '';
  // A person entered twice under the same PersonID (a classic of legacy databases).
  rows.push([...rows[9]!]);
  rows[rows.length - 1]![2] = 'second.copy@example.org';

  const lines = ['Reviewer database export – EdManager 4.2 – 01.03.2024;;;;;;;;;;', header.join(';')];
  rows.forEach((r, i) => {
    lines.push(r.map((c) => (/[";\r\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(';'));
    if (i === 6 || i === 15) lines.push('');
  });
  lines.push('', '');
  writeFileSync(here('legacy-export.csv'), iconv.encode(`${lines.join('\r\n')}`, 'windows-1252'));
}

makeReviewersCsv();
await makeEditorialXlsx();
makeLegacyCsv();
process.stdout.write('wrote samples/reviewers.csv, samples/editorial.xlsx, samples/legacy-export.csv\n');
