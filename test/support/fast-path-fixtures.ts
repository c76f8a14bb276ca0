/**
 * Random scenarios for the fast-path property test (test/plan/fast-path.property.test.ts): a
 * custom-fields universe the emulator is seeded with, the listing it serves (a view of that
 * universe that mutations relabel, extend or shrink), a mapping file and a CSV roster, plus the
 * mutations a nightly roster, mapping or listing goes through.
 *
 * Every choice comes from one seeded PRNG, so a seed replays a scenario exactly. Values are drawn
 * to hit the mapping's corners: rejected rows (bad email, ORCID, option, number, date, missing
 * name or id), duplicated client_ids, padded and mixed-case cells, empty cells, skipped rows.
 */
import { stringify } from 'yaml';
import type { CustomField } from '../../src/client/schemas.js';

export type Rng = () => number;

export const KINDS = ['single_option', 'multi_option', 'number', 'date', 'str'] as const;
export type Kind = (typeof KINDS)[number];

export interface UniverseField extends CustomField {
  data_kind: Kind;
  /** The column of the roster that holds this field's cells. */
  column: string;
}

/** Columns every roster has, besides one per custom field of the universe. */
const BASE_COLUMNS = ['ID', 'Name', 'First', 'Last', 'Email', 'ORCID', 'Affiliation', 'Active', 'Comment'] as const;
const FIRST = ['Marie', 'Ada', 'Alan', 'Grace', 'Rosalind', 'Emmy', 'Niels', 'Lise', 'Chien-Shiung', 'Dorothy'];
const LAST = ['Curie', 'Lovelace', 'Turing', 'Hopper', 'Franklin', 'Noether', 'Bohr', 'Meitner', 'Wu', 'Hodgkin'];
const LABELS = ['Junior', 'Senior', 'Expert', 'Oncology', 'Genetics', 'Statistics', 'Cardiology', 'Available', 'Busy', 'On leave', 'Yes', 'No'];
/** Legacy labels a mapping's `values:` may translate (cells use them too). */
const LEGACY = ['Sr', 'Jr', 'X1', 'Onc'];
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'quoted "word"', 'comma, inside', 'ünïcödé', ''];
const DATE_FORMATS = ['DD/MM/YYYY', 'MM/DD/YYYY', 'YYYY/MM/DD', 'DD.MM.YYYY'] as const;
const NAME_TRANSFORMS = ['trim', 'collapse_whitespace', 'upper', 'lower', 'last_first'] as const;
const EMAIL_TRANSFORMS = ['trim', 'lower', 'email', 'dedupe'] as const;

