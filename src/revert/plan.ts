/**
 * The plan that undoes one run's writes (`rostersync revert <run-id>`), pure: from the run's
 * journal, the writes journaled since, the whole records read back from the service, the
 * inventory and the claims. The aim: the group as it was before the run, touching nothing else.
 *
 * - a create becomes a delete, only of a record the run created and the pipeline still owns:
 *   owned in the inventory now (or, for a write never confirmed, claimed and created from
 *   absent), claimed by this pipeline, never adopted, never forgotten. Anything else is refused
 *   by name, and no flag deletes it;
 * - an update, or an adoption (a create-if-absent that found the record), becomes a partial POST
 *   of the values the service held before (src/apply/undo-record.ts says where they come from);
 *   values the run could not vouch for are refused unless forced;
 * - a delete becomes a create of the record as it was: whole when the run read it first
 *   (`policy.undo: exact`, a revert's own read-back), else its last-applied managed fields.
 *
 * A record is undone only while it holds what the run left, judged on the whole record as read
 * back (every field the service returns but the linked author) wherever the run knew the whole
 * record it left; an edit anywhere is a conflict, named with the fields, unless the operator
 * forces (or skips) that record. A record that already holds what it held before the run (undone
 * by an earlier revert of this run, killed or partly failed, or never written) is done: a revert
 * converges. Its write is sent again only to settle a journal entry left unconfirmed.
 */
import type { PolicyConfig } from '../config/pipeline.js';
import { canonicalJson, hashJson, projectFields, sameValue } from '../plan/canonical.js';
import { evaluateGuards } from '../plan/guards.js';
import type { FieldChange, Fields, Plan, PlanItem } from '../plan/types.js';
import { mayHaveWritten, type JournalEntry } from '../state/backend.js';
import { parseUndoRecord, sentWhole, wholeRecord, type HeldRecord, type UndoRecord } from '../apply/undo-record.js';

export interface RevertInput {
  runId: string;
  /** The reverted run's journal (every entry of schema 5: checked before planning). */
  entries: readonly JournalEntry[];
  /** Every journaled write of those client_ids (the run's own included), to find later ones. */
  history: readonly JournalEntry[];
  /** Runs that revert this one: their writes are this revert's own, not later changes. */
  revertsOfRun: ReadonlySet<string>;
  /** Whole records read back from the service; null: absent (404). */
  remote: ReadonlyMap<string, HeldRecord | null>;
  /** The inventory's last-applied fields of those client_ids (absent: not owned). */
  owned: ReadonlyMap<string, Fields>;
  /** The pipeline that claims each client_id on the run's target (absent: unclaimed). */
  claims: ReadonlyMap<string, string>;
  pipeline: string;
  /** The fields the inventory keeps (the mapping's managed fields) and which of them are sets. */
  managedFields: readonly string[];
  setFields: ReadonlySet<string>;
  /** Undo these records even where they changed since. */
  force: ReadonlySet<string>;
  /** Leave these records as they are. */
  skip: ReadonlySet<string>;
  fieldLabels: ReadonlyMap<string, string>;
  policy: Pick<PolicyConfig, 'guards' | 'max_rps'>;
  ownedCount: number;
  allowDeletes?: number;
}

/** A record the revert will not undo unless forced: what changed since the run, or why it cannot. */
export interface RevertConflict {
  clientId: string;
  message: string;
  /** False when no flag can make it undoable (not the pipeline's to delete); `--skip-record` leaves it. */
  forcible: boolean;
}

export interface RevertPlan {
  plan: Plan;
  conflicts: RevertConflict[];
  /** Sentences for the report: what is not undone, and why. */
  notes: string[];
}

type Verdict = { kind: 'undo' } | { kind: 'as_before'; settle: boolean } | { kind: 'conflict'; conflict: RevertConflict };

