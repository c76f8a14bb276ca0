/**
 * Canonical form of a record's managed fields: the JSON text the inventory stores and the hash
 * the planner compares. Mapping emits fields in a stable order (`DesiredRecord.fields`), so
 * JSON.stringify is canonical. Here, below both the state and the plan, because both read it.
 */
import { hash } from 'node:crypto';
import type { FieldValue } from './types.js';

export function canonicalJson(fields: Readonly<Record<string, FieldValue>>): string {
  return JSON.stringify(fields);
}

/**
 * A short content hash; sha1 is ample to detect change (this is not a security boundary).
 * The one-shot `crypto.hash` is about three times faster than createHash() per record.
 */
export function hashJson(json: string): string {
  return hash('sha1', json, 'base64url');
}