export function picker(rng: Rng) {
  const int = (n: number): number => Math.floor(rng() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const chance = (p: number): boolean => rng() < p;
  const subset = <T>(items: readonly T[], p: number): T[] => items.filter(() => chance(p));
  const shuffle = <T>(items: readonly T[]): T[] => {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
  return { int, pick, chance, subset, shuffle };
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0').slice(-width);
}

/** An api_id shaped like the service's (a UUID), distinct per (field, option). */
function apiId(seed: number, field: number, option: number): string {
  return `${hex(seed, 8)}-${hex(field, 4)}-4${hex(option, 3)}-8000-${hex(seed * 31 + field * 7 + option, 12)}`;
}

/** The universe of custom fields: the emulator knows all of them (and validates writes by api_id). */
export function makeUniverse(rng: Rng, seed: number): UniverseField[] {
  const { pick, int, shuffle } = picker(rng);
  // Every kind once, then two more at random.
  const kinds: Kind[] = [...KINDS, pick(KINDS), pick(KINDS)];
  return kinds.map((kind, index) => {
    const field: UniverseField = {
      api_id: apiId(seed, index + 1, 0),
      data_kind: kind,
      name: `Field ${String.fromCharCode(65 + index)}`,
      description: pick([null, `about field ${index}`]),
      column: `F${index + 1}`,
    };
    if (kind === 'single_option' || kind === 'multi_option') {
      field.options = shuffle(LABELS)
        .slice(0, 3 + int(3))
        .map((option, i) => ({ api_id: apiId(seed, index + 1, i + 1), option }));
    }
    return field;
  });
}

/** The listing as the service answers it (the emulator's own shape), from fields of the universe. */
export function listingOf(fields: readonly UniverseField[]): { author_from_group: CustomField[]; folder: CustomField[]; proposal: CustomField[] } {
  return {
    author_from_group: fields.map(({ column: _column, ...field }) => ({
      ...field,
      description: field.description ?? null,
      ...(field.options ? { options: field.options.map((o) => ({ ...o })) } : {}),
    })),
    folder: [],
    proposal: [],
  };
}

// --- mapping -------------------------------------------------------------------------------------

export interface MappingDoc {
  client_id: Record<string, unknown>;
  fields: Record<string, Record<string, unknown>>;
  custom_fields: Record<string, Record<string, unknown>>;
  skip_rows?: Record<string, unknown>[];
  duplicate_client_ids: 'reject' | 'first' | 'last';
}

function customSpec(rng: Rng, field: UniverseField): Record<string, unknown> {
  const { chance, pick, subset } = picker(rng);
  const spec: Record<string, unknown> = { column: field.column };
  if (chance(0.3)) spec.transforms = subset(['trim', 'collapse_whitespace', 'upper', 'lower'], 0.4);
  if (chance(0.05)) spec.required = true;
  switch (field.data_kind) {
    case 'number':
      if (chance(0.4)) spec.decimal = pick(['.', ',']);
      if (chance(0.2)) spec.default = 0;
      break;
    case 'date':
      if (chance(0.6)) spec.date_formats = [pick(DATE_FORMATS)];
      break;
    case 'single_option':
    case 'multi_option':
      if (field.data_kind === 'multi_option' && chance(0.4)) spec.split = pick([';', [';', ',']]);
      if (chance(0.5)) spec.values = { [pick(LEGACY)]: pick(field.options!).option };
      if (field.data_kind === 'single_option' && chance(0.15)) spec.default = pick(field.options!).option;
      break;
    case 'str':
      if (chance(0.2)) spec.default = 'n/a';
      break;
  }
  return spec;
}

function nameSpec(rng: Rng): Record<string, unknown> {
  const { chance, subset, pick } = picker(rng);
  const spec: Record<string, unknown> = chance(0.7) ? { column: 'Name' } : { columns: ['First', 'Last'], ...(chance(0.5) ? { join: pick([' ', ' · ']) } : {}) };
  const transforms = subset(NAME_TRANSFORMS, 0.35);
  if (transforms.length) spec.transforms = transforms;
  return spec;
}

export function makeMapping(rng: Rng, listed: readonly UniverseField[]): MappingDoc {
  const { chance, pick, subset } = picker(rng);
  const fields: MappingDoc['fields'] = { name: nameSpec(rng) };
  if (chance(0.85)) fields.emails = { column: 'Email', split: pick([';', [';', ',']]), transforms: subset(EMAIL_TRANSFORMS, 0.5) };
  if (chance(0.6)) fields.orcids = { column: 'ORCID', transforms: chance(0.8) ? ['orcid'] : ['trim'] };
  if (chance(0.4)) fields.affiliations = { column: 'Affiliation', split: ';', transforms: subset(['trim', 'dedupe'], 0.5) };
  const custom: MappingDoc['custom_fields'] = {};
  for (const field of listed) if (chance(0.65)) custom[chance(0.2) ? field.name.toLowerCase() : field.name] = customSpec(rng, field);
  const idRoll = rng();
  const client_id: Record<string, unknown> =
    idRoll < 0.7
      ? { column: 'ID' }
      : idRoll < 0.85 && fields.emails
        ? { from: 'email' }
        : { columns: ['ID', 'Last'], join: '-' };
  if (chance(0.3)) client_id.transforms = pick([[], ['trim'], ['trim', 'upper'], ['collapse_whitespace', 'lower']]);
  if (chance(0.3)) client_id.prefix = pick(['rev-', 'x.']);
  const doc: MappingDoc = { client_id, fields, custom_fields: custom, duplicate_client_ids: pick(['reject', 'first', 'last'] as const) };
  if (chance(0.3)) doc.skip_rows = [pick([{ column: 'Active', equals: 'No' }, { column: 'Active', empty: true }, { column: 'Comment', in: ['skip', 'ignore'] }])];
  return doc;
}

export function mappingYaml(doc: MappingDoc, comment = ''): string {
  return `${comment ? `# ${comment}\n` : ''}version: 1\n${stringify(doc)}`;
}

// --- roster -------------------------------------------------------------------------------------

export type Row = Record<string, string>;

/** ISO 7064 11,2 check character of the first 15 digits (written here again, not imported). */
function orcidCheck(digits: string): string {
  let total = 0;
  for (const d of digits) total = (total + Number(d)) * 2;
  const result = (12 - (total % 11)) % 11;
  return result === 10 ? 'X' : String(result);
}

function orcid(rng: Rng, valid: boolean): string {
  const { int, pick } = picker(rng);
  // Inside the first block ORCID issues (the transform refuses others), from the same eight draws.
  const digits = String(15_000_000 + (Number(Array.from({ length: 8 }, () => int(10)).join('')) % 20_000_000)).padStart(15, '0');
  const check = orcidCheck(digits);
  const last = valid ? check : check === '0' ? '1' : '0';
  const plain = `${digits.slice(0, 4)}-${digits.slice(4, 8)}-${digits.slice(8, 12)}-${digits.slice(12)}${last}`;
  return pick([plain, `https://orcid.org/${plain}`, plain.replace(/-/g, '')]);
}

function optionCell(rng: Rng, field: UniverseField, bad: boolean): string {
  const { pick, chance, int } = picker(rng);
  const label = (): string => {
    // A legacy label is valid only where the mapping translates it, an unknown one never.
    const text = bad ? pick([...LEGACY, 'Nope']) : pick(field.options!).option;
    return chance(0.15) ? ` ${text.toUpperCase()} ` : text;
  };
  if (field.data_kind === 'single_option') return label();
  const labels = Array.from({ length: 1 + int(3) }, label);
  return bad && chance(0.5) ? labels.join('|') : labels.join(pick(['; ', ';']));
}

/** A cell of a custom field's column; `bad` draws one the mapping may well reject. */
function cellFor(rng: Rng, field: UniverseField, bad: boolean): string {
  const { pick, chance, int } = picker(rng);
  if (chance(0.08)) return '';
  switch (field.data_kind) {
    case 'single_option':
    case 'multi_option':
      return optionCell(rng, field, bad);
    case 'number':
      return bad ? pick(['3,5', '1,234.5', '1.234,5', 'abc', `${int(9)}.5`]) : pick([String(int(50)), ' 7 ', '-2', String(int(5))]);
    case 'date':
      return bad ? pick(['05/04/2023', '2023/02/28', '28.02.2023', '2023-02-30', 'soon']) : pick(['2023-04-05', `2024-0${1 + int(9)}-1${int(10)}`, '2020-02-29']);
    case 'str':
      return pick(WORDS);
  }
}

/** A person's row; about one row in four has one cell the mapping may reject. */
export function makeRow(rng: Rng, universe: readonly UniverseField[], person: number): Row {
  const { pick, chance } = picker(rng);
  const first = FIRST[person % FIRST.length]!;
  const last = LAST[(person * 7) % LAST.length]!;
  const badColumn = chance(0.25) ? pick(['ID', 'Name', 'Email', 'ORCID', ...universe.map((f) => f.column)]) : undefined;
  const row: Row = {
    ID: badColumn === 'ID' ? '' : pick([`p${person}`, `p${person}`, `p${person}`, ` p${person} `, `P${person}`]),
    Name: badColumn === 'Name' ? pick(['', '   ']) : pick([`${first} ${last}`, `${last}, ${first}`, `  ${first}   ${last} `]),
    First: first,
    Last: last,
    Email:
      badColumn === 'Email'
        ? pick(['not-an-email', `${first.toLowerCase()}@example.org, ${first.toUpperCase()}@example.org`])
        : pick([`${first}.${last}@example.org`.toLowerCase(), `${first}.${last}@Example.org`, `${first.toLowerCase()}@example.org; ${last.toLowerCase()}@example.net`, '']),
    ORCID: badColumn === 'ORCID' ? orcid(rng, false) : chance(0.4) ? '' : orcid(rng, true),
    Affiliation: pick(['', 'Univ A', 'Univ A; Univ B', 'Univ B;univ b', ' Lab C ']),
    Active: pick(['Yes', 'Yes', 'Yes', 'Yes', 'No', '']),
    Comment: pick(['', '', 'note', 'skip', 'call back']),
  };
  for (const field of universe) row[field.column] = cellFor(rng, field, badColumn === field.column);
  return row;
}

export function columnsOf(universe: readonly UniverseField[]): string[] {
  return [...BASE_COLUMNS, ...universe.map((f) => f.column)];
}

function csvCell(text: string): string {
  return /[",\n\r]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function rosterCsv(columns: readonly string[], rows: readonly Row[]): string {
  return [columns.join(','), ...rows.map((row) => columns.map((c) => csvCell(row[c] ?? '')).join(','))].join('\n') + '\n';
}

// --- mutations ----------------------------------------------------------------------------------

export interface World {
  universe: UniverseField[];
  /** The fields the service lists now (relabelled copies of universe fields). */
  listed: UniverseField[];
  mapping: MappingDoc;
  mappingComment: string;
  rows: Row[];
  /** People of the roster are p1..pN, N below this. */
  people: number;
}

export const ROSTER_MUTATIONS = ['edit-mapped', 'edit-cell', 'edit-unused', 'pad-cell', 'add-rows', 'remove-rows', 'reorder', 'duplicate-row', 'reuse-id'] as const;
export const MAPPING_MUTATIONS = ['name-transform', 'policy', 'skip-rows', 'add-custom', 'remove-custom', 'email-split', 'client-id', 'comment-only'] as const;
export const LISTING_MUTATIONS = ['relabel-option', 'add-field', 'remove-unmapped', 'describe', 'reorder-fields', 'toggle-option'] as const;
export type Mutation = (typeof ROSTER_MUTATIONS)[number] | (typeof MAPPING_MUTATIONS)[number] | (typeof LISTING_MUTATIONS)[number];

function mappedNames(world: World): Set<string> {
  return new Set(Object.keys(world.mapping.custom_fields).map((n) => n.toLowerCase()));
}

/** The roster columns the mapping reads. */
export function mappedColumns(world: World): string[] {
  const columns = new Set<string>();
  const reads = (spec: Record<string, unknown>): void => {
    if (typeof spec.column === 'string') columns.add(spec.column);
    for (const c of (spec.columns as string[] | undefined) ?? []) columns.add(c);
  };
  reads(world.mapping.client_id);
  for (const spec of Object.values(world.mapping.fields)) reads(spec);
  for (const spec of Object.values(world.mapping.custom_fields)) reads(spec);
  for (const filter of world.mapping.skip_rows ?? []) reads(filter);
  return [...columns];
}

/** Option labels a mapping's `values:` points at: renaming one would break the mapping, not the plan. */
function valuesTargets(world: World): Set<string> {
  const targets = new Set<string>();
  for (const spec of Object.values(world.mapping.custom_fields)) {
    for (const target of Object.values((spec.values as Record<string, string> | undefined) ?? {})) targets.add(target.toLowerCase());
    if (typeof spec.default === 'string') targets.add(spec.default.toLowerCase());
  }
  return targets;
}

/** Applies one mutation in place; returns its name (and detail) for the failure log. */
export function mutate(rng: Rng, world: World, kind: Mutation): string {
  const { int, pick, chance, shuffle } = picker(rng);
  const rowIndex = (): number => int(world.rows.length);
  switch (kind) {
    case 'edit-cell': {
      if (!world.rows.length) return `${kind}: no rows`;
      const i = rowIndex();
      const fresh = makeRow(rng, world.universe, int(world.people) + 1);
      const column = pick(Object.keys(fresh));
      world.rows[i] = { ...world.rows[i]!, [column]: fresh[column]! };
      return `${kind} row ${i} ${column}`;
    }
    case 'edit-mapped': {
      // A cell the mapping reads, in a row that may well be known: the key must change with it.
      const columns = mappedColumns(world);
      if (!world.rows.length || !columns.length) return `${kind}: nothing mapped`;
      const i = rowIndex();
      const column = pick(columns);
      const fresh = makeRow(rng, world.universe, chance(0.5) ? int(world.people) + 1 : world.people + 1);
      world.rows[i] = { ...world.rows[i]!, [column]: fresh[column]! };
      return `${kind} row ${i} ${column}`;
    }
    case 'edit-unused': {
      // A column the mapping may not read: the key changes, the record need not.
      if (!world.rows.length) return `${kind}: no rows`;
      const i = rowIndex();
      const column = pick(['Comment', 'First', ...world.universe.map((f) => f.column)]);
      world.rows[i] = { ...world.rows[i]!, [column]: `${world.rows[i]![column] ?? ''}${pick(['', ' ', 'x'])}` };
      return `${kind} row ${i} ${column}`;
    }
    case 'pad-cell': {
      if (!world.rows.length) return `${kind}: no rows`;
      const i = rowIndex();
      const column = pick(['ID', 'Name', 'Email', ...world.universe.map((f) => f.column)]);
      world.rows[i] = { ...world.rows[i]!, [column]: ` ${world.rows[i]![column] ?? ''}  ` };
      return `${kind} row ${i} ${column}`;
    }
    case 'add-rows': {
      const count = 1 + int(4);
      for (let n = 0; n < count; n++) world.rows.splice(int(world.rows.length + 1), 0, makeRow(rng, world.universe, ++world.people));
      return `${kind} ${count}`;
    }
    case 'remove-rows': {
      const count = Math.min(world.rows.length, 1 + int(3));
      for (let n = 0; n < count; n++) world.rows.splice(rowIndex(), 1);
      return `${kind} ${count}`;
    }
    case 'reorder':
      world.rows = shuffle(world.rows);
      return kind;
    case 'duplicate-row': {
      if (!world.rows.length) return `${kind}: no rows`;
      const i = rowIndex();
      world.rows.splice(int(world.rows.length + 1), 0, { ...world.rows[i]! });
      return `${kind} ${i}`;
    }
    case 'reuse-id': {
      // Another person takes an existing id (an identity change, or a duplicate).
      if (!world.rows.length) return `${kind}: no rows`;
      const from = world.rows[rowIndex()]!;
      world.rows.splice(int(world.rows.length + 1), 0, { ...makeRow(rng, world.universe, ++world.people), ID: from.ID! });
      return `${kind} ${from.ID}`;
    }
    case 'name-transform': {
      const spec = world.mapping.fields.name!;
      const now = (spec.transforms as string[] | undefined) ?? [];
      const t = pick(NAME_TRANSFORMS);
      spec.transforms = now.includes(t) ? now.filter((x) => x !== t) : [...now, t];
      return `${kind} ${t}`;
    }
    case 'policy': {
      world.mapping.duplicate_client_ids = pick(['reject', 'first', 'last'] as const);
      return `${kind} ${world.mapping.duplicate_client_ids}`;
    }
    case 'skip-rows': {
      if (world.mapping.skip_rows?.length) delete world.mapping.skip_rows;
      else world.mapping.skip_rows = [pick([{ column: 'Active', equals: 'No' }, { column: 'Comment', not_empty: true }])];
      return kind;
    }
    case 'add-custom': {
      const mapped = mappedNames(world);
      const free = world.listed.filter((f) => !mapped.has(f.name.toLowerCase()));
      if (!free.length) return `${kind}: none free`;
      const field = pick(free);
      world.mapping.custom_fields[field.name] = customSpec(rng, field);
      return `${kind} ${field.name}`;
    }
    case 'remove-custom': {
      const names = Object.keys(world.mapping.custom_fields);
      if (!names.length) return `${kind}: none mapped`;
      const name = pick(names);
      delete world.mapping.custom_fields[name];
      return `${kind} ${name}`;
    }
    case 'email-split': {
      if (!world.mapping.fields.emails) return `${kind}: emails not mapped`;
      world.mapping.fields.emails.split = pick([';', [';', ','], ',']);
      return kind;
    }
    case 'client-id': {
      world.mapping.client_id.prefix = pick(['', 'rev-', 'y.']);
      return `${kind} prefix ${String(world.mapping.client_id.prefix)}`;
    }
    case 'comment-only':
      // The mapping file's text changes, its meaning does not.
      world.mappingComment = `edited ${int(1000)}`;
      return kind;
    case 'relabel-option': {
      const targets = valuesTargets(world);
      const mapped = mappedNames(world);
      const all = world.listed.flatMap((f, fi) => (f.options ?? []).map((o, oi) => ({ fi, oi, label: o.option, mapped: mapped.has(f.name.toLowerCase()) }))).filter((c) => !targets.has(c.label.toLowerCase()));
      // Mostly an option of a mapped field: rows that used the label are rejected from now on.
      const candidates = chance(0.8) && all.some((c) => c.mapped) ? all.filter((c) => c.mapped) : all;
      if (!candidates.length) return `${kind}: none`;
      const { fi, oi, label } = pick(candidates);
      const field = world.listed[fi]!;
      const relabelled = chance(0.5) ? `${label} (new)` : pick(LABELS.filter((l) => !field.options!.some((o) => o.option === l)).concat(['Renamed']));
      world.listed[fi] = { ...field, options: field.options!.map((o, i) => (i === oi ? { ...o, option: relabelled } : o)) };
      return `${kind} ${field.name}: ${label} → ${relabelled}`;
    }
    case 'toggle-option': {
      // The listing drops an option (its cells become unknown options), or lists again one the
      // universe has (the emulator accepts its api_id, so cells that were rejected become valid).
      const mapped = mappedNames(world);
      const optionFields = world.listed.map((f, i) => ({ f, i })).filter(({ f }) => f.options && mapped.has(f.name.toLowerCase()));
      const fi = optionFields.length && chance(0.8) ? pick(optionFields).i : int(world.listed.length);
      const field = world.listed[fi];
      const full = world.universe.find((u) => u.api_id === field?.api_id);
      if (!field?.options || !full?.options) return `${kind}: not an option field`;
      const listedIds = new Set(field.options.map((o) => o.api_id));
      const back = full.options.find((o) => !listedIds.has(o.api_id));
      if (back) {
        world.listed[fi] = { ...field, options: [...field.options, { ...back }] };
        return `${kind} ${field.name}: with ${back.option}`;
      }
      const dropped = field.options[field.options.length - 1]!;
      if (field.options.length < 2 || valuesTargets(world).has(dropped.option.toLowerCase())) return `${kind}: ${dropped.option} kept`;
      world.listed[fi] = { ...field, options: field.options.slice(0, -1) };
      return `${kind} ${field.name}: without ${dropped.option}`;
    }
    case 'add-field': {
      const listedIds = new Set(world.listed.map((f) => f.api_id));
      const missing = world.universe.filter((f) => !listedIds.has(f.api_id));
      if (!missing.length) return `${kind}: all listed`;
      const field = pick(missing);
      world.listed.splice(int(world.listed.length + 1), 0, field);
      return `${kind} ${field.name}`;
    }
    case 'remove-unmapped': {
      const mapped = mappedNames(world);
      const free = world.listed.filter((f) => !mapped.has(f.name.toLowerCase()));
      if (!free.length) return `${kind}: all mapped`;
      const field = pick(free);
      world.listed = world.listed.filter((f) => f !== field);
      return `${kind} ${field.name}`;
    }
    case 'describe': {
      const i = int(world.listed.length);
      world.listed[i] = { ...world.listed[i]!, description: `changed ${int(1000)}` };
      return `${kind} ${world.listed[i]!.name}`;
    }
    case 'reorder-fields':
      world.listed = shuffle(world.listed);
      return kind;
  }
}

export function newWorld(rng: Rng, seed: number): World {
  const { int, chance } = picker(rng);
  const universe = makeUniverse(rng, seed);
  // One field of the universe may be held back, for `add-field` to list later.
  const listed = chance(0.6) ? universe.filter((_, i) => i !== int(universe.length)) : [...universe];
  const mapping = makeMapping(rng, listed);
  const people = 10 + int(12);
  const rows = Array.from({ length: people }, (_, i) => makeRow(rng, universe, 1 + i));
  // A few rows carry another row's id from the start.
  for (let n = int(3); n > 0; n--) rows.splice(int(rows.length + 1), 0, makeRow(rng, universe, 1 + int(people)));
  return { universe, listed, mapping, mappingComment: '', rows, people };
}
