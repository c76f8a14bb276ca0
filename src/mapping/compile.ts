/**
 * Compiling a mapping file against the organization's custom fields (docs/service-contract.md, call 8, listing
 * `author_from_group`). Mapping each row with the result is map-row.ts.
 *
 * Everything that can be checked without rows is checked here, once: custom field names,
 * option labels of `values` maps, keys that do not fit a field's data_kind, defaults. What is
 * left for `mapRow` is pure, allocation-light work per row.
 */
import type { CustomField, CustomFieldsListing, DataKind, StandardField } from '../client/schemas.js';
import { dataKindSchema, hasKnownDataKind, STANDARD_FIELDS } from '../client/schemas.js';
import type { ConfigProblem } from '../errors/config-error.js';
import type { CellValue, SourceRow } from '../sources/types.js';
import { planClientId } from './client-id.js';
import { MappingError } from './errors.js';
import { coerceValue, isEmptyCell, LIST_KINDS, sourceColumns, textOfCell, type FieldPlan, type ValueKind } from './field-plan.js';
import { mapRowWith, type MapRowResult, type RowRules } from './map-row.js';
import type { CustomFieldSpec, DuplicatePolicy, MappingFile, RowFilter, StandardFieldSpec, WritePolicy } from './schema.js';
import { closestMatch } from '../errors/did-you-mean.js';
import { toNfc } from './transforms.js';
import type { FieldValue } from './types.js';

export type { MapRowResult } from './map-row.js';

export interface CompiledMapping {
  /** Absolute path of the mapping file, for messages. */
  mappingFile: string;
  /** Standard fields in service order, then custom field api_ids sorted: the keys of every record. */
  managedFields: string[];
  /** Managed fields whose value is a set (multi_option): compared in one canonical (sorted) order. */
  setFields: ReadonlySet<string>;
  /** Managed field key → name for people (`name`, or the custom field's name such as `Expertise level`). */
  fieldNames: Record<string, string>;
  /** Managed fields written other than `always` (`write: on_create | if_empty`), by key. */
  seededFields: Record<string, Exclude<WritePolicy, 'always'>>;
  /** Every source column the mapping reads (fields, client_id, filters), in first-use order. */
  columns: string[];
  duplicatePolicy: DuplicatePolicy;
  /** The column(s) the client_id comes from, as shown in problems (e.g. `Reviewer ID`). */
  clientIdColumn: string;
  /** Throws MappingError naming each column the mapping reads that the file's header lacks. */
  checkHeaders(headers: readonly string[], sourceFile: string): void;
  /** Maps one row. Pure: the same row always gives the same result. */
  mapRow(row: SourceRow): MapRowResult;
}

export interface CompileOptions {
  /** Path of the mapping file, named in errors. */
  mappingFile: string;
}

export function compileMapping(
  mapping: MappingFile,
  customFields: CustomFieldsListing,
  options: CompileOptions,
): CompiledMapping {
  // Every problem is collected before any is thrown, in the order of the file (standard fields,
  // custom fields, client_id), so one run names them all.
  const problems: ConfigProblem[] = [];
  const standardPlans = planStandardFields(mapping, problems);
  const custom = planCustomFields(mapping, customFields.author_from_group, problems);
  const plans = [...standardPlans, ...custom.plans];
  const clientId = planClientId(mapping.client_id, mapping, problems);
  if (problems.length) {
    throw new MappingError(options.mappingFile, problems, {
      hint: 'Fix the mapping file; `rostersync fields` lists the custom fields and their options.',
    });
  }

  const columns = columnsRead(clientId.columns, plans, mapping.skip_rows);
  const rules: RowRules = {
    plans,
    clientId,
    nfc: mapping.unicode === 'nfc',
    formulaLike: mapping.formula_like,
    emailLookalikes: mapping.email_lookalikes,
    filters: mapping.skip_rows.map((filter, index) => ({ matches: compileFilter(filter, mapping.unicode === 'nfc'), reason: describeFilter(filter, index) })),
  };
  return {
    mappingFile: options.mappingFile,
    managedFields: plans.map((p) => p.key),
    setFields: new Set(plans.filter((p) => p.kind === 'multi_option').map((p) => p.key)),
    fieldNames: Object.fromEntries(plans.map((p) => [p.key, p.label])),
    seededFields: { ...standardSeededFields(mapping), ...custom.seededFields },
    columns,
    duplicatePolicy: mapping.duplicate_client_ids,
    clientIdColumn: clientId.columnLabel,
    checkHeaders: headerCheck(mapping, columns, options.mappingFile),
    mapRow(row) {
      return mapRowWith(rules, row);
    },
  };
}

