/**
 * The plan that undoes one run's writes (`rostersync revert <run-id>`), pure: from the run's
 * journal, the writes journaled since, the records read back from the service and the inventory.
 *
 * - a create becomes a delete;
 * - an update becomes a partial POST of the values its fields had before;
 * - a delete becomes a create of its last-applied managed fields (fields rostersync does not
 *   manage were never read, so they cannot be restored: the note says so).
 *
 * A record is undone only while it still holds what the run wrote: a record written by a later
 * run, or changed in the service since (the read-back differs), is a conflict, named with what
 * changed, unless the operator forces (or skips) that record. A write the journal never confirmed
 * (a run stopped part-way: `planned` or `sent`, or a failure that may have written) is judged by
 * the read-back alone: undone if the service holds what it would have written, left alone if the
 * service holds what was there before (it never happened), a conflict otherwise.
 */
import type { PolicyConfig } from '../config/pipeline.js';
import { canonicalJson, hashJson, sameValue } from '../plan/canonical.js';
import { evaluateGuards } from '../plan/guards.js';
import type { FieldChange, Fields, Plan, PlanItem } from '../plan/types.js';
import { mayHaveWritten, type JournalEntry } from '../state/backend.js';
import { parseUndoRecord, type UndoRecord } from './undo-record.js';

export interface RevertInput {
  runId: string;
  /** The reverted run's journal. */
  entries: readonly JournalEntry[];
  /** Every journaled write of those client_ids (the run's own included), to find later ones. */
  history: readonly JournalEntry[];
  /** Records read back from the service, on the fields involved; null: absent (404). */
  remote: ReadonlyMap<string, Fields | null>;
  /** The inventory's last-applied fields of those client_ids. */
  owned: ReadonlyMap<string, Fields>;
  /** Undo these records even where they changed since. */
  force: ReadonlySet<string>;
  /** Leave these records as they are. */
  skip: ReadonlySet<string>;
  fieldLabels: ReadonlyMap<string, string>;
  policy: Pick<PolicyConfig, 'guards' | 'max_rps'>;
  ownedCount: number;
  allowDeletes?: number;
}

/** A record the revert will not undo unless forced: what changed since the run. */
export interface RevertConflict {
  clientId: string;
  message: string;
  /** False when no flag can help (the journal kept no values for it). */
  forcible: boolean;
}

export interface RevertPlan {
  plan: Plan;
  conflicts: RevertConflict[];
  /** Sentences for the report: what is not undone, and why. */
  notes: string[];
}

