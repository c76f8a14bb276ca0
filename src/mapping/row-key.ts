/**
 * The key of a raw roster row, for the plan's fast path (src/plan/known-rows.ts).
 *
 * Mapping a row is a pure function of its cells, the header, the mapping file, the custom-fields
 * listing and rostersync's own code. The key hashes all of them, so two rows with the same key map
 * to the same record: a row whose key the inventory stored beside the record's hash maps to
 * exactly that record again, and need not be mapped, serialised or hashed. Anything else (a new
 * mapping, listing, header or version) changes every key, and every row takes the full path once.
 *
 * The cell encoding is injective. A row of text and empty cells only (no text holding a NUL or
 * empty) is "T" and its cells joined by NUL, an empty cell as nothing: with the header's fixed cell
 * count, the text splits back into exactly those cells. Any other row is "X" and, per cell, a type
 * tag, its text and a NUL. Text holding a NUL itself (readers refuse it in CSV; XLSX can escape
 * one) gets no key, so that row is always mapped.
 */
import { hash } from 'node:crypto';
import { cellsTextOf } from '../sources/cells-text.js';
import { CELL_SEPARATOR, type CellValue, type SourceRow } from '../sources/types.js';
import { ROSTERSYNC_VERSION } from '../runtime/version.js';

export { ROW_KEY_LENGTH } from './row-key-length.js';

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

/**
 * The revision of how rostersync maps cells, changed whenever the same cell maps to another value
 * (Unicode NFC, `trim` of format characters, `last_first`, the email and ORCID forms), so that keys
 * stored by an earlier build stop matching even within one version: each row then takes the full
 * path once.
 */
export const MAPPING_REVISION = 'values-2';

/** Everything that decides a row's mapped output except the row itself, as one prefix. */
export function rowKeySalt(scope: RowKeyScope): string {
  const version = scope.version ?? ROSTERSYNC_VERSION;
  return `${hash('sha256', JSON.stringify([version, MAPPING_REVISION, scope.mappingHash, scope.listing, scope.headers, scope.format]), 'base64url')}\u0000`;
}

/**
 * The name of a salt as the state records it (StateStore.rowKeySalt): printable, as PostgreSQL
 * text holds no NUL.
 */
export function rowKeySaltName(salt: string): string {
  return hash('sha256', salt, 'base64url');
}

/**
 * The row's key, or undefined when a cell's text holds a NUL (the row is then always mapped).
 * Rows whose cells are all text or empty (every CSV row) are keyed by their cells joined by NUL
 * (scheme "T", the text a worker-thread reader already has); others by typed cells (scheme "X").
 */
export function rowKeyOf(salt: string, headers: readonly string[], row: Pick<SourceRow, 'values' | 'cellsText'>): string | undefined {
  const text = row.cellsText ?? cellsTextOf(row.values, headers);
  return text !== undefined ? hash('sha1', `${salt}T${text}`, 'base64url') : typedKey(salt, headers, row.values);
}

/** Scheme X: each cell a type tag, its text and a NUL, in header order. */
function typedKey(salt: string, headers: readonly string[], values: Readonly<Record<string, CellValue>>): string | undefined {
  let text = `${salt}X`;
  for (const header of headers) {
    const cell = values[header];
    if (typeof cell === 'string') {
      if (cell.includes(CELL_SEPARATOR)) return undefined;
      text += `s${cell}${CELL_SEPARATOR}`;
    } else if (typeof cell === 'number') {
      text += `n${Object.is(cell, -0) ? '-0' : cell}${CELL_SEPARATOR}`;
    } else if (typeof cell === 'boolean') {
      text += cell ? `t${CELL_SEPARATOR}` : `f${CELL_SEPARATOR}`;
    } else {
      // null (empty) and undefined (no such cell) are told apart, to stay on the safe side.
      text += cell === null ? `z${CELL_SEPARATOR}` : `u${CELL_SEPARATOR}`;
    }
  }
  return hash('sha1', text, 'base64url');
}
