/**
 * What the journal keeps of each write so that `rostersync revert` can undo it: what the service
 * held before the write (`before`) and what the write left (`after`). Journaled with the write,
 * just before its call (after the read, for a write that reads the record first), so a run
 * stopped part-way can be undone too; replaced when the outcome tells more (a partial update that
 * found the record deleted and recreated it).
 *
 * Where `before` comes from (`from`), because a revert writes it back and must never write a
 * value the record never held:
 * - `read`: the service's own values, read by the run before the write (create-if-absent, fields
 *   written if_empty, `--refresh` or the drift check, `policy.undo: exact`, a revert's read-back);
 * - `applied`: the values the pipeline last applied, for a record whose plan knew of no drift
 *   (a plain change of the roster): the service held them unless an editor changed them unseen;
 * - `unknown`: last-applied values the plan could not vouch for (an earlier write of the record
 *   was never confirmed): a revert refuses that record unless forced.
 *
 * `whole`: `before` and `after` hold the whole record (every field the service returns but the
 * linked `author`, which the service sets itself), so a revert judges every field for edits
 * since the run and restores fields no mapping manages. Otherwise they hold the fields sent.
 *
 * `v: 5`, the format of state schema 5 (src/state/sqlite/schema.ts): entries journaled before it
 * lack `from` and their service and group, and a revert refuses them, saying so.
 */
import type { Fields, PlanItem } from '../plan/types.js';

export const UNDO_FORMAT = 5;

export interface UndoRecord {
  v?: typeof UNDO_FORMAT;
  /** What the service held before the write; null: the record was absent. */
  before: Fields | null;
  /** What the write left; null: the record is absent (a delete). */
  after: Fields | null;
  from?: 'read' | 'applied' | 'unknown';
  whole?: true;
  /** A create-if-absent that found the record existing: undone by writing `before` back, never by a delete. */
  adopted?: true;
}

/** A record as the service returns it. */
export type HeldRecord = Record<string, unknown>;

/** Every field of a record read back but the linked `author` (set by the service, never written), empty ones left out. */
export function wholeRecord(held: HeldRecord): Fields {
  return Object.fromEntries(Object.entries(held).filter(([field, value]) => field !== 'author' && value !== null && value !== undefined)) as Fields;
}

/** The record a full POST of `body` leaves: its non-empty fields, nothing else. */
export function sentWhole(body: Fields): Fields {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null));
}

/** The undo record of a write whose record was not read first, journaled before its call. */
export function undoRecordOf(item: PlanItem): UndoRecord {
  const desired = item.desired ? (JSON.parse(item.desired.fieldsJson) as Fields) : {};
  // The service's value before the write: the remote copy when it was read, else the last applied.
  const previous = new Map(item.changes.map((change) => [change.field, change.remote !== undefined ? change.remote : (change.before ?? null)]));
  const read = item.changes.length > 0 && item.changes.every((change) => change.remote !== undefined);
  // Last-applied values stand for the service's only when the plan knew of no drift and of no
  // earlier write left unconfirmed (`retry_failed`).
  const from = read ? 'read' : item.reason === 'changed' || item.reason === 'gone_from_roster' ? 'applied' : 'unknown';
  switch (item.action) {
    case 'create':
      return { v: UNDO_FORMAT, before: null, after: sentWhole(item.body ?? desired), whole: true };
    case 'delete':
      return { v: UNDO_FORMAT, before: Object.fromEntries(previous), after: null, from };
    case 'update':
    case 'replace': {
      // A replace sends every field, but only the changed ones take another value.
      const sent = item.action === 'replace' ? item.changes.filter((change) => !change.kept).map((change) => change.field) : Object.keys(item.body ?? {});
      return { v: UNDO_FORMAT, before: Object.fromEntries(sent.map((field) => [field, previous.get(field) ?? null])), after: Object.fromEntries(sent.map((field) => [field, desired[field] ?? null])), from };
    }
  }
}

/**
 * The undo record of a write whose record was read just before (null: absent): the whole record
 * before, and what the write leaves. `body` is what is sent (a full POST when `full`).
 */
export function undoRecordFromRead(item: PlanItem, held: HeldRecord | null, body: Fields, full: boolean): UndoRecord {
  if (held === null) return { v: UNDO_FORMAT, before: null, after: item.action === 'delete' ? null : sentWhole(body), whole: true };
  const before = wholeRecord(held);
  if (item.action === 'delete') return { v: UNDO_FORMAT, before, after: null, from: 'read', whole: true };
  const after = full ? sentWhole(body) : sentWhole({ ...before, ...body });
  return { v: UNDO_FORMAT, before, after, from: 'read', whole: true, ...(item.action === 'create' ? { adopted: true as const } : {}) };
}

/**
 * The undo record once the write's outcome is known, when that outcome changes it: undefined
 * when the record journaled before the call still holds.
 */
export function undoRecordAfter(item: PlanItem, outcome: { recreated?: boolean }): UndoRecord | undefined {
  // Recreated: the record was absent, so undoing the write deletes it, as for a create.
  if (outcome.recreated) return { v: UNDO_FORMAT, before: null, after: sentWhole(item.desired ? (JSON.parse(item.desired.fieldsJson) as Fields) : {}), whole: true };
  return undefined;
}

export function parseUndoRecord(json: string | null): UndoRecord | null {
  return json === null ? null : (JSON.parse(json) as UndoRecord);
}