export function buildRevertPlan(input: RevertInput): RevertPlan {
  const label = (field: string) => input.fieldLabels.get(field) ?? field;
  const items: PlanItem[] = [];
  const conflicts: RevertConflict[] = [];
  const left: string[] = [];
  const asBefore: string[] = [];
  let managedOnly = 0;
  const historyOf = groupByRecord(input.history);

  for (const entry of lastEntryPerRecord(input.entries)) {
    const { clientId } = entry;
    if (input.skip.has(clientId)) {
      left.push(clientId);
      continue;
    }
    const undo = parseUndoRecord(entry.undoJson)!;
    const remote = input.remote.get(clientId);
    if (remote === undefined) throw new Error(`${clientId} was not read back`);
    const verdict = judge(input, entry, undo, remote, historyOf.get(clientId) ?? [], label);
    if (verdict.kind === 'conflict') {
      conflicts.push(verdict.conflict);
      continue;
    }
    if (verdict.kind === 'as_before' && !verdict.settle) {
      asBefore.push(clientId);
      continue;
    }
    const item = undoItem(input, undo, remote, clientId, label, verdict.kind === 'as_before');
    if (item === null) {
      asBefore.push(clientId);
      continue;
    }
    if (item.action === 'create' && !undo.whole) managedOnly += 1;
    items.push(item);
  }

  const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);
  const notes: string[] = [`this run reverts run ${input.runId}: ${items.length} write${items.length === 1 ? '' : 's'} undone.`];
  if (managedOnly > 0) {
    notes.push(
      `${managedOnly} ${plural(managedOnly, 'record', 'records')} deleted by run ${input.runId} ${plural(managedOnly, 'is', 'are')} re-created from the last-applied values of the fields this pipeline manages: the run did not read ${plural(managedOnly, 'it', 'them')} before deleting, so fields it does not manage (set in the service by editors: a conflict of interest, notes) cannot be restored. \`policy.undo: exact\` reads records before deleting them.`,
    );
  }
  if (asBefore.length > 0) notes.push(`already as before run ${input.runId}, nothing to write: ${shown(asBefore)} (undone by an earlier revert of it, or never written).`);
  if (left.length > 0) notes.push(`left as ${plural(left.length, 'it is', 'they are')} (--skip-record): ${shown(left)}.`);

  const counts = { create: 0, update: 0, replace: 0, delete: 0, noop: 0 };
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

/** Whether the record is to be undone, already as before the run, or refused (and why). */
function judge(input: RevertInput, entry: JournalEntry, undo: UndoRecord, remote: HeldRecord | null, history: readonly JournalEntry[], label: (field: string) => string): Verdict {
  const { clientId } = entry;
  const forced = input.force.has(clientId);
  const conflict = (message: string, forcible = true): Verdict => ({ kind: 'conflict', conflict: { clientId, message: `${clientId}: ${message}`, forcible } });
  const confirmed = entry.state === 'done';
  if (!confirmed && !mayHaveWritten({ action: entry.action as 'create', state: entry.state, status: entry.status })) return { kind: 'as_before', settle: false };

  const later = laterWrite(history, entry, input.revertsOfRun);
  if (later && !forced) return conflict(`${later.action === 'delete' ? 'deleted' : 'written'} again by the later run ${later.runId}`);

  // Already what the service held before the run: done. A write of it left unconfirmed (the run's
  // own, or an earlier revert's) is sent again, to settle the journal; it changes nothing there.
  // So is a record the run created that is gone now but still in the inventory: its delete finds it gone and settles that.
  if (holds(remote, undo.before, undo.whole === true)) return { kind: 'as_before', settle: unconfirmedLast(history) || (remote === null && input.owned.has(clientId)) };
  const differing = differingFields(remote, undo.after, undo.whole === true);
  if (differing !== null && differing.length > 0 && !forced) {
    // Field names, not values: the message reaches logs and CI output, the values are roster data.
    const shownFields = differing.slice(0, 8).map(label).join(', ');
    return conflict(`changed in the service since the run${confirmed ? '' : ' (whose write was never confirmed)'}: ${shownFields}${differing.length > 8 ? ', …' : ''} no longer ${differing.length === 1 ? 'holds' : 'hold'} what the run wrote`);
  }
  // A record an update left that is gone since cannot be re-created from the few fields the update sent.
  const partialGone = remote === null && undo.before !== null && !undo.whole;
  if (differing === null && (!forced || partialGone)) {
    return conflict(remote === null ? 'deleted in the service since the run wrote it' : 'exists again in the service (re-created since the run deleted it)', !partialGone);
  }
  // Undone by a delete: only what the run created and the pipeline still owns.
  if (undo.before === null && remote !== null) {
    const refusal = deleteRefusal(input, entry, undo, confirmed);
    if (refusal) return conflict(refusal, false);
  }
  if (undo.before !== null && undo.from === 'unknown' && !forced && remote !== null) {
    return conflict(
      `the run did not read ${clientId} before writing it, and its plan could not vouch for the last-applied values (an earlier write of the record was never confirmed), so what the service held before is unknown. \`--force-record ${clientId}\` writes the last-applied values back; \`policy.undo: exact\` makes runs read records first`,
    );
  }
  return { kind: 'undo' };
}

/** Why a record the run created may not be deleted now; undefined when it may. */
function deleteRefusal(input: RevertInput, entry: JournalEntry, undo: UndoRecord, confirmed: boolean): string | undefined {
  if (undo.adopted) return undefined;
  const claimant = input.claims.get(entry.clientId);
  if (claimant !== undefined && claimant !== input.pipeline) return `pipeline "${claimant}" claims this record now, so revert does not delete it`;
  if (claimant === undefined) return 'no longer claimed by this pipeline (`state forget`, or the state moved with --release-owned), so revert never deletes it';
  if (confirmed && !input.owned.has(entry.clientId)) return 'no longer in the inventory (`state forget`), so revert never deletes it';
  return undefined;
}