/** The standard fields the mapping names, in service order. */
function planStandardFields(mapping: MappingFile, problems: ConfigProblem[]): FieldPlan[] {
  const plans: FieldPlan[] = [];
  for (const field of STANDARD_FIELDS) {
    const spec = mapping.fields[field];
    if (spec) plans.push(planStandard(field, spec, `fields.${field}`, problems));
  }
  return plans;
}

/** Standard fields written other than `always`, in service order. */
function standardSeededFields(mapping: MappingFile): Record<string, Exclude<WritePolicy, 'always'>> {
  const seeded: Record<string, Exclude<WritePolicy, 'always'>> = {};
  for (const field of STANDARD_FIELDS) {
    const write = mapping.fields[field]?.write;
    if (write !== undefined && write !== 'always') seeded[field] = write;
  }
  return seeded;
}

/**
 * The custom fields the mapping names, each resolved by name to exactly one of the service's
 * fields: plans sorted by api_id (the records' key order), and those written other than `always`.
 */
function planCustomFields(
  mapping: MappingFile,
  available: readonly CustomField[],
  problems: ConfigProblem[],
): { plans: FieldPlan[]; seededFields: Record<string, Exclude<WritePolicy, 'always'>> } {
  // Names are matched as people type them: case and surrounding spaces do not count.
  const byName = new Map<string, CustomField[]>();
  for (const f of available) {
    const key = f.name.trim().toLowerCase();
    byName.set(key, [...(byName.get(key) ?? []), f]);
  }
  const plans: FieldPlan[] = [];
  const seededFields: Record<string, Exclude<WritePolicy, 'always'>> = {};
  /** api_id → the mapping's name for it: two names for one field would write it twice. */
  const claimed = new Map<string, string>();
  for (const [name, spec] of Object.entries(mapping.custom_fields)) {
    const path = `custom_fields.${name}`;
    const field = oneFieldNamed(name, byName.get(name.trim().toLowerCase()) ?? [], available, path, problems);
    if (!field) continue;
    const earlier = claimed.get(field.api_id);
    if (earlier !== undefined) {
      problems.push({ path, message: `maps the same custom field as custom_fields.${earlier}` });
      continue;
    }
    claimed.set(field.api_id, name);
    if (spec.write !== 'always') seededFields[field.api_id] = spec.write;
    if (!hasKnownDataKind(field)) {
      problems.push({
        path,
        message: `custom field "${field.name}" has data_kind "${field.data_kind}", which rostersync cannot write (it knows ${dataKindSchema.options.join(', ')}); remove it from the mapping or use a field of a known kind`,
      });
      continue;
    }
    plans.push(planCustom(field, spec, path, problems));
  }
  plans.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { plans, seededFields };
}

/** The one custom field of `matches`, or undefined with the problem noted (none, or several). */
function oneFieldNamed(name: string, matches: CustomField[], available: readonly CustomField[], path: string, problems: ConfigProblem[]): CustomField | undefined {
  if (matches.length === 0) {
    const names = available.map((f) => f.name);
    const closest = closestMatch(name, names);
    problems.push({
      path,
      message:
        `no author_from_group custom field is named "${name}".` +
        (closest ? ` Did you mean "${closest}"?` : '') +
        ` Available: ${names.length ? names.map((n) => `"${n}"`).join(', ') : '(none)'}`,
    });
    return undefined;
  }
  if (matches.length > 1) {
    problems.push({ path, message: `the service has ${matches.length} custom fields named "${name}"; rename one in the service` });
    return undefined;
  }
  return matches[0];
}

/** Every source column the mapping reads, once each, in first-use order: client_id, fields, filters. */
function columnsRead(clientIdColumns: readonly string[], plans: readonly FieldPlan[], filters: readonly RowFilter[]): string[] {
  const columns: string[] = [];
  const useColumn = (c: string): void => {
    if (!columns.includes(c)) columns.push(c);
  };
  for (const c of clientIdColumns) useColumn(c);
  for (const plan of plans) for (const c of plan.columns) useColumn(c);
  for (const f of filters) useColumn(f.column);
  return columns;
}

