/**
 * Pure column matching for `rostersync init`: from a roster's headers, a sample of its cells and
 * the service's custom fields, proposes which column feeds which record field or custom field,
 * with the transforms, splits, date formats and `values:` maps the mapping language offers
 * (docs/mapping.md). Every proposal says whether it is sure or a guess, and why, so the CLI can
 * ask about the guesses and print them.
 */
import type { CustomField } from '../client/index.js';
import type { TransformName } from '../mapping/schema.js';

export type StandardTarget = 'name' | 'emails' | 'orcids' | 'affiliations';

/** Where a column goes. `skip_if` marks a status column whose value skips a row. */
export type Target =
  | { kind: 'client_id' }
  | { kind: 'field'; field: StandardTarget }
  | { kind: 'custom'; field: string }
  | { kind: 'skip_if'; equals: string };

export interface ColumnMatch {
  /** One column, or two for a name made of first and last name columns. */
  columns: string[];
  target: Target;
  sure: boolean;
  /** Why this match: the evidence a person would want before accepting it. */
  reason: string;
  transforms?: TransformName[];
  split?: string[];
  decimal?: ',';
  date_formats?: string[];
  values?: Record<string, string>;
  /**
   * Set when another column fits as well (two email-shaped columns, two distinct id columns) or
   * the header says the cells are someone else's: the match is then a question, never taken
   * silently. Says why; `alternatives` are the other columns that fit.
   */
  question?: string;
  alternatives?: string[];
}

export interface MatchResult {
  matches: ColumnMatch[];
  /** Columns left out of the mapping, with the reason. */
  unmapped: { column: string; reason: string }[];
  /** Things the person should check, beyond the guessed matches (labels with no option...). */
  doubts: string[];
}

/** Cells of one column as text, empty cells left out. */
export type ColumnSample = Record<string, string[]>;

const EMAIL = /^[^\s@,;]+@[^\s@,;]+\.[^\s@,;]+$/;
const ORCID = /^(https?:\/\/(www\.)?orcid\.org\/)?\d{4}[\s-]?\d{4}[\s-]?\d{4}[\s-]?\d{3}[\dXx]$/;
const LAST_FIRST = /^[^\d,]+,\s*[^\d,]+$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const NUMBER = /^-?\d+([.,]\d+)?$/;
/** Excel serial dates between 1960 and 2060. */
const SERIAL = /^\d{5}$/;
const TEXT_DATES: { re: RegExp; sep: string }[] = [
  { re: /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/, sep: '.' },
  { re: /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/, sep: '/' },
  { re: /^(\d{1,2})-(\d{1,2})-(\d{4})$/, sep: '-' },
];
const SEPARATORS = [';', ',', '/', '|'] as const;

/** Header words naming each record field; a header equal to one, once normalised, is sure. */
const FIELD_NAMES: Record<StandardTarget | 'client_id' | 'first' | 'last', string[]> = {
  client_id: ['id', 'no', 'number', 'personid', 'reviewerid', 'boardid', 'memberid', 'expertid', 'recordid', 'identifier', 'code'],
  name: ['name', 'fullname', 'reviewer', 'reviewername', 'person', 'expert', 'membername', 'displayname'],
  first: ['firstname', 'givenname', 'forename', 'first', 'given'],
  last: ['lastname', 'surname', 'familyname', 'last', 'family'],
  emails: ['email', 'emails', 'mail', 'emailaddress', 'emailaddresses', 'contact'],
  orcids: ['orcid', 'orcidid', 'orcids'],
  affiliations: ['affiliation', 'affiliations', 'institution', 'organisation', 'organization', 'university', 'employer', 'department', 'institute'],
};
/** Words people use for the same custom field (matched against the field's name). */
const SYNONYMS: string[][] = [
  ['notes', 'remarks', 'comments', 'comment', 'note', 'remark'],
  ['level', 'seniority', 'grade', 'rank'],
  ['areas', 'topics', 'subjects', 'expertise', 'keywords', 'fields'],
];
/** Header words saying a column is about someone else than the expert ("Assistant email"). */
const ELSEWHERE_WORDS = ['assistant', 'secretary', 'pa', 'cc', 'office', 'admin', 'deputy', 'alternate', 'backup', 'emergency', 'supervisor', 'manager', 'by', 'handling'];
const PHONE_WORDS = ['phone', 'telephone', 'tel', 'mobile', 'cell', 'fax', 'whatsapp'];
/** Cells of a flag column: a name or affiliation column holding these is no such column. */
const FLAG_VALUES = new Set(['yes', 'no', 'y', 'n', 'true', 'false', 'x', '✓', '✔', '-', 'ja', 'nein', 'oui', 'non', 'si', 'sí']);
const STATUS_HEADERS = ['active', 'status', 'state', 'enabled', 'current'];
const NEGATIVE_STATUS = ['no', 'inactive', 'false', 'n', 'retired', 'former', 'disabled', '0'];

