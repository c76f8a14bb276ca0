/**
 * Checks an author-from-group write body (docs/service-contract.md, call 2 full POST, call 3 partial POST) against the org's
 * author_from_group custom fields, and turns it into the stored write shape.
 *
 * Rules (docs/service-contract.md, An author-from-group record, "Custom field value shapes by data_kind"):
 * - standard fields: `name` a non-empty string (required on full POST; on partial it may be
 *   omitted but not null); emails/orcids/articles/affiliations null or arrays of strings;
 * - any other key must be the api_id of an author_from_group custom field (400 `unknown_field`);
 * - values: number → JSON number; str → string; date → `YYYY-MM-DD` and a real calendar date;
 *   single_option → one option api_id; multi_option → array of option api_ids (400
 *   `unknown_option` for an api_id that is not an option). null clears any custom field.
 */
import { STANDARD_FIELDS, type CustomField } from '../client/schemas.js';
import { badRequest } from './reply.js';

/**
 * A stored author-from-group record in the full write shape: the five standard fields always
 * present (null when not set), plus one key per custom field api_id that has a value.
 */
export type StoredRecord = Record<string, unknown> & {
  name: string;
  emails: string[] | null;
  orcids: string[] | null;
  articles: string[] | null;
  affiliations: string[] | null;
};

export interface IndexedCustomField {
  field: CustomField;
  optionIds: ReadonlySet<string>;
}

/** What a write body is checked against: the org's author_from_group custom fields by api_id. */
export interface AuthorFieldIndex {
  authorFieldsById: ReadonlyMap<string, IndexedCustomField>;
}

const STANDARD = new Set<string>(STANDARD_FIELDS);
const LIST_FIELDS = ['emails', 'orcids', 'articles', 'affiliations'] as const;
const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for `YYYY-MM-DD` naming a day that exists (2023-02-30 does not). */
export function isCalendarDate(value: string): boolean {
  const match = DATE_PATTERN.exec(value);
  if (!match) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `${typeof value === 'object' ? 'an object' : `the ${typeof value} ${String(value)}`}`;
}

function checkStandard(key: string, value: unknown): void {
  if (key === 'name') {
    if (typeof value !== 'string' || value.trim() === '') {
      throw badRequest('validation_error', `field "name" must be a non-empty string, got ${describe(value)}`);
    }
    return;
  }
  if (value === null) return;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw badRequest('validation_error', `field "${key}" must be null or an array of strings, got ${describe(value)}`);
  }
}

function checkCustom(org: AuthorFieldIndex, key: string, value: unknown): void {
  const indexed = org.authorFieldsById.get(key);
  if (!indexed) {
    throw badRequest(
      'unknown_field',
      `unknown field "${key}": not a standard field (${STANDARD_FIELDS.join(', ')}) nor the api_id of an author_from_group custom field of this organization`,
    );
  }
  if (value === null) return;
  const { field, optionIds } = indexed;
  const where = `custom field "${field.name}" (${key}, ${field.data_kind})`;
  switch (field.data_kind) {
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw badRequest('validation_error', `${where} needs a JSON number, got ${describe(value)}`);
      return;
    case 'str':
      if (typeof value !== 'string') throw badRequest('validation_error', `${where} needs a string, got ${describe(value)}`);
      return;
    case 'date':
      if (typeof value !== 'string' || !isCalendarDate(value)) {
        throw badRequest('validation_error', `${where} needs a real calendar date as YYYY-MM-DD, got ${describe(value)}`);
      }
      return;
    case 'single_option':
      if (typeof value !== 'string') throw badRequest('validation_error', `${where} needs one option api_id as a string, got ${describe(value)}`);
      if (!optionIds.has(value)) throw badRequest('unknown_option', `${where} has no option with api_id "${value}"`);
      return;
    case 'multi_option':
      if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
        throw badRequest('validation_error', `${where} needs an array of option api_ids, got ${describe(value)}`);
      }
      for (const item of value as string[]) {
        if (!optionIds.has(item)) throw badRequest('unknown_option', `${where} has no option with api_id "${item}"`);
      }
      return;
  }
}

/** Validates every key of a write body; throws a 400 EmulatorHttpError naming the first problem. */
export function validateWriteBody(org: AuthorFieldIndex, body: Record<string, unknown>, mode: 'full' | 'partial'): void {
  if (mode === 'full' && !('name' in body)) throw badRequest('validation_error', 'field "name" is required');
  for (const [key, value] of Object.entries(body)) {
    if (STANDARD.has(key)) checkStandard(key, value);
    else checkCustom(org, key, value);
  }
}

/** docs/service-contract.md, call 2: a full replace — omitted standard fields become null, omitted custom fields have no value. */
export function fullRecord(body: Record<string, unknown>): StoredRecord {
  const record: StoredRecord = {
    name: body.name as string,
    emails: null,
    orcids: null,
    articles: null,
    affiliations: null,
  };
  for (const field of LIST_FIELDS) record[field] = (body[field] as string[] | null | undefined) ?? null;
  for (const [key, value] of Object.entries(body)) {
    if (!STANDARD.has(key) && value !== null) record[key] = value;
  }
  return record;
}

/** docs/service-contract.md, call 3: only the sent fields change; a custom field sent as null loses its value. */
export function applyPartial(record: StoredRecord, body: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(body)) {
    if (STANDARD.has(key)) record[key] = value;
    else if (value === null) delete record[key];
    else record[key] = value;
  }
}