/** `checkHeaders`: every column the mapping reads must be in a file's header, named exactly. */
function headerCheck(mapping: MappingFile, columns: readonly string[], mappingFile: string): CompiledMapping['checkHeaders'] {
  return (headers, sourceFile) => {
    const missing = columns.filter((c) => !headers.includes(c));
    if (!missing.length) return;
    throw new MappingError(
      mappingFile,
      missing.map((c) => {
        const closest = closestMatch(c, headers);
        return {
          path: columnPaths(mapping, c).join(', '),
          message: `column "${c}" is not in the header of ${sourceFile}${closest ? `; did you mean "${closest}"?` : ''}`,
        };
      }),
      {
        // A wide export (thousands of columns) must not turn the hint into pages of names.
        hint: `The header has: ${headers.slice(0, 30).map((h) => `"${h}"`).join(', ')}${headers.length > 30 ? ` … and ${headers.length - 30} more` : ''}. Column names must match exactly; check header_row if the header is not on the first line.`,
      },
    );
  };
}

/** Dot-paths of the mapping entries that read column `c`, for the missing-column message. */
function columnPaths(mapping: MappingFile, c: string): string[] {
  const paths: string[] = [];
  const reads = (s: { column?: string | undefined; columns?: string[] | undefined }): boolean =>
    s.column === c || (s.columns ?? []).includes(c);
  if (reads(mapping.client_id)) paths.push('client_id');
  for (const [k, s] of Object.entries(mapping.fields)) if (s && reads(s)) paths.push(`fields.${k}`);
  for (const [k, s] of Object.entries(mapping.custom_fields)) if (reads(s)) paths.push(`custom_fields.${k}`);
  mapping.skip_rows.forEach((f, i) => {
    if (f.column === c) paths.push(`skip_rows.${i}`);
  });
  return paths;
}

function basePlan(
  key: string,
  label: string,
  kind: ValueKind,
  spec: StandardFieldSpec | CustomFieldSpec,
  path: string,
  problems: ConfigProblem[],
): FieldPlan {
  const cols = sourceColumns(spec);
  const list = LIST_KINDS.has(kind);
  if (spec.split !== undefined && !list) {
    problems.push({ path: `${path}.split`, message: `\`split\` applies to list fields (emails, orcids, affiliations, articles, multi_option), not to ${label}` });
  }
  if (spec.join !== undefined && list) {
    problems.push({ path: `${path}.join`, message: `\`join\` applies to single-valued fields; ${label} is a list, its columns are concatenated` });
  }
  const split =
    spec.split === undefined ? (kind === 'multi_option' ? [';'] : undefined) : typeof spec.split === 'string' ? [spec.split] : spec.split;
  return {
    key,
    label,
    columns: cols,
    columnLabel: cols.join(' + '),
    kind,
    join: spec.join ?? ' ',
    split,
    transforms: spec.transforms.filter((t) => t !== 'dedupe'),
    dedupe: spec.transforms.includes('dedupe'),
    fallback: null,
    required: spec.required || key === 'name',
    options: undefined,
    decimal: '.',
    dateFormats: [],
    onInvalid: onInvalidFor(key, label, spec, path, problems),
    text: kind === 'name' || kind === 'list' || kind === 'str',
  };
}

/** `skip_value` needs a field the record can go without: never `name`, never a required field. */
function onInvalidFor(key: string, label: string, spec: StandardFieldSpec | CustomFieldSpec, path: string, problems: ConfigProblem[]): FieldPlan['onInvalid'] {
  if (spec.on_invalid === 'skip_value' && (key === 'name' || spec.required)) {
    problems.push({
      path: `${path}.on_invalid`,
      message: `\`skip_value\` leaves an invalid value out of the record, but ${label} is required${key === 'name' ? ' (the service needs a name)' : ''}; use \`reject_row\``,
    });
  }
  return spec.on_invalid;
}

function planStandard(field: StandardField, spec: StandardFieldSpec, path: string, problems: ConfigProblem[]): FieldPlan {
  const plan = basePlan(field, field, field === 'name' ? 'name' : 'list', spec, path, problems);
  plan.fallback = compileDefault(plan, spec.default, `${path}.default`, problems);
  return plan;
}

