/**
 * Comparing a record's managed fields: equal values, and the managed fields of a remote record.
 * Their canonical JSON and its hash live below the state, which stores them
 * (src/mapping/canonical-json.ts).
 */
import type { FieldValue } from '../mapping/types.js';
import type { Fields } from './types.js';

export { canonicalJson, hashJson } from '../mapping/canonical-json.js';

export function sameValue(a: FieldValue | undefined, b: FieldValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || a === null) return b === undefined || b === null || (Array.isArray(b) && b.length === 0);
  if (b === undefined || b === null) return Array.isArray(a) && a.length === 0;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => item === b[i]);
  return false;
}

/** The managed fields of a remote record; a field the service left out is empty (null). */
export function projectFields(record: object, managedFields: readonly string[], setFields: ReadonlySet<string> = new Set()): Fields {
  const values = record as Record<string, unknown>;
  const fields: Fields = {};
  for (const field of managedFields) {
    const value = (values[field] ?? null) as Fields[string];
    // A set (multi_option ids) in the canonical order mapping gives it: the service may answer
    // options in its own order, which is no change.
    fields[field] = setFields.has(field) && Array.isArray(value) ? [...value].sort() : value;
  }
  return fields;
}
