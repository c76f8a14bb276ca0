/**
 * Second half of planning: turns the classification into actions, field-level changes, guards
 * and an estimate. Pure: data in, plan out (like changesets' assemble-release-plan); the new
 * records stay in their spool and become items as apply and the report read them. Values stay
 * as the service knows them (option api_ids); report/ shows them to people.
 */
import type { FieldValue } from '../mapping/types.js';
import type { PolicyConfig } from '../config/pipeline.js';
import { canonicalJson, hashJson, sameValue } from './canonical.js';
import type { Classification, ClassifiedRecord } from './classify.js';
import { evaluateGuards, type GuardInput } from './guards.js';
import type { NewRecords } from './new-records.js';
import type { FieldChange, Fields, Plan, PlanEstimate, PlanItem, PlanNewRecords, PlanNote, PlanReason, StateRepair } from './types.js';

export interface BuildPlanInput {
  classification: Classification;
  /** Last-applied fields of every changed, missing (and, refreshing all, unchanged) owned record. */
  lastApplied: ReadonlyMap<string, Fields>;
  /**
   * Remote records fetched with --refresh, projected on the managed fields; `null` when the
   * service answered 404 (deleted remotely). Absent keys were not fetched.
   */
  remote?: ReadonlyMap<string, Fields | null>;
  /** client_ids whose last write failed or never finished, with that write's action. */
  previouslyFailed: ReadonlyMap<string, 'create' | 'update' | 'delete'>;
  /**
   * The group may hold records this pipeline does not own (it did not create the group, or the
   * state was lost since): a client_id not in the inventory is written with create-if-absent, so
   * an existing record is adopted (managed fields only) instead of replaced.
   */
  createIfAbsent?: boolean;
  policy: Pick<PolicyConfig, 'mode' | 'update' | 'max_rps' | 'guards' | 'undo' | 'rejects'>;
  /** Human names of fields by key (custom fields by api_id). */
  fieldLabels: ReadonlyMap<string, string>;
  guardInput: Omit<GuardInput, 'deletes' | 'guards'>;
  /** The salt of the rows' keys, when the fast path computed them. */
  rowKeySalt?: string;
  /** Fields written other than `always` (the mapping's `write:`), by key. */
  seededFields?: Readonly<Record<string, 'on_create' | 'if_empty'>>;
  /** GETs of the drift check (sync/drift.ts): made before the writes by a real run, counted in the estimate. */
  driftReads?: number;
}

/** No value in the service: a field that is absent, null, an empty text or an empty list. */
export function isEmptyValue(value: FieldValue | undefined): boolean {
  return value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}

export function buildPlan(input: BuildPlanInput): Plan {
  const { classification, policy } = input;
  const label = (field: string) => input.fieldLabels.get(field) ?? field;
  const seeded = input.seededFields ?? {};
  const known = planKnownRecords(input, label, seeded);
  const missing = planMissingRecords(input, label);
  const items = [...known.items, ...missing.deletes];
  const { pairs, notes } = pairClientIdChanges({ items, orphans: missing.orphans, created: classification.created, previouslyFailed: input.previouslyFailed, lastApplied: input.lastApplied });
  const created = classification.created.count;
  const newRecords = created === 0 ? undefined : newRecordItems(classification.created, { pairs, previouslyFailed: input.previouslyFailed, createIfAbsent: input.createIfAbsent === true, label, seeded });

  // `policy.undo: exact`: updates and deletes read the record first (those written if_empty read it anyway).
  if (policy.undo === 'exact') for (const [i, item] of items.entries()) if (!readsAnyway(item)) items[i] = { ...item, readFirst: true };
  const counts = { create: created, update: 0, replace: 0, delete: 0, noop: known.noop };
  for (const item of items) counts[item.action] += 1;
  const upsertClientIdChanges = policy.mode === 'upsert' ? [...pairs].map(([to, from]) => ({ from, to })) : [];
  const guards = evaluateGuards({ ...input.guardInput, deletes: counts.delete, guards: policy.guards, upsertClientIdChanges, ...(policy.rejects ? { rejects: policy.rejects } : {}) });
  return {
    // Creates and updates go before deletes, so a failing run never leaves the group emptier than the roster.
    items: [...items.filter((i) => i.action !== 'delete'), ...items.filter((i) => i.action === 'delete')],
    ...(newRecords ? { newRecords } : {}),
    counts,
    orphans: missing.orphans,
    ...(Object.keys(missing.orphanNames).length > 0 ? { orphanNames: missing.orphanNames } : {}),
    stateRepairs: known.stateRepairs,
    ...(input.rowKeySalt !== undefined ? { rowKeySalt: input.rowKeySalt } : {}),
    guards,
    refused: guards.some((guard) => guard.tripped),
    estimate: estimateOf(items, { count: created, ifAbsent: input.createIfAbsent === true }, policy.max_rps, input.driftReads ?? 0),
    notes,
  };
}