/** The write that undoes one journaled write; null when nothing is left to write. */
function undoItem(input: RevertInput, undo: UndoRecord, remote: HeldRecord | null, clientId: string, label: (field: string) => string, settle: boolean): PlanItem | null {
  const change = (field: string, before: Fields[string] | undefined, after: Fields[string] | undefined, there: Fields[string] | undefined): FieldChange => ({
    field,
    label: label(field),
    ...(before !== undefined ? { before } : {}),
    ...(after !== undefined ? { after } : {}),
    ...(there !== undefined ? { remote: there } : {}),
  });
  const owned = input.owned.get(clientId);
  const held = remote === null ? null : wholeRecord(remote);
  const desiredOf = (record: Fields) => {
    const managed = input.managedFields.length > 0 ? projectFields(record, input.managedFields, input.setFields) : { ...(owned ?? {}), ...record };
    const json = canonicalJson(managed);
    return { fieldsJson: json, hash: hashJson(json) };
  };
  if (undo.before === null) {
    // The record was absent before the run: delete it (a delete of an absent record settles the journal).
    const current = held ?? undo.after ?? {};
    return { clientId, action: 'delete', reason: 'revert', held: remote, changes: Object.keys(current).map((field) => change(field, current[field], undefined, held?.[field])) };
  }
  if (held === null) {
    // The run deleted it: re-create it as it was (whole when the run read it first).
    const body = sentWhole(undo.before);
    return { clientId, action: 'create', reason: 'revert', held: null, body, desired: desiredOf(body), changes: Object.keys(body).map((field) => change(field, undefined, body[field], undefined)) };
  }
  // Write back every field the run changed, and only those: the values the service held before
  // (all of them again when the write only settles an unconfirmed journal entry).
  const fields = undo.whole ? [...new Set([...Object.keys(undo.before), ...Object.keys(undo.after ?? {})])] : Object.keys(undo.after ?? undo.before);
  const body: Fields = Object.fromEntries(fields.filter((field) => settle || !sameHeld(held[field], undo.before![field])).map((field) => [field, undo.before![field] ?? null]));
  if (Object.keys(body).length === 0) return null;
  return { clientId, action: 'update', reason: 'revert', held: remote, body, desired: desiredOf({ ...held, ...body }), changes: Object.keys(body).map((field) => change(field, held[field], body[field], held[field])) };
}

/** Whether the record read back holds `expected` (null: absent); on its fields only unless `whole`. */
function holds(remote: HeldRecord | null, expected: Fields | null, whole: boolean): boolean {
  const differing = differingFields(remote, expected, whole);
  return differing !== null && differing.length === 0;
}

/**
 * The fields in which the record read back differs from `expected` (every field when `whole`,
 * else those of `expected`); null when one is absent and the other is not.
 */
function differingFields(remote: HeldRecord | null, expected: Fields | null, whole: boolean): string[] | null {
  if (remote === null || expected === null) return remote === null && expected === null ? [] : null;
  const held = wholeRecord(remote);
  const fields = whole ? new Set([...Object.keys(held), ...Object.keys(expected)]) : new Set(Object.keys(expected));
  return [...fields].filter((field) => !sameHeld(held[field], expected[field]));
}

/** Equal as the service keeps them: absent, null and an empty list alike; a list in another order (options, e-mails) the same. */
function sameHeld(a: Fields[string] | undefined, b: Fields[string] | undefined): boolean {
  const sorted = (value: Fields[string] | undefined) => (Array.isArray(value) ? [...value].map(String).sort() : value);
  return sameValue(sorted(a) as Fields[string], sorted(b) as Fields[string]);
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

/** The latest write of the record journaled after `entry` by a run other than it and its reverts, that may have reached the service. */
function laterWrite(history: readonly JournalEntry[], entry: JournalEntry, revertsOfRun: ReadonlySet<string>): JournalEntry | undefined {
  let found: JournalEntry | undefined;
  for (const other of history) {
    if (other.id <= entry.id || other.runId === entry.runId || revertsOfRun.has(other.runId)) continue;
    if (other.state === 'abandoned') continue;
    if (other.state === 'done' || mayHaveWritten({ action: other.action as 'create', state: other.state, status: other.status })) found = other;
  }
  return found;
}

/** Whether the record's latest journaled write is unconfirmed (sent, or failed after it may have written). */
function unconfirmedLast(history: readonly JournalEntry[]): boolean {
  const last = history[history.length - 1];
  return last !== undefined && last.state !== 'done' && last.state !== 'abandoned' && mayHaveWritten({ action: last.action as 'create', state: last.state, status: last.status });
}

function shown(ids: readonly string[]): string {
  return `${ids.slice(0, 20).join(', ')}${ids.length > 20 ? `, … (${ids.length} in all)` : ''}`;
}
