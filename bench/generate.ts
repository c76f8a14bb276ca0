/**
 * Seeded roster generators for the benchmarks ("Benchmarks"): realistic names, one or two
 * emails, ORCIDs with valid ISO 7064 checksums (some blank), option labels of the default fixture's
 * custom fields, review counts and ISO dates. The same seed and size always give the same file.
 *
 * `variant` k (≥ 1) changes exactly `changedPercent` % of the rows (every (100/p)-th row) by setting
 * their review count to base + k, so variant k and variant k-1 differ in exactly those rows.
 */
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
export { seededRandom } from '../src/runtime/seeded-random.js';
import { seededRandom } from '../src/runtime/seeded-random.js';

export interface RosterOptions {
  rows: number;
  format: 'csv' | 'xlsx';
  /** @default 42 */
  seed?: number;
  /** @default 0 (the base roster) */
  variant?: number;
  /** Share of rows changed in a variant, in percent. @default 1 */
  changedPercent?: number;
}

export interface GeneratedRoster {
  dir: string;
  roster: string;
  mapping: string;
  pipeline: string;
  rows: number;
}

const FIRST = ['Ada', 'Ben', 'Chiara', 'Dmitri', 'Elif', 'Farah', 'Gustavo', 'Hiroshi', 'Ines', 'Jonas', 'Kwame', 'Lena', 'Marie', 'Nadia', 'Omar', 'Priya', 'Quentin', 'Rosa', 'Sven', 'Tomás', 'Uma', 'Viktor', 'Wen', 'Ximena', 'Yusuf', 'Zofia', 'Siobhán', 'José', 'Aoife', 'Mei'];
const LAST = ['Okafor', 'Thompson', 'Chen', 'Andersson', 'Tanaka', 'Haddad', 'Kowalski', 'Wiśniewska', 'Wei', 'Rahimi', 'Nilsen', 'Nasser', 'Aziz', 'García', "O'Brien", 'Müller', 'Rossi', 'Dubois', 'Novak', 'Silva', 'Kim', 'Nguyen', 'Petrov', 'Costa', 'Mensah', 'Schmidt', 'Ivanova', 'Murphy', 'Sato', 'Fernández'];
const DOMAINS = ['uni-heidelberg.de', 'ox.ac.uk', 'mit.edu', 'karolinska.se', 'u-tokyo.ac.jp', 'usp.br', 'uct.ac.za', 'example.org'];
const LEVELS = ['Junior', 'Senior', 'Expert'];
const AREAS = ['Oncology', 'Cardiology', 'Neurology', 'Immunology', 'Genetics', 'Epidemiology', 'Machine Learning', 'Statistics'];


/** ORCID check character (ISO 7064 11,2) of the first 15 digits. */
export function orcidCheck(digits15: string): string {
  let total = 0;
  for (const ch of digits15) total = (total + Number(ch)) * 2;
  const result = (12 - (total % 11)) % 11;
  return result === 10 ? 'X' : String(result);
}

export const HEADERS = ['ID', 'Full name', 'Email', 'ORCID', 'Level', 'Areas', 'Reviews', 'Last review'] as const;

export interface RosterRow {
  id: string;
  name: string;
  email: string;
  orcid: string;
  level: string;
  areas: string;
  reviews: number;
  lastReview: Date;
}

/** Row i (0-based) of a roster; depends only on seed, i and the variant. */
export function makeRows(options: RosterOptions): Generator<RosterRow> {
  return (function* () {
    const random = seededRandom(options.seed ?? 42);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
    const every = Math.round(100 / (options.changedPercent ?? 1));
    const variant = options.variant ?? 0;
    for (let i = 0; i < options.rows; i++) {
      const first = pick(FIRST);
      const last = pick(LAST);
      const local = `${first}.${last}`.toLowerCase().normalize('NFD').replace(/[^a-z.]/g, '');
      let email = `${local}${i}@${pick(DOMAINS)}`;
      if (random() < 0.1) email += `; ${local}${i}@gmail.com`;
      let orcid = '';
      if (random() < 0.7) {
        // Inside the first block ORCID issues (the `orcid` transform refuses iDs outside), one draw as before.
        const digits = String(15_000_000 + Math.floor(random() * 20_000_000)).padStart(15, '0');
        const all = digits + orcidCheck(digits);
        orcid = `${all.slice(0, 4)}-${all.slice(4, 8)}-${all.slice(8, 12)}-${all.slice(12)}`;
      }
      const areaCount = 1 + Math.floor(random() * 3);
      const areas = new Set<string>();
      for (let k = 0; k < areaCount; k++) areas.add(pick(AREAS));
      let reviews = Math.floor(random() * 60);
      if (variant > 0 && i % every === 0) reviews += variant;
      const lastReview = new Date(Date.UTC(2019 + Math.floor(random() * 6), Math.floor(random() * 12), 1 + Math.floor(random() * 28)));
      yield {
        id: `R${String(i + 1).padStart(7, '0')}`,
        name: `${first} ${last}`,
        email,
        orcid,
        level: pick(LEVELS),
        areas: [...areas].join('; '),
        reviews,
        lastReview,
      };
    }
  })();
}