type Label = (field: string) => string;
type Seeded = Readonly<Record<string, 'on_create' | 'if_empty'>>;

/**
 * The records the inventory knows that the roster still has (changed, and the unchanged ones
 * kept whole when refreshing all): a write each, or none (a noop, with a state repair when the
 * inventory does not hold what the service has). Unchanged records not kept are counted as noops.
 */
function planKnownRecords(input: BuildPlanInput, label: Label, seeded: Seeded): { items: PlanItem[]; stateRepairs: StateRepair[]; noop: number } {
  const { classification } = input;
  const items: PlanItem[] = [];
  const stateRepairs: StateRepair[] = [];
  let noop = classification.unchangedCount - classification.unchanged.length;
  for (const record of [...classification.changed, ...classification.unchanged]) {
    const planned = planKnownRecord(record, input, label, seeded);
    if ('action' in planned) items.push(planned);
    else {
      noop += 1;
      if (planned.repair) stateRepairs.push(planned.repair);
    }
  }
  return { items, stateRepairs, noop };
}

/** One known record: its write, or nothing to write (and perhaps a repair of the inventory). */
function planKnownRecord(item: ClassifiedRecord, input: BuildPlanInput, label: Label, seeded: Seeded): PlanItem | { repair?: StateRepair } {
  const { record } = item;
  const applied = input.lastApplied.get(record.clientId);
  const remoteFields = input.remote?.get(record.clientId);
  const retriedAction = input.previouslyFailed.get(record.clientId);
  const retried = retriedAction !== undefined;
  // Without a remote copy, the outcome of an unconfirmed write is unknown: a delete may have
  // removed the record, an update may have set values the inventory does not hold. So the
  // record is written again whole, even if the roster now matches the inventory.
  const uncertain = retried && remoteFields === undefined;

  // Deleted remotely, or perhaps deleted by an unconfirmed delete: a full POST recreates it.
  if (remoteFields === null || (uncertain && retriedAction === 'delete')) {
    return createItem(item, uncertain ? 'retry_failed' : 'remote_deleted', { applied, remoteFields, ifEmpty: [], label, seeded });
  }
  // Compare with the remote record when we have it (it may have drifted), else with the inventory.
  const baseline = remoteFields ?? applied ?? {};
  // A field skipped for an invalid value is not written: the record keeps, and the inventory
  // records, what the service has (or knows nothing of it).
  const kept = keepSkipped(item, baseline, input.fieldLabels);
  const desired = { fieldsJson: kept.fieldsJson, hash: kept.hash, ...(record.rowKey !== undefined ? { rowKey: record.rowKey } : {}) };
  const changed = uncertain ? Object.keys(record.fields) : Object.keys(record.fields).filter((field) => !sameValue(record.fields[field], baseline[field]));
  const { keptByPolicy, ifEmpty } = seededWrites(changed, record.fields, remoteFields, seeded);
  const sent = changed.filter((field) => !keptByPolicy.has(field));
  if (sent.length === 0) {
    // Apply adopts the repair, then stores the row key with the hash it now matches.
    const stale = applied === undefined || kept.hash !== hashJson(canonicalJson(applied));
    return stale ? { repair: { clientId: record.clientId, ...desired } } : {};
  }
  const drifted = remoteFields !== undefined && applied !== undefined && sent.some((f) => sameValue(applied[f], record.fields[f]));
  const reason: PlanReason = retried ? 'retry_failed' : drifted ? 'drift' : 'changed';
  const changes = changed.map((field) => {
    const entry = change(field, label, record.fields[field], applied?.[field], remoteFields);
    const write = seeded[field];
    return write === undefined ? entry : { ...entry, policy: write, ...(keptByPolicy.has(field) ? { kept: true } : {}) };
  });
  // `update: full` with a seeded field is refused by the pipeline's schema, so a replacing body
  // keeps only the values skipped as invalid (as the service has them).
  if (input.policy.update === 'full') return { clientId: record.clientId, action: 'replace', reason, body: withoutNulls(kept.fields), desired, changes, provenance: record.provenance };
  return { clientId: record.clientId, action: 'update', reason, body: pick(record.fields, sent), ...(ifEmpty.length > 0 ? { ifEmpty } : {}), desired, changes, provenance: record.provenance };
}

