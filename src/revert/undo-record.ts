/**
 * What the journal keeps of each write so that `rostersync revert` can undo it: the values of
 * the fields the write changed, before and after. Journaled with the write when it is planned
 * (before its call), so a run stopped part-way can be undone too; replaced when the outcome
 * tells more (an adoption found the record existing, a partial update recreated it, a seeded
 * field was kept).
 *
 * - create: `before` null (the record was absent), `after` every managed field written;
 * - update: `before` and `after` hold only the fields sent: the service's value before the
 *   write (the remote copy read with --refresh or the drift check, else the last-applied one);
 * - delete: `before` every last-applied managed field, `after` null.
 *
 * Fields rostersync does not manage are never read, so they are not kept: a deleted record is
 * re-created with its managed fields only (docs/migrating.md, "Undo a run").
 */
import type { Fields, PlanItem } from '../plan/types.js';

export interface UndoRecord {
  before: Fields | null;
  after: Fields | null;
  /** A create-if-absent that found the record existing: its values before were not read. */
  adopted?: true;
}

/** The undo record of a planned write, journaled before its call. */
export function undoRecordOf(item: PlanItem): UndoRecord {
  const desired = item.desired ? (JSON.parse(item.desired.fieldsJson) as Fields) : {};
  // The service's value before the write: the remote copy when it was read, else the last applied.
  const previous = new Map(item.changes.map((change) => [change.field, change.remote !== undefined ? change.remote : (change.before ?? null)]));
  switch (item.action) {
    case 'create':
      return { before: null, after: desired };
    case 'delete':
      return { before: Object.fromEntries(previous), after: null };
    case 'update': {
      const sent = item.replace ? item.changes.filter((change) => !change.kept).map((change) => change.field) : Object.keys(item.body ?? {});
      return { before: Object.fromEntries(sent.map((field) => [field, previous.get(field) ?? null])), after: Object.fromEntries(sent.map((field) => [field, desired[field] ?? null])) };
    }
  }
}

/**
 * The undo record once the write's outcome is known, when that outcome changes it: undefined
 * when the record journaled at planning time still holds.
 */
export function undoRecordAfter(item: PlanItem, outcome: { recreated?: boolean; adopted?: boolean; kept?: readonly string[] }): UndoRecord | undefined {
  const planned = undoRecordOf(item);
  // Recreated: the record was absent, so undoing the write deletes it, as for a create.
  if (outcome.recreated) return { before: null, after: item.desired ? (JSON.parse(item.desired.fieldsJson) as Fields) : {} };
  if (outcome.adopted) return { ...planned, adopted: true };
  if (outcome.kept && outcome.kept.length > 0 && planned.before && planned.after) {
    const kept = new Set(outcome.kept);
    const without = (fields: Fields) => Object.fromEntries(Object.entries(fields).filter(([field]) => !kept.has(field)));
    return { before: without(planned.before), after: without(planned.after) };
  }
  return undefined;
}

export function parseUndoRecord(json: string | null): UndoRecord | null {
  return json === null ? null : (JSON.parse(json) as UndoRecord);
}