export function buildRevertPlan(input: RevertInput): RevertPlan {
  const label = (field: string) => input.fieldLabels.get(field) ?? field;
  const items: PlanItem[] = [];
  const conflicts: RevertConflict[] = [];
  const left: string[] = [];
  const notWritten: string[] = [];
  const adopted: string[] = [];
  let recreated = 0;
  const historyOf = groupByRecord(input.history);

  for (const entry of lastEntryPerRecord(input.entries)) {
    const { clientId } = entry;
    if (input.skip.has(clientId)) {
      left.push(clientId);
      continue;
    }
    const confirmed = entry.state === 'done';
    if (!confirmed && !mayHaveWritten({ action: entry.action as 'create', state: entry.state, status: entry.status })) {
      notWritten.push(clientId);
      continue;
    }
    const undo = parseUndoRecord(entry.undoJson);
    if (undo === null) {
      conflicts.push({ clientId, forcible: false, message: `${clientId}: journaled by a rostersync that did not keep the values a write changed, so this ${entry.action} cannot be undone` });
      continue;
    }
    if (undo.adopted) {
      adopted.push(clientId);
      continue;
    }
    const forced = input.force.has(clientId);
    const later = laterWrite(historyOf.get(clientId) ?? [], entry);
    if (later && !forced) {
      conflicts.push({ clientId, forcible: true, message: `${clientId}: ${later.action === 'delete' ? 'deleted' : 'written'} again by the later run ${later.runId}` });
      continue;
    }
    const remote = input.remote.get(clientId);
    if (remote === undefined) throw new Error(`${clientId} was not read back`);
    const verdict = judge(entry.action, undo, remote, confirmed, label);
    if (verdict.kind === 'never_written') {
      notWritten.push(clientId);
      continue;
    }
    if (verdict.kind === 'changed' && !forced) {
      conflicts.push({ clientId, forcible: true, message: `${clientId}: ${verdict.what}` });
      continue;
    }
    const item = undoItem(entry.action, undo, remote, input.owned.get(clientId), clientId, label);
    if (item === null) continue;
    if (item.action === 'create') recreated += 1;
    items.push(item);
  }

  const notes: string[] = [`this run reverts run ${input.runId}: ${items.length} write${items.length === 1 ? '' : 's'} undone.`];
  if (recreated > 0) {
    notes.push(
      `${recreated} record${recreated === 1 ? '' : 's'} deleted by run ${input.runId} ${recreated === 1 ? 'is' : 'are'} re-created from the last-applied values of the fields this pipeline manages. Fields it does not manage (set in the service by editors: a conflict of interest, notes) were never read, so they cannot be restored.`,
    );
  }
  if (adopted.length > 0) notes.push(`not undone: ${shown(adopted)} existed before run ${input.runId}, which adopted ${adopted.length === 1 ? 'it' : 'them'} without reading the earlier values; revert leaves ${adopted.length === 1 ? 'it' : 'them'} as ${adopted.length === 1 ? 'it is' : 'they are'}.`);
  if (notWritten.length > 0) notes.push(`nothing to undo for ${shown(notWritten)}: run ${input.runId} never wrote ${notWritten.length === 1 ? 'it' : 'them'} (refused, or stopped before the write; read back to be sure).`);
  if (left.length > 0) notes.push(`left as ${left.length === 1 ? 'it is' : 'they are'} (--skip-record): ${shown(left)}.`);

  const counts = { create: 0, update: 0, delete: 0, noop: 0 };
  for (const item of items) counts[item.action] += 1;
  const guards = evaluateGuards({
    guards: input.policy.guards,
    deletes: counts.delete,
    ownedCount: input.ownedCount,
    // Not a roster: the source guards do not apply, the delete guards do.
    validCount: input.ownedCount,
    previousValidCount: null,
    inventoryMissing: false,
    allow: input.allowDeletes !== undefined ? { deletes: input.allowDeletes } : {},
  });
  const maxRps = input.policy.max_rps;
  return {
    plan: {
      items: [...items.filter((i) => i.action !== 'delete'), ...items.filter((i) => i.action === 'delete')],
      counts,
      orphans: [],
      stateRepairs: [],
      guards,
      refused: guards.some((guard) => guard.tripped),
      estimate: { calls: items.length, rps: maxRps ?? 0, seconds: maxRps ? items.length / maxRps : 0 },
      notes: [],
    },
    conflicts,
    notes,
  };
}

type Verdict = { kind: 'undo' } | { kind: 'never_written' } | { kind: 'changed'; what: string };

/** Whether the service still holds what the write left (confirmed or not), or what was there before it. */
function judge(action: string, undo: UndoRecord, remote: Fields | null, confirmed: boolean, label: (field: string) => string): Verdict {
  if (action === 'delete') {
    if (remote === null) return { kind: 'undo' };
    // Unconfirmed and still there: the delete never happened.
    return confirmed ? { kind: 'changed', what: 'exists again in the service (re-created since the run deleted it)' } : { kind: 'never_written' };
  }
  const after = undo.after ?? {};
  // A record the run created and that is absent now (deleted since, or a create never sent): the
  // delete that undoes it finds it gone, which is the goal, and settles the journal entry, so the
  // next sync does not take it for an unfinished write.
  if (remote === null) return action === 'create' ? { kind: 'undo' } : { kind: 'changed', what: 'deleted in the service since the run updated it' };
  const differing = Object.keys(after).filter((field) => !sameValue(after[field], remote[field]));
  if (differing.length === 0) return { kind: 'undo' };
  // An update never confirmed that the service does not hold: writing the earlier values again
  // changes nothing there, and settles the journal entry likewise.
  if (!confirmed && action === 'update' && undo.before && Object.keys(undo.before).every((field) => sameValue(undo.before![field], remote[field]))) return { kind: 'undo' };
  // Field names, not values: the message reaches logs and CI output, the values are roster data.
  return { kind: 'changed', what: `changed in the service since the run${confirmed ? '' : ' (whose write was never confirmed)'}: ${differing.map(label).join(', ')} no longer ${differing.length === 1 ? 'holds' : 'hold'} what the run wrote` };
}