/**
 * Seeded fields of a record that exists: `on_create` is never written again; `if_empty` only
 * where the service holds no value (known with --refresh, else apply reads the record first).
 * Neither clears a value the roster no longer has.
 */
function seededWrites(changed: readonly string[], fields: Fields, remoteFields: Fields | undefined, seeded: Seeded): { keptByPolicy: Set<string>; ifEmpty: string[] } {
  const keptByPolicy = new Set<string>();
  const ifEmpty: string[] = [];
  for (const field of changed) {
    const write = seeded[field];
    if (write === undefined) continue;
    if (write === 'on_create' || isEmptyValue(fields[field])) keptByPolicy.add(field);
    else if (remoteFields !== undefined) {
      if (!isEmptyValue(remoteFields[field])) keptByPolicy.add(field);
    } else ifEmpty.push(field);
  }
  return { keptByPolicy, ifEmpty };
}

/** Owned records gone from the roster: deleted in mirror mode, kept as orphans (named as last applied) in upsert mode. */
function planMissingRecords(input: BuildPlanInput, label: Label): { deletes: PlanItem[]; orphans: string[]; orphanNames: Record<string, string> } {
  const { lastApplied, previouslyFailed } = input;
  const deletes: PlanItem[] = [];
  const orphans: string[] = [];
  const orphanNames: Record<string, string> = {};
  for (const clientId of input.classification.missing) {
    const applied = lastApplied.get(clientId);
    if (input.policy.mode === 'mirror') {
      deletes.push({
        clientId,
        action: 'delete',
        reason: previouslyFailed.has(clientId) ? 'retry_failed' : 'gone_from_roster',
        changes: applied ? Object.keys(applied).map((field) => change(field, label, undefined, applied[field], input.remote?.get(clientId))) : [],
      });
    } else {
      orphans.push(clientId);
      // Named as last applied, so an operator recognises the people a count would hide.
      const name = applied?.name;
      if (typeof name === 'string' && name !== '') orphanNames[clientId] = name;
    }
  }
  return { deletes, orphans, orphanNames };
}

/**
 * Every call the writes will make: one per item, and a second for each item apply reads first (a
 * GET): a create-if-absent (then a full POST when the record is absent, a partial POST when it
 * adopts it), an update with fields written if_empty whose remote copy the plan lacks, and under
 * `policy.undo: exact` every update and delete (read first so a revert restores it exactly). The
 * drift check's reads come before the writes, apart (`driftReads`), in the time too. rps 0:
 * no max_rps, the pace is found at run time, so no duration can be told beforehand.
 */
function estimateOf(items: readonly PlanItem[], created: { count: number; ifAbsent: boolean }, maxRps: number | undefined, driftReads: number): PlanEstimate {
  // Only new records are written create-if-absent: the creates in `items` recreate owned records.
  const ifAbsent = created.ifAbsent ? created.count : 0;
  const ifEmpty = items.filter(readsAnyway).length;
  const undoReads = items.filter((item) => item.readFirst).length;
  const calls = items.length + created.count + ifAbsent + ifEmpty + undoReads;
  return {
    calls,
    rps: maxRps ?? 0,
    seconds: maxRps ? (calls + driftReads) / maxRps : 0,
    ...(ifAbsent > 0 ? { ifAbsent } : {}),
    ...(ifEmpty > 0 ? { ifEmpty } : {}),
    ...(undoReads > 0 ? { undoReads } : {}),
    ...(driftReads > 0 ? { driftReads } : {}),
  };
}

