/**
 * The key of a raw roster row, for the plan's fast path (src/plan/known-rows.ts).
 *
 * Mapping a row is a pure function of its cells, the header, the mapping file, the custom-fields
 * listing and rostersync's own code. The key hashes all of them, so two rows with the same key map
 * to the same record: a row whose key the inventory stored beside the record's hash maps to
 * exactly that record again, and need not be mapped, serialised or hashed. Anything else (a new
 * mapping, listing, header or version) changes every key, and every row takes the full path once.
 *
 * The cell encoding is injective: each cell is a type tag, its text and a NUL terminator, in header
 * order. Text holding a NUL itself (readers refuse it in CSV; XLSX can escape one) gets no key, so
 * that row is always mapped.
 */
import { hash } from 'node:crypto';
import type { CellValue } from '../sources/types.js';
import { ROSTERSYNC_VERSION } from '../version.js';

/** Length of a row key: sha1 in base64url. */
export const ROW_KEY_LENGTH = 27;

export interface RowKeyScope {
  /** sha256 of the mapping file's text. */
  mappingHash: string;
  /** The custom-fields listing the mapping was compiled against. */
  listing: unknown;
  /** The source's header, in order. */
  headers: readonly string[];
  format: string;
  /** Only for tests: the version the key is bound to. */
  version?: string;
}

/** Everything that decides a row's mapped output except the row itself, as one prefix. */
export function rowKeySalt(scope: RowKeyScope): string {
  const version = scope.version ?? ROSTERSYNC_VERSION;
  return `${hash('sha256', JSON.stringify([version, scope.mappingHash, scope.listing, scope.headers, scope.format]), 'base64url')}\u0000`;
}

/** The row's key, or undefined when a cell's text holds a NUL (the row is then always mapped). */
export function rowKeyOf(salt: string, headers: readonly string[], values: Readonly<Record<string, CellValue>>): string | undefined {
  let text = salt;
  for (const header of headers) {
    const cell = values[header];
    if (typeof cell === 'string') {
      if (cell.includes('\u0000')) return undefined;
      text += `s${cell}\u0000`;
    } else if (typeof cell === 'number') {
      text += `n${Object.is(cell, -0) ? '-0' : cell}\u0000`;
    } else if (typeof cell === 'boolean') {
      text += cell ? 't\u0000' : 'f\u0000';
    } else {
      // null (empty) and undefined (no such cell) are told apart, to stay on the safe side.
      text += cell === null ? 'z\u0000' : 'u\u0000';
    }
  }
  return hash('sha1', text, 'base64url');
}