function csvCell(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export async function writeCsv(path: string, options: RosterOptions): Promise<void> {
  const out = createWriteStream(path);
  let buffer = `${HEADERS.join(',')}\n`;
  for (const row of makeRows(options)) {
    buffer += `${row.id},${csvCell(row.name)},${csvCell(row.email)},${row.orcid},${row.level},${row.areas},${row.reviews},${row.lastReview.toISOString().slice(0, 10)}\n`;
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      buffer = '';
    }
  }
  out.write(buffer);
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
}

/** XLSX as Excel writes it: shared strings, real numbers, date cells with a date format. */
export async function writeXlsx(path: string, options: RosterOptions): Promise<void> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useSharedStrings: true, useStyles: true });
  const sheet = workbook.addWorksheet('Roster');
  sheet.columns = HEADERS.map((header) => ({ header, key: header, ...(header === 'Last review' ? { style: { numFmt: 'yyyy-mm-dd' } } : {}) }));
  for (const row of makeRows(options)) {
    sheet.addRow([row.id, row.name, row.email, row.orcid || null, row.level, row.areas, row.reviews, row.lastReview]).commit();
  }
  sheet.commit();
  await workbook.commit();
}

export const MAPPING_YAML = `client_id: { column: ID }
fields:
  name: { column: Full name }
  emails: { column: Email, split: ";", transforms: [trim, lower] }
  orcids: { column: ORCID, transforms: [orcid] }
custom_fields:
  Expertise level: { column: Level }
  Subject areas: { column: Areas, split: ";" }
  Reviews completed: { column: Reviews }
  Last review date: { column: Last review }
`;

export function pipelineYaml(rosterFile: string, policy: { maxRps?: number; concurrency?: number; burst?: number } = {}): string {
  return `name: bench
source: { file: ${rosterFile} }
mapping: mapping.yaml
target: { group: { name: Bench group, owner_team: Editorial Office } }
policy:
  mode: mirror
  max_rps: ${policy.maxRps ?? 50}
  burst: ${policy.burst ?? 5}
  concurrency: ${policy.concurrency ?? 4}
`;
}

/** Writes roster + mapping + pipeline into `dir` (created). */
export async function generateRoster(dir: string, options: RosterOptions): Promise<GeneratedRoster> {
  mkdirSync(dir, { recursive: true });
  const roster = join(dir, `roster.${options.format}`);
  if (options.format === 'csv') await writeCsv(roster, options);
  else await writeXlsx(roster, options);
  writeFileSync(join(dir, 'mapping.yaml'), MAPPING_YAML);
  writeFileSync(join(dir, 'pipeline.yaml'), pipelineYaml(`roster.${options.format}`));
  return { dir, roster, mapping: join(dir, 'mapping.yaml'), pipeline: join(dir, 'pipeline.yaml'), rows: options.rows };
}

/** The mapping of a corpus roster (writeCorpusCsv): the standard fields with the affiliation. */
export const CORPUS_MAPPING_YAML = MAPPING_YAML.replace('  orcids: { column: ORCID, transforms: [orcid] }\n', '  orcids: { column: ORCID, transforms: [orcid] }\n  affiliations: { column: Affiliation }\n');

/**
 * A roster whose people come from the labelled corpus (test/fixtures/duplicate-people/): names,
 * institutions and emails with published name frequencies, 2 % planted duplicates and 1 %
 * look-alikes; the custom fields' columns as makeRows gives them. Same seed, same file.
 */
export async function writeCorpusCsv(dir: string, rows: number, seed = 42): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const { generateCorpus } = await import('../test/fixtures/duplicate-people/corpus.js');
  const corpus = generateCorpus(rows, seed);
  const out = createWriteStream(join(dir, 'roster.csv'));
  let buffer = `${[...HEADERS, 'Affiliation'].join(',')}\n`;
  let i = 0;
  for (const row of makeRows({ rows, format: 'csv', seed })) {
    const person = corpus.rows[i++]!;
    buffer += `${person.clientId},${csvCell(person.name)},${csvCell(person.email)},${person.orcid},${row.level},${row.areas},${row.reviews},${row.lastReview.toISOString().slice(0, 10)},${csvCell(person.affiliation)}\n`;
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      buffer = '';
    }
  }
  out.write(buffer);
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  writeFileSync(join(dir, 'mapping.yaml'), CORPUS_MAPPING_YAML);
}

// `tsx bench/generate.ts csv 10000 bench/data/x` for a one-off file.
if (import.meta.url === `file://${process.argv[1]}`) {
  const [format, rows, dir] = process.argv.slice(2);
  const result = await generateRoster(dir ?? `bench/data/${format}-${rows}`, { format: format === 'xlsx' ? 'xlsx' : 'csv', rows: Number(rows ?? 1000) });
  console.log(result.roster);
}