export function normalise(header: string): string {
  return header.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]/g, '');
}

function words(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
}

function hasWord(header: string, list: string[]): boolean {
  return words(header).some((w) => list.includes(w));
}

/** Cells that read as people's names: letters, no digits, no address, no flag. */
function fitsNames(cells: string[]): boolean {
  return cells.length > 0 && share(cells, (v) => /\p{L}/u.test(v) && !/[\d@]/.test(v) && !FLAG_VALUES.has(v.trim().toLowerCase())) >= 0.8;
}

/** Cells that read as text (an affiliation): letters, no address, no flag. */
function fitsText(cells: string[]): boolean {
  return cells.length === 0 || share(cells, (v) => /\p{L}/u.test(v) && !EMAIL.test(v.trim()) && !FLAG_VALUES.has(v.trim().toLowerCase())) >= 0.8;
}

/** A cell an id column holds: one short token with a digit ("PC001", "17", "#4"). */
function isIdShaped(v: string): boolean {
  const t = v.trim();
  return t.length <= 40 && /^[#\p{L}\d][\p{L}\d._\-/#]*$/u.test(t) && /\d/.test(t);
}

/** Columns in order of rank, highest first; the roster's order breaks ties. */
function ranked(columns: string[], rank: (column: string) => number): string[] {
  return columns.map((column, i) => ({ column, i, r: rank(column) })).sort((a, b) => b.r - a.r || a.i - b.i).map((x) => x.column);
}

/** The question a match becomes when other columns fit as well. */
function question(others: string[], why: string): Pick<ColumnMatch, 'question' | 'alternatives'> {
  if (others.length === 0) return {};
  return { question: `${others.map((o) => `"${o}"`).join(', ')} ${others.length > 1 ? 'are' : 'is'} ${why}`, alternatives: others };
}

function share(values: string[], test: (v: string) => boolean): number {
  return values.length === 0 ? 0 : values.filter(test).length / values.length;
}

/** Separators that split a cell into several pieces each passing `piece`. */
function splitsInto(values: string[], piece: (v: string) => boolean): string[] {
  const used = new Set<string>();
  for (const value of values) {
    for (const sep of SEPARATORS) {
      const parts = value.split(sep).map((p) => p.trim()).filter(Boolean);
      if (parts.length > 1 && parts.every(piece)) used.add(sep);
    }
  }
  return SEPARATORS.filter((s) => used.has(s));
}

function isEmailCell(v: string): boolean {
  return EMAIL.test(v.trim()) || splitsInto([v], (p) => EMAIL.test(p)).length > 0;
}
function isOrcidCell(v: string): boolean {
  return ORCID.test(v.trim()) || splitsInto([v], (p) => ORCID.test(p)).length > 0;
}

/** The text date format of a column, when its text dates say which one (day > 12 decides). */
export function dateFormatsOf(values: string[]): { formats: string[]; ambiguous: boolean } | undefined {
  for (const { re, sep } of TEXT_DATES) {
    const hits = values.map((v) => re.exec(v.trim())).filter((m): m is RegExpExecArray => m !== null);
    if (hits.length === 0) continue;
    const dayFirst = hits.some((m) => Number(m[1]) > 12);
    const monthFirst = hits.some((m) => Number(m[2]) > 12);
    const format = monthFirst && !dayFirst ? `MM${sep}DD${sep}YYYY` : `DD${sep}MM${sep}YYYY`;
    return { formats: [format], ambiguous: dayFirst === monthFirst };
  }
  return undefined;
}

function isDateCell(v: string): boolean {
  const t = v.trim();
  return ISO_DATE.test(t) || SERIAL.test(t) || TEXT_DATES.some(({ re }) => re.test(t));
}

/**
 * A label's likely option: the same label ignoring case, else an option that starts with it or
 * of which it is an abbreviation (its letters in order, first letter the same: "Jr" → "Junior"), or
 * the one option holding every word of it. Several candidates give none: a guess must be unique.
 */
export function optionFor(label: string, options: string[]): string | undefined {
  const l = label.trim().toLowerCase();
  const exact = options.find((o) => o.toLowerCase() === l);
  if (exact) return exact;
  // "Board member" → "Editorial Board Member": every word of the label is a word of one option.
  const labelWords = words(l);
  const byWords = options.filter((o) => labelWords.length > 1 && labelWords.every((w) => words(o).includes(w)));
  if (byWords.length === 1) return byWords[0];
  const candidates = options.filter((o) => {
    const low = o.toLowerCase();
    if (low.startsWith(l) && l.length >= 2) return true;
    if (low[0] !== l[0]) return false;
    let i = 0;
    for (const ch of low) if (ch === l[i]) i++;
    return i === l.length;
  });
  return candidates.length === 1 ? candidates[0] : undefined;
}

/** How well a header names a custom field: 1 same name, 0.7 a containing or synonym name, 0 none. */
export function nameScore(header: string, fieldName: string): number {
  const h = normalise(header);
  const f = normalise(fieldName);
  if (h === f) return 1;
  const hw = words(header);
  const fw = words(fieldName);
  const acronym = fw.map((w) => w[0]).join('');
  if (h.length >= 2 && h === acronym) return 0.7;
  const syn = (w: string): string[] => SYNONYMS.find((s) => s.includes(w)) ?? [w];
  const hits = hw.filter((w) => fw.some((x) => syn(w).includes(x) || x === w || (w.length >= 4 && (x.startsWith(w) || w.startsWith(x)))));
  if (hw.length > 0 && hits.length === hw.length) return 0.7;
  return hits.length > 0 ? 0.4 : 0;
}

/** The roster's columns and what is taken of them, as the matchers below claim columns in turn. */
class ColumnPool {
  readonly matches: ColumnMatch[] = [];
  readonly doubts: string[] = [];
  readonly taken = new Set<string>();
  readonly takenFields = new Set<string>();

  constructor(
    readonly headers: string[],
    private readonly sample: ColumnSample,
  ) {}

  values(column: string): string[] {
    return this.sample[column] ?? [];
  }

  /** Columns not taken yet, in the roster's order. */
  free(keep: (column: string) => boolean = () => true): string[] {
    return this.headers.filter((h) => !this.taken.has(h) && keep(h));
  }

  take(m: ColumnMatch): void {
    this.matches.push(m);
    for (const c of m.columns) this.taken.add(c);
    this.takenFields.add(m.target.kind === 'field' ? m.target.field : m.target.kind === 'custom' ? `custom:${m.target.field}` : m.target.kind);
  }

  /** The header is a known name ("E-mail"). */
  exactly(kind: keyof typeof FIELD_NAMES): string | undefined {
    return this.free((h) => FIELD_NAMES[kind].includes(normalise(h)))[0];
  }

  /** The header is a known name, else one of its words is ("Home institution"). */
  named(kind: keyof typeof FIELD_NAMES): string | undefined {
    return this.exactly(kind) ?? this.free((h) => words(h).some((w) => FIELD_NAMES[kind].includes(w)))[0];
  }

  unique(column: string): boolean {
    const cells = this.values(column);
    return cells.length > 0 && new Set(cells).size === cells.length;
  }
}

/** Proposes a mapping for every column. Pure: the same input always gives the same answer. */
export function matchColumns(headers: string[], sample: ColumnSample, customFields: CustomField[]): MatchResult {
  const pool = new ColumnPool(headers, sample);
  // Emails and ORCID iDs first: their shape is unmistakable, but not whose they are, so a second
  // column of the same shape ("Assistant email") makes the choice a question.
  const emails = matchShaped(pool, 'emails', isEmailCell, EMAIL, 'email addresses');
  matchShaped(pool, 'orcids', isOrcidCell, ORCID, 'ORCID iDs (bare, spaced or URLs)');
  matchClientId(pool, emails);
  matchName(pool);
  matchAffiliation(pool);
  const misfits = matchCustomFields(pool, customFields);
  // Status columns: a row whose status is the negative one is skipped, as the samples' mappings do.
  for (const header of pool.free((h) => STATUS_HEADERS.includes(normalise(h)))) {
    const negative = [...new Set(pool.values(header))].find((v) => NEGATIVE_STATUS.includes(v.trim().toLowerCase()));
    if (negative !== undefined) {
      pool.take({ columns: [header], target: { kind: 'skip_if', equals: negative }, sure: false, reason: `a status column; rows whose value is "${negative}" are skipped` });
    }
  }
  const unmapped = pool.free().map((column) => ({ column, reason: unmappedReason(misfits.get(column)) }));
  return { matches: pool.matches, unmapped, doubts: pool.doubts };
}

/** The column of a shape (emails, ORCID iDs), else one named like it; returns whether one was taken. */
function matchShaped(pool: ColumnPool, field: 'emails' | 'orcids', cellTest: (v: string) => boolean, piece: RegExp, what: string): boolean {
  const shaped = pool.free((h) => pool.values(h).length > 0 && share(pool.values(h), cellTest) >= 0.8);
  const rank = (h: string): number => (hasWord(h, ELSEWHERE_WORDS) ? 0 : FIELD_NAMES[field].includes(normalise(h)) ? 3 : words(h).some((w) => FIELD_NAMES[field].includes(w)) ? 2 : 1);
  const [best, ...others] = ranked(shaped, rank);
  if (best === undefined) {
    const header = pool.named(field);
    if (header === undefined) return false;
    const few = field === 'emails' ? 'the header names emails, but few cells are addresses' : 'the header names ORCID iDs, but few cells are';
    pool.take({ columns: [header], target: { kind: 'field', field }, sure: false, reason: few, transforms: field === 'emails' ? ['trim', 'lower', 'email'] : ['orcid'] });
    return true;
  }
  const split = splitsInto(pool.values(best), (p) => piece.test(p));
  const match: ColumnMatch = {
    columns: [best],
    target: { kind: 'field', field },
    sure: rank(best) === 3 && others.length === 0,
    reason: `${pct(pool.values(best), cellTest)} of cells are ${what}${split.length ? `, some several in a cell (split on ${split.join(' ')})` : ''}`,
    transforms: field === 'emails' ? (split.length ? ['trim', 'lower', 'email', 'dedupe'] : ['trim', 'lower', 'email']) : split.length ? ['orcid', 'dedupe'] : ['orcid'],
    ...(split.length ? { split } : {}),
    ...question(others, `also a column of ${what}`),
  };
  if (rank(best) === 0) {
    match.question = `its header says the ${what} are someone else's, not the expert's`;
    match.alternatives = others;
  }
  pool.take(match);
  return true;
}

/**
 * client_id: a column named like an id whose cells are all present and distinct. Two such
 * columns ("Staff ID" and "Phone number") make it a question; a phone number is never sure.
 */
function matchClientId(pool: ColumnPool, hasEmails: boolean): void {
  const idRank = (h: string): number => {
    if (hasWord(h, ELSEWHERE_WORDS) || hasWord(h, PHONE_WORDS)) return 0;
    if (FIELD_NAMES.client_id.includes(normalise(h))) return 3;
    if (/(^|[^a-z])id$/i.test(h.trim()) || words(h).includes('id')) return 2;
    return 1;
  };
  const idLike = (h: string): boolean => FIELD_NAMES.client_id.includes(normalise(h)) || /(^|[^a-z])id$/i.test(h.trim()) || words(h).some((w) => FIELD_NAMES.client_id.includes(w));
  const namesAField = (h: string): boolean =>
    (['name', 'first', 'last', 'emails', 'orcids', 'affiliations'] as const).some((kind) => FIELD_NAMES[kind].includes(normalise(h)) || words(h).some((w) => FIELD_NAMES[kind].includes(w)));
  const [best, ...others] = ranked(pool.free((h) => idLike(h) && pool.unique(h)), idRank);
  const repeatingId = pool.free((h) => idLike(h) && !pool.unique(h) && idRank(h) >= 2)[0];
  // Without an id column, the first column of distinct id-shaped cells ("#") is the best guess.
  const firstUnique = pool.free((h) => !namesAField(h) && pool.unique(h) && share(pool.values(h), isIdShaped) === 1)[0];
  if (best !== undefined) {
    const id: ColumnMatch = { columns: [best], target: { kind: 'client_id' }, sure: others.length === 0 && idRank(best) === 3, reason: 'named like an id, every sampled cell distinct', ...question(others, 'also named like an id with distinct cells') };
    if (idRank(best) === 0) {
      id.question = "its header names a phone number or someone else's, not the expert's id";
      id.alternatives = others;
    }
    pool.take(id);
  } else if (repeatingId) {
    pool.take({ columns: [repeatingId], target: { kind: 'client_id' }, sure: false, reason: 'named like an id, but some sampled cells repeat' });
  } else if (firstUnique && !hasEmails) {
    pool.take({ columns: [firstUnique], target: { kind: 'client_id' }, sure: false, reason: 'no column is named like an id; the first one whose sampled cells are all distinct' });
  } else {
    pool.doubts.push(
      hasEmails
        ? "No column looks like a stable id: client_id uses the emails column (people change address); set client_id.column to the roster's own id if it has one."
        : 'No column looks like a stable id and there is no email column: set client_id.column in the mapping before validating.',
    );
  }
}

/**
 * Name: one column whose cells read as names, or first and last name columns joined (only by
 * their exact names: "Last review" is no surname). A column headed like a name whose cells are
 * flags ("Reviewer (Yes/No)") is no name.
 */
function matchName(pool: ColumnPool): void {
  const first = pool.exactly('first');
  const last = pool.exactly('last');
  const nameRank = (h: string): number => (hasWord(h, ELSEWHERE_WORDS) ? 0 : FIELD_NAMES.name.includes(normalise(h)) ? 2 : 1);
  const candidates = ranked(
    pool.free((h) => h !== first && h !== last && (FIELD_NAMES.name.includes(normalise(h)) || words(h).some((w) => FIELD_NAMES.name.includes(w))) && fitsNames(pool.values(h))),
    nameRank,
  );
  const pair = first && last && fitsNames(pool.values(first)) && fitsNames(pool.values(last)) ? `${first} + ${last}` : undefined;
  const [best, ...others] = [...candidates.filter((h) => nameRank(h) === 2), ...(pair ? [pair] : []), ...candidates.filter((h) => nameRank(h) < 2)];
  if (best === undefined) return;
  const columns = best === pair ? [first!, last!] : [best];
  const lastFirst = columns.length === 1 && share(pool.values(best), (v) => LAST_FIRST.test(v.trim())) >= 0.5;
  pool.take({
    columns,
    target: { kind: 'field', field: 'name' },
    sure: (best === pair || nameRank(best) === 2) && others.length === 0,
    reason: best === pair ? 'first and last name columns, joined' : lastFirst ? 'named like a name; most cells are "Last, First"' : 'named like a name; the cells read as names',
    transforms: lastFirst ? ['last_first', 'collapse_whitespace'] : ['collapse_whitespace'],
    ...question(others, 'also named like a name, with cells that read as names'),
  });
}

function matchAffiliation(pool: ColumnPool): void {
  const rank = (h: string): number => (hasWord(h, ELSEWHERE_WORDS) ? 0 : FIELD_NAMES.affiliations.includes(normalise(h)) ? 2 : 1);
  const [best, ...others] = ranked(pool.free((h) => (FIELD_NAMES.affiliations.includes(normalise(h)) || words(h).some((w) => FIELD_NAMES.affiliations.includes(w))) && fitsText(pool.values(h))), rank);
  if (best === undefined) return;
  const exact = rank(best) === 2;
  pool.take({ columns: [best], target: { kind: 'field', field: 'affiliations' }, sure: exact && others.length === 0, reason: exact ? 'named like an affiliation' : 'a word of its name names an affiliation', transforms: ['collapse_whitespace'], ...question(others, 'also named like an affiliation') });
}

/**
 * Custom fields: the best-named column for each field, checked against the field's kind. Returns
 * the columns headed with a field's own name whose cells are none of its options.
 */
function matchCustomFields(pool: ColumnPool, customFields: CustomField[]): Map<string, CustomField> {
  const candidates: { header: string; field: CustomField; score: number; name: number; fit: number }[] = [];
  const misfits = new Map<string, CustomField>();
  for (const field of customFields) {
    for (const header of pool.free((h) => !hasWord(h, ELSEWHERE_WORDS))) {
      const name = nameScore(header, field.name);
      const fit = kindFit(field, pool.values(header));
      // Option labels that are almost never the field's options say the column is something else.
      const isOption = field.data_kind === 'single_option' || field.data_kind === 'multi_option';
      // Numbers and dates must fit: "Reviewer" (Yes/No) is no "Last review date".
      if ((field.data_kind === 'number' || field.data_kind === 'date') && fit < 0.5) continue;
      if (isOption && fit < 0.3) {
        if (name === 1 && pool.values(header).length > 0) misfits.set(header, field);
        continue;
      }
      const score = name + fit * 0.3;
      if (score >= 0.6) candidates.push({ header, field, score, name, fit });
    }
  }
  candidates.sort((a, b) => b.score - a.score);
  for (const { header, field, name, fit } of candidates) {
    if (pool.taken.has(header) || pool.takenFields.has(`custom:${field.name}`)) continue;
    // Another column as well named whose cells fit as well makes it a question.
    const rivals = candidates.filter((o) => o.field === field && o.header !== header && !pool.taken.has(o.header) && o.name >= 0.7 && o.fit >= 0.5).map((o) => o.header);
    // Sure only when the header is the field's own name and the cells fit its kind.
    const match = customMatch(header, field, pool.values(header), name === 1 && fit >= 0.5 && rivals.length === 0, pool.doubts);
    pool.take({ ...match, ...question(rivals, `also named like "${field.name}", with cells that fit it`) });
  }
  return misfits;
}

function unmappedReason(misfit: CustomField | undefined): string {
  if (misfit === undefined) return 'no record field or custom field matches its name or its values';
  const options = (misfit.options ?? []).map((o) => o.option);
  return `named like custom field "${misfit.name}", but its values match none of its options (${options.join(', ')}); map it by hand with values: if they mean those options`;
}

/** 0..1: how well a column's cells fit a custom field's data_kind. */
function kindFit(field: CustomField, cells: string[]): number {
  if (cells.length === 0) return 0;
  switch (field.data_kind) {
    case 'number':
      return share(cells, (v) => NUMBER.test(v.trim()));
    case 'date':
      return share(cells, isDateCell);
    case 'single_option':
    case 'multi_option': {
      const options = (field.options ?? []).map((o) => o.option);
      const pieces = field.data_kind === 'multi_option' ? cells.flatMap((c) => c.split(/[;,/|]/).map((p) => p.trim()).filter(Boolean)) : cells;
      return share(pieces, (p) => optionFor(p, options) !== undefined);
    }
    default:
      return 0.5;
  }
}

function customMatch(header: string, field: CustomField, cells: string[], sure: boolean, doubts: string[]): ColumnMatch {
  const match: ColumnMatch = {
    columns: [header],
    target: { kind: 'custom', field: field.name },
    sure,
    reason: `${normalise(header) === normalise(field.name) ? 'same name' : `name close to "${field.name}"`}, cells fit a ${field.data_kind} field`,
  };
  if (field.data_kind === 'number' && cells.some((v) => /^-?\d+,\d+$/.test(v.trim()))) match.decimal = ',';
  if (field.data_kind === 'date') {
    const text = dateFormatsOf(cells);
    if (text) {
      match.date_formats = text.formats;
      if (text.ambiguous) {
        match.sure = false;
        doubts.push(`Column "${header}": no day above 12 in the sample, so ${text.formats[0]} is a guess; check the order of day and month.`);
      }
    }
  }
  if (field.data_kind === 'single_option' || field.data_kind === 'multi_option') {
    const options = (field.options ?? []).map((o) => o.option);
    let labels = [...new Set(cells.map((c) => c.trim()))];
    if (field.data_kind === 'multi_option') {
      const split = splitsInto(cells, (p) => optionFor(p, options) !== undefined);
      if (split.length) match.split = split;
      labels = [...new Set(cells.flatMap((c) => (split.length ? c.split(new RegExp(`[${split.map((s) => `\\${s}`).join('')}]`)) : [c]).map((p) => p.trim()).filter(Boolean)))];
    }
    const values: Record<string, string> = {};
    const unknown: string[] = [];
    for (const label of labels) {
      const option = optionFor(label, options);
      if (option === undefined) unknown.push(label);
      else if (option.toLowerCase() !== label.toLowerCase()) values[label] = option;
    }
    if (Object.keys(values).length) {
      match.values = values;
      match.sure = false;
      match.reason += `; labels mapped by abbreviation (${Object.entries(values).map(([k, v]) => `${k} → ${v}`).join(', ')})`;
    }
    if (unknown.length) {
      doubts.push(`Column "${header}": ${unknown.map((u) => `"${u}"`).join(', ')} match no option of "${field.name}" (${options.join(', ')}); add them to values: or those rows are rejected.`);
    }
  }
  return match;
}

function pct(cells: string[], test: (v: string) => boolean): string {
  return `${Math.round(share(cells, test) * 100)} %`;
}
