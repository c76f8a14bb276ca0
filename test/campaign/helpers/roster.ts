/**
 * Seeded rosters for the campaign and, independently of src/mapping, what each row must become
 * in the service (docs/service-contract.md, call 2 write shape: standard fields by name, custom fields by api_id,
 * option labels resolved to option api_ids, empty cells absent).
 */
import { seededRandom } from '../../../src/runtime/seeded-random.js';

/** api_ids of the default fixture's author_from_group custom fields and options. */
export const FIELD = {
  level: '0b6f7a3e-1c2d-4e5f-8a9b-0c1d2e3f4a51',
  areas: '1c7e8b4f-2d3e-4f60-9bac-1d2e3f4a5b62',
  reviews: '2d8f9c5a-3e4f-4071-8cbd-2e3f4a5b6c73',
} as const;
const LEVELS: Record<string, string> = {
  Junior: '5a1e0f6c-0001-4a00-8000-000000000001',
  Senior: '5a1e0f6c-0001-4a00-8000-000000000002',
  Expert: '5a1e0f6c-0001-4a00-8000-000000000003',
};
const AREAS: Record<string, string> = {
  Oncology: '6b2f1a7d-0002-4b00-8000-000000000001',
  Cardiology: '6b2f1a7d-0002-4b00-8000-000000000002',
  Neurology: '6b2f1a7d-0002-4b00-8000-000000000003',
  Immunology: '6b2f1a7d-0002-4b00-8000-000000000004',
  Genetics: '6b2f1a7d-0002-4b00-8000-000000000005',
  Epidemiology: '6b2f1a7d-0002-4b00-8000-000000000006',
  'Machine Learning': '6b2f1a7d-0002-4b00-8000-000000000007',
  Statistics: '6b2f1a7d-0002-4b00-8000-000000000008',
};
const FIRST = ['Ann', 'Bo', 'Chidi', 'Dana', 'Élodie', 'Femi', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Kwame', 'Lena', "Ma'ayan", 'Nils', 'Olga'];
const LAST = ['Smith', 'Okafor', 'Müller', 'García', 'Nakamura', 'de la Cruz', 'Kowalski', "O'Brien", 'Svensson', 'Ng', 'Rossi, Jr.'];

/** One expert as the roster means it; empty lists and nulls are empty cells. */
export interface Person {
  id: string;
  name: string;
  emails: string[];
  orcid: string | null;
  level: string | null;
  areas: string[];
  reviews: number | null;
}

export type Rng = () => number;
export const rngFor = (seed: number): Rng => seededRandom(seed * 7919 + 17);
export const pick = <T>(rng: Rng, list: readonly T[]): T => list[Math.floor(rng() * list.length)]!;
export const intBetween = (rng: Rng, min: number, max: number): number => min + Math.floor(rng() * (max - min + 1));

/** ISO 7064 11,2 check digit, as ORCID defines it. */
function orcidCheck(digits: string): string {
  let total = 0;
  for (const d of digits) total = (total + Number(d)) * 2;
  const result = (12 - (total % 11)) % 11;
  return result === 10 ? 'X' : String(result);
}

function randomOrcid(rng: Rng): string {
  // Inside the first block ORCID issues (the transform refuses others), from the same twelve draws.
  const digits = String(15_000_000 + (Number(Array.from({ length: 12 }, () => String(Math.floor(rng() * 10))).join('')) % 20_000_000)).padStart(15, '0');
  const full = digits + orcidCheck(digits);
  return full.match(/.{4}/g)!.join('-');
}

export function randomPerson(rng: Rng, n: number): Person {
  const name = `${pick(rng, FIRST)} ${pick(rng, LAST)} ${n}`;
  const emailCount = rng() < 0.1 ? 0 : rng() < 0.8 ? 1 : 2;
  const emails = Array.from({ length: emailCount }, (_, i) => `expert${n}.${i}.${Math.floor(rng() * 1000)}@example.org`);
  const areaNames = Object.keys(AREAS).filter(() => rng() < 0.25);
  return {
    id: `X${String(n).padStart(5, '0')}`,
    name,
    emails,
    orcid: rng() < 0.6 ? randomOrcid(rng) : null,
    level: rng() < 0.85 ? pick(rng, Object.keys(LEVELS)) : null,
    areas: areaNames,
    reviews: rng() < 0.8 ? intBetween(rng, 0, 40) : null,
  };
}

/** A change a person could plausibly get between two roster exports (always a real change). */
export function changePerson(rng: Rng, p: Person): Person {
  const next = { ...p, emails: [...p.emails], areas: [...p.areas] };
  switch (intBetween(rng, 0, 5)) {
    case 0:
      next.name = `${p.name} (changed)`;
      break;
    case 1:
      next.emails = p.emails.length ? [] : [`new.${p.id.toLowerCase()}@example.org`];
      break;
    case 2:
      next.orcid = p.orcid ? null : randomOrcid(rng);
      break;
    case 3:
      next.level = p.level === 'Expert' ? null : p.level === 'Senior' ? 'Expert' : 'Senior';
      break;
    case 4:
      next.areas = p.areas.length ? [] : ['Statistics', 'Genetics'];
      break;
    default:
      next.reviews = (p.reviews ?? 0) + 1;
  }
  return next;
}

function csvCell(text: string): string {
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The roster file, written the way people type it: mixed-case emails, spaces around `;`. */
export function rosterCsv(people: readonly Person[]): string {
  const lines = ['ID,Full name,Email,ORCID,Level,Areas,Reviews'];
  for (const p of people) {
    const emails = p.emails.map((e, i) => (i % 2 === 0 ? e.toUpperCase() : ` ${e} `)).join(';');
    const orcid = p.orcid === null ? '' : p.id.endsWith('3') ? `https://orcid.org/${p.orcid}` : p.orcid;
    lines.push([p.id, p.name, emails, orcid, p.level ?? '', p.areas.join('; '), p.reviews === null ? '' : String(p.reviews)].map(csvCell).join(','));
  }
  return `${lines.join('\n')}\n`;
}

/** Managed fields as the state inventory must record them: every managed key, null when empty. */
export function expectedManaged(p: Person): Record<string, unknown> {
  return {
    name: p.name,
    emails: p.emails.length ? p.emails.map((e) => e.toLowerCase()) : null,
    orcids: p.orcid ? [p.orcid] : null,
    [FIELD.level]: p.level ? LEVELS[p.level]! : null,
    // Multi-option values are sets: the mapping emits their option ids sorted.
    [FIELD.areas]: p.areas.length ? p.areas.map((a) => AREAS[a]!).sort() : null,
    [FIELD.reviews]: p.reviews,
  };
}

/** The record as `/_emulator/state` must show it: the five standard fields, custom fields only when set. */
export function expectedRemote(p: Person): Record<string, unknown> {
  const managed = expectedManaged(p);
  const record: Record<string, unknown> = { name: managed.name, emails: managed.emails, orcids: managed.orcids, articles: null, affiliations: null };
  for (const key of Object.values(FIELD)) if (managed[key] !== null) record[key] = managed[key];
  return record;
}