/** An update with fields written if_empty: apply reads the record before it whatever the policy. */
function readsAnyway(item: PlanItem): boolean {
  return item.action === 'update' && (item.ifEmpty?.length ?? 0) > 0;
}

/** How each new record becomes a create, applied as the spool is read. */
interface NewRecordContext {
  /** Created client_id → the client_id it replaces (pairClientIdChanges). */
  pairs: ReadonlyMap<string, string>;
  previouslyFailed: ReadonlyMap<string, unknown>;
  createIfAbsent: boolean;
  label: (field: string) => string;
  seeded: Readonly<Record<string, 'on_create' | 'if_empty'>>;
}

/** The plan's new records: the spool's records made plan items a page at a time, never all at once. */
function newRecordItems(created: NewRecords, context: NewRecordContext): PlanNewRecords {
  const { pairs, previouslyFailed, createIfAbsent, label, seeded } = context;
  const itemOf = (item: ClassifiedRecord): PlanItem => {
    const { clientId } = item.record;
    const pairedWith = pairs.get(clientId);
    const reason: PlanReason = previouslyFailed.has(clientId) ? 'retry_failed' : pairedWith !== undefined ? 'client_id_changed' : 'new';
    // A record that may exist already keeps the values it holds in seeded fields: an adoption
    // sets them only where it has none. A record rostersync creates gets every field.
    const ifEmpty = createIfAbsent ? Object.keys(seeded).filter((field) => !isEmptyValue(item.record.fields[field])) : [];
    const planned = createItem(item, reason, { ifEmpty, label, seeded });
    return { ...planned, ...(createIfAbsent ? { ifAbsent: true } : {}), ...(pairedWith !== undefined ? { pairedWith } : {}) };
  };
  return {
    count: created.count,
    clientIds: () => created.clientIds(),
    *pages() {
      for (const page of created.read()) yield page.map(itemOf);
    },
  };
}

/**
 * A full POST of a record: new, deleted remotely, or perhaps deleted by an unconfirmed delete.
 * `applied` and `remoteFields` (owned records) show what it held; `ifEmpty` the seeded fields an
 * adoption writes only where the service holds no value.
 */
function createItem(
  item: ClassifiedRecord,
  reason: PlanReason,
  context: { applied?: Fields | undefined; remoteFields?: Fields | null | undefined; ifEmpty: string[]; label: (field: string) => string; seeded: Readonly<Record<string, 'on_create' | 'if_empty'>> },
): PlanItem {
  const { record } = item;
  const { ifEmpty, seeded } = context;
  return {
    clientId: record.clientId,
    action: 'create',
    reason,
    ...(ifEmpty.length > 0 ? { ifEmpty } : {}),
    body: withoutNulls(record.fields),
    desired: { fieldsJson: item.fieldsJson, hash: item.hash, ...(record.rowKey !== undefined ? { rowKey: record.rowKey } : {}) },
    changes: fieldChanges(record.fields, context.applied, context.remoteFields, context.label, true).map((entry) => (ifEmpty.includes(entry.field) ? { ...entry, policy: seeded[entry.field]! } : entry)),
    provenance: record.provenance,
  };
}

/**
 * A roster that changed a person's client_id shows up as one new and one missing record. They are
 * still a create plus a delete (the service keys records by client_id), but the report calls the
 * pair out: same ORCID, else same primary email. Returns each new client_id with the one it
 * replaces, and a note of each; the deletes of `items` are marked here (replaced in place by
 * their marked copies), the creates as the spool is read (newRecordItems).
 */