function planCustom(field: CustomField & { data_kind: DataKind }, spec: CustomFieldSpec, path: string, problems: ConfigProblem[]): FieldPlan {
  const kind = field.data_kind;
  const plan = basePlan(field.api_id, field.name, kind, spec, path, problems);
  const notFor = (key: string, wanted: string): void => {
    problems.push({ path: `${path}.${key}`, message: `\`${key}\` applies to ${wanted} fields; "${field.name}" is a ${kind} field` });
  };
  if (spec.decimal !== undefined) {
    if (kind === 'number') plan.decimal = spec.decimal;
    else notFor('decimal', 'number');
  }
  if (spec.date_formats !== undefined) {
    if (kind !== 'date') notFor('date_formats', 'date');
    else {
      plan.dateFormats = spec.date_formats;
      // "04/05/2023" would then be read day-first or month-first depending on list order: a guess.
      const clash = spec.date_formats.find((f) => f.startsWith('DD') && spec.date_formats!.includes(`MM${f.slice(2, 3)}DD${f.slice(5)}` as never));
      if (clash) {
        problems.push({
          path: `${path}.date_formats`,
          message: `lists both ${clash} and its month-first twin; a date like 04/05/2023 would be a guess. Keep the one your file uses`,
        });
      }
    }
  }
  if (kind === 'single_option' || kind === 'multi_option') {
    const labels = (field.options ?? []).map((o) => o.option);
    const byLabel = new Map((field.options ?? []).map((o) => [o.option.trim().toLowerCase(), o.api_id]));
    const byLegacy = new Map<string, string>();
    for (const [legacy, target] of Object.entries(spec.values ?? {})) {
      const apiId = byLabel.get(target.trim().toLowerCase());
      if (apiId === undefined) {
        const closest = closestMatch(target, labels);
        problems.push({
          path: `${path}.values.${legacy}`,
          message: `"${target}" is not an option of "${field.name}".${closest ? ` Did you mean "${closest}"?` : ''} Options: ${labels.join(', ')}`,
        });
      } else byLegacy.set(legacy.trim().toLowerCase(), apiId);
    }
    plan.options = { byLabel, byLegacy, labels };
  } else if (spec.values !== undefined) {
    notFor('values', 'single_option and multi_option');
  }
  plan.fallback = compileDefault(plan, spec.default, `${path}.default`, problems);
  return plan;
}

/** Runs a default through the field's own coercion once, so a bad default is a mapping error. */
function compileDefault(
  plan: FieldPlan,
  value: string | number | string[] | undefined,
  path: string,
  problems: ConfigProblem[],
): FieldValue {
  if (value === undefined) return null;
  const list = LIST_KINDS.has(plan.kind);
  if (Array.isArray(value) && !list) {
    problems.push({ path, message: `${plan.label} holds one value; give a single default` });
    return null;
  }
  const items = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  let scalar: FieldValue = null;
  for (const item of items) {
    const result = coerceValue(plan, typeof item === 'number' && plan.kind !== 'number' ? String(item) : item);
    if (!result.ok) {
      problems.push({ path, message: `default ${JSON.stringify(item)}: ${result.message}` });
      return null;
    }
    if (list) out.push(String(result.value));
    else scalar = result.value;
  }
  return list ? out : scalar;
}

/** `skip_rows[0]: Active equals "No"`, for the report's list of filtered rows. */
function describeFilter(filter: RowFilter, index: number): string {
  const what =
    filter.equals !== undefined
      ? `equals "${filter.equals}"`
      : filter.not_equals !== undefined
        ? `is not "${filter.not_equals}"`
        : filter.in !== undefined
          ? `is one of ${filter.in.map((value) => `"${value}"`).join(', ')}`
          : filter.empty
            ? 'is empty'
            : 'is not empty';
  return `skip_rows[${index}]: ${filter.column} ${what}`;
}

function compileFilter(filter: RowFilter, nfc: boolean): (values: Record<string, CellValue>) => boolean {
  const norm = (cell: CellValue | undefined): string => (isEmptyCell(cell) ? '' : textOfCell(cell, nfc).trim().toLowerCase());
  const { column } = filter;
  if (filter.equals !== undefined) {
    const want = toNfc(filter.equals).trim().toLowerCase();
    return (v) => norm(v[column]) === want;
  }
  if (filter.not_equals !== undefined) {
    const want = toNfc(filter.not_equals).trim().toLowerCase();
    return (v) => norm(v[column]) !== want;
  }
  if (filter.in !== undefined) {
    const set = new Set(filter.in.map((s) => toNfc(s).trim().toLowerCase()));
    return (v) => set.has(norm(v[column]));
  }
  if (filter.empty) return (v) => norm(v[column]) === '';
  return (v) => norm(v[column]) !== '';
}