/** The write that undoes one journaled write; null when nothing is left to write. */
function undoItem(action: string, undo: UndoRecord, remote: Fields | null, owned: Fields | undefined, clientId: string, label: (field: string) => string): PlanItem | null {
  const change = (field: string, before: Fields[string] | undefined, after: Fields[string] | undefined, there: Fields[string] | undefined): FieldChange => ({
    field,
    label: label(field),
    ...(before !== undefined ? { before } : {}),
    ...(after !== undefined ? { after } : {}),
    ...(there !== undefined ? { remote: there } : {}),
  });
  switch (action) {
    case 'create': {
      const current = remote ?? owned ?? undo.after ?? {};
      return { clientId, action: 'delete', reason: 'revert', changes: Object.keys(current).map((field) => change(field, owned?.[field] ?? undo.after?.[field], undefined, remote?.[field])) };
    }
    case 'update': {
      const before = undo.before ?? {};
      if (Object.keys(before).length === 0) return null;
      const fields = { ...(owned ?? {}), ...before };
      const json = canonicalJson(fields);
      return {
        clientId,
        action: 'update',
        reason: 'revert',
        body: before,
        desired: { fieldsJson: json, hash: hashJson(json) },
        changes: Object.keys(before).map((field) => change(field, owned?.[field] ?? undo.after?.[field], before[field], remote?.[field])),
      };
    }
    case 'delete': {
      const before = undo.before ?? {};
      const json = canonicalJson(before);
      return {
        clientId,
        action: 'create',
        reason: 'revert',
        body: Object.fromEntries(Object.entries(before).filter(([, value]) => value !== null)),
        desired: { fieldsJson: json, hash: hashJson(json) },
        changes: Object.keys(before).map((field) => change(field, undefined, before[field], undefined)),
      };
    }
    default:
      return null;
  }
}

/** The last journaled write of each record in the run (a run writes a record once; a retry within it would be later). */
function lastEntryPerRecord(entries: readonly JournalEntry[]): JournalEntry[] {
  const last = new Map<string, JournalEntry>();
  for (const entry of entries) last.set(entry.clientId, entry);
  return [...last.values()];
}

function groupByRecord(entries: readonly JournalEntry[]): Map<string, JournalEntry[]> {
  const byRecord = new Map<string, JournalEntry[]>();
  for (const entry of entries) {
    const list = byRecord.get(entry.clientId);
    if (list) list.push(entry);
    else byRecord.set(entry.clientId, [entry]);
  }
  return byRecord;
}

/** The latest write of the record journaled after `entry` by another run that may have reached the service. */
function laterWrite(history: readonly JournalEntry[], entry: JournalEntry): JournalEntry | undefined {
  let found: JournalEntry | undefined;
  for (const other of history) {
    if (other.id <= entry.id || other.runId === entry.runId) continue;
    if (other.state === 'abandoned') continue;
    if (other.state === 'done' || mayHaveWritten({ action: other.action as 'create', state: other.state, status: other.status })) found = other;
  }
  return found;
}

function shown(ids: readonly string[]): string {
  return `${ids.slice(0, 20).join(', ')}${ids.length > 20 ? `, … (${ids.length} in all)` : ''}`;
}