function pairClientIdChanges(input: {
  items: PlanItem[];
  orphans: readonly string[];
  created: NewRecords;
  previouslyFailed: ReadonlyMap<string, unknown>;
  lastApplied: ReadonlyMap<string, Fields>;
}): { pairs: Map<string, string>; notes: PlanNote[] } {
  const { items, lastApplied } = input;
  const pairs = new Map<string, string>();
  const notes: PlanNote[] = [];
  const goneByIdentity = new Map<string, { clientId: string; sameBy: IdentityKind }>();
  const gone = [...items.filter((i) => i.action === 'delete').map((i) => i.clientId), ...input.orphans];
  for (const clientId of gone) {
    const identity = identityOf(lastApplied.get(clientId));
    if (identity) goneByIdentity.set(identity.key, { clientId, sameBy: identity.kind });
  }
  // Nothing gone (every nightly run without deletes, every first sync): the spool is not read.
  if (goneByIdentity.size === 0) return { pairs, notes };
  const deleteAt = new Map(items.flatMap((item, index) => (item.action === 'delete' ? [[item.clientId, index] as const] : [])));
  for (const page of input.created.read()) {
    for (const { record } of page) {
      if (input.previouslyFailed.has(record.clientId)) continue;
      const identity = identityOf(record.fields);
      const previous = identity ? goneByIdentity.get(identity.key) : undefined;
      if (!previous) continue;
      pairs.set(record.clientId, previous.clientId);
      const index = deleteAt.get(previous.clientId);
      if (index !== undefined) items[index] = { ...items[index]!, reason: 'client_id_changed', pairedWith: record.clientId };
      notes.push({ code: 'client_id_changed', from: previous.clientId, to: record.clientId, sameBy: previous.sameBy, deleted: index !== undefined });
    }
  }
  return { pairs, notes };
}

type IdentityKind = 'orcid' | 'email';

/** The identity a changed client_id is recognised by: the first ORCID iD, else the first email. */
function identityOf(fields: Fields | undefined): { key: string; kind: IdentityKind } | undefined {
  if (!fields) return undefined;
  const orcid = firstOf(fields.orcids);
  if (orcid) return { key: `orcid:${orcid}`, kind: 'orcid' };
  const email = firstOf(fields.emails);
  return email ? { key: `email:${email.toLowerCase()}`, kind: 'email' } : undefined;
}

function firstOf(value: FieldValue | undefined): string | undefined {
  return Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
}

function fieldChanges(
  desired: Fields,
  applied: Fields | undefined,
  remote: Fields | null | undefined,
  label: (field: string) => string,
  onlyNonEmpty: boolean,
): FieldChange[] {
  return Object.keys(desired)
    .filter((field) => !onlyNonEmpty || !sameValue(desired[field], null) || (applied && !sameValue(applied[field], null)))
    .map((field) => change(field, label, desired[field], applied?.[field], remote));
}

function change(field: string, label: (field: string) => string, after: FieldValue | undefined, before: FieldValue | undefined, remote: Fields | null | undefined): FieldChange {
  const entry: FieldChange = { field, label: label(field), before, after };
  if (remote !== undefined) entry.remote = remote === null ? undefined : (remote[field] ?? null);
  return entry;
}

/**
 * The fields of an updated record as the inventory is to record them: the roster's, and for each
 * field the mapping skipped (`on_invalid: skip_value`) the value the service keeps, when known
 * (`baseline`: the remote record, else the last applied fields); an unknown one is left out, so the
 * inventory never claims a value the service may not hold. In the mapping's field order.
 */
function keepSkipped(item: ClassifiedRecord, baseline: Fields, order: ReadonlyMap<string, string>): { fields: Fields; fieldsJson: string; hash: string } {
  const { record } = item;
  if (!record.skipped) return { fields: record.fields, fieldsJson: item.fieldsJson, hash: item.hash };
  const fields: Fields = {};
  for (const key of order.keys()) {
    if (key in record.fields) fields[key] = record.fields[key]!;
    else if (record.skipped.includes(key) && key in baseline) fields[key] = baseline[key]!;
  }
  // Every field the roster gives is kept, even one `order` does not name.
  for (const [key, value] of Object.entries(record.fields)) if (!(key in fields)) fields[key] = value;
  const fieldsJson = canonicalJson(fields);
  return { fields, fieldsJson, hash: hashJson(fieldsJson) };
}

function pick(fields: Fields, keys: string[]): Fields {
  const body: Fields = {};
  for (const key of keys) body[key] = fields[key] ?? null;
  return body;
}

/** A full POST nulls whatever it omits, so nulls need not be sent. */
function withoutNulls(fields: Fields): Fields {
  const body: Fields = {};
  for (const [key, value] of Object.entries(fields)) if (value !== null && value !== undefined) body[key] = value;
  return body;
}
