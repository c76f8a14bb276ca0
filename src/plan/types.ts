/**
 * The plan's vocabulary: a closed set of actions (Terraform's + ~ - and no-op), the field-level
 * changes, the guards' verdicts and the outcomes apply gives each item.
 *
 * One zod schema per shape gives both the TypeScript type and the check of a saved plan file
 * (`rostersync plan --out`, read back by `rostersync apply`). The plan holds data only: labels,
 * sentences and estimates in words are rendered by `report/`.
 */
import { z } from 'zod';
import type { FieldValue } from '../mapping/types.js';

/**
 * `update` sends the changed fields (a partial POST); `replace` sends the whole record (a full
 * POST, `policy.update: full`), so fields it leaves out become empty in the service.
 */
export const planActionSchema = z.enum(['create', 'update', 'replace', 'delete', 'noop']);
export type PlanAction = z.infer<typeof planActionSchema>;

/**
 * What a write does to the record, as the journal, the state's run counts and the report's counts
 * keep it: a replace rewrites a record that exists, so it is an update there.
 */
export type RecordChange = 'create' | 'update' | 'delete';
export function recordChangeOf(action: Exclude<PlanAction, 'noop'>): RecordChange {
  return action === 'replace' ? 'update' : action;
}

/** What became of a planned item: `planned` in a dry run, `skipped` when the run stopped first. */
export const recordOutcomeSchema = z.enum(['done', 'failed', 'skipped', 'planned']);
export type RecordOutcome = z.infer<typeof recordOutcomeSchema>;

const fieldValueSchema: z.ZodType<FieldValue> = z.union([z.string(), z.number(), z.array(z.string()), z.null()]);
export const fieldsSchema = z.record(z.string(), fieldValueSchema);
export type Fields = Record<string, FieldValue>;

const provenanceSchema = z.strictObject({ file: z.string(), sheet: z.string().optional(), row: z.number().int() });

/** One managed field that changes: roster value, last applied value and (with --refresh) remote value. */
export const fieldChangeSchema = z.strictObject({
  field: z.string(),
  /** Human name of the field (custom fields: the name shown in the service's UI). */
  label: z.string(),
  before: fieldValueSchema.optional(),
  after: fieldValueSchema.optional(),
  /** Present when the remote record was fetched (--refresh). `undefined` means not fetched. */
  remote: fieldValueSchema.optional(),
  /** The field's `write:` policy, when it is not `always` (docs/mapping.md, "Fields that are only seeded"). */
  policy: z.enum(['on_create', 'if_empty']).optional(),
  /** The roster's value is not written, by that policy: the service keeps its own. */
  kept: z.boolean().optional(),
});
export type FieldChange = z.infer<typeof fieldChangeSchema>;

const count = z.number().int();

/**
 * What a guard found, by code (a closed set), with the figures report/ puts in a sentence
 * (report/plan-text.ts). `client_ids_changed` is the identity_changes guard in upsert mode: the
 * same people under new client_ids, which would be in the group twice.
 */
export const guardFindingSchema = z.discriminatedUnion('code', [
  z.strictObject({ code: z.literal('empty_source'), owned: count }),
  z.strictObject({ code: z.literal('max_deletes'), deletes: count, limit: count, maxDeletes: count, maxDeletePercent: z.number(), owned: count }),
  z.strictObject({ code: z.literal('unreadable_rows'), unidentified: count, deletes: count }),
  z.strictObject({ code: z.literal('source_drop'), valid: count, previousValid: count, dropPercent: z.number(), maxDropPercent: z.number() }),
  z.strictObject({
    code: z.literal('identity_changes'),
    changes: count,
    limit: count,
    maxChanges: count,
    maxChangePercent: z.number(),
    owned: count,
    /** The first few: the record, its last-applied name and the roster's (personal data). */
    examples: z.array(z.strictObject({ clientId: z.string(), before: z.string(), after: z.string() })),
  }),
  z.strictObject({ code: z.literal('client_ids_changed'), changes: count, limit: count, examples: z.array(z.strictObject({ from: z.string(), to: z.string() })) }),
  z.strictObject({ code: z.literal('rejects'), rejected: count, considered: count, percent: z.number(), maxCount: count.optional(), maxPercent: z.number().optional() }),
  z.strictObject({ code: z.literal('inventory_missing') }),
]);
export type GuardFinding = z.infer<typeof guardFindingSchema>;
export type GuardCode = GuardFinding['code'];

export const guardResultSchema = z.strictObject({
  guard: z.enum(['max_deletes', 'source_drop', 'empty_source', 'unreadable_rows', 'inventory_missing', 'identity_changes', 'rejects']),
  tripped: z.boolean(),
  found: guardFindingSchema,
  /** The exact flag or setting that would allow the run. */
  allowWith: z.string().optional(),
});
export type GuardResult = z.infer<typeof guardResultSchema>;

/**
 * What planning noticed that the report tells people, by code (a closed set), with its data.
 * `client_id_changed`: a new client_id with the same ORCID iD (or email) as an owned record gone
 * from the roster; `deleted`: the old record is deleted (mirror mode), else it stays as an orphan.
 */
export const planNoteSchema = z.discriminatedUnion('code', [
  z.strictObject({ code: z.literal('client_id_changed'), from: z.string(), to: z.string(), sameBy: z.enum(['orcid', 'email']), deleted: z.boolean() }),
]);
export type PlanNote = z.infer<typeof planNoteSchema>;

/** Why an action was planned; shown in reports. */
export const planReasonSchema = z.enum(['new', 'changed', 'retry_failed', 'drift', 'remote_deleted', 'gone_from_roster', 'client_id_changed', 'revert']);
export type PlanReason = z.infer<typeof planReasonSchema>;

export const planItemSchema = z.strictObject({
  clientId: z.string().min(1),
  action: planActionSchema.exclude(['noop']),
  reason: planReasonSchema,
  /** Request body: the full record for a create or a replace, only the changed fields for an update. */
  body: fieldsSchema.optional(),
  /**
   * Create-if-absent, for a client_id the pipeline does not own in a group it did not create: a
   * GET first (the same read `ifEmpty` needs); a record that exists is adopted (a partial POST of
   * its managed fields, its other fields kept, the values it replaced reported), a full POST only
   * when the service answers 404.
   */
  ifAbsent: z.boolean().optional(),
  /**
   * Fields of `body` to send only where the service's record holds no value (`write: if_empty`,
   * and `on_create` on an adoption): apply reads the record first and leaves out the others.
   */
  ifEmpty: z.array(z.string()).optional(),
  /**
   * Read the record before writing it (`policy.undo: exact`): the journal keeps the whole record
   * the service held, so `rostersync revert` restores it exactly. One GET more.
   */
  readFirst: z.boolean().optional(),
  /**
   * The whole record as the service held it when this plan read it (a revert reads every record
   * back); null: absent. Apply journals it as the values to restore and reads nothing again.
   */
  held: z.record(z.string(), z.unknown()).nullable().optional(),
  /** What the inventory records once the write succeeds (all managed fields, canonical). */
  desired: z.strictObject({ fieldsJson: z.string(), hash: z.string(), rowKey: z.string().optional() }).optional(),
  changes: z.array(fieldChangeSchema),
  provenance: provenanceSchema.optional(),
  /** For a client_id change: the other client_id of the delete + create pair. */
  pairedWith: z.string().optional(),
});
export type PlanItem = z.infer<typeof planItemSchema>;

/**
 * Inventory corrections that need no call (the remote already matches the roster), with the row
 * key to store once the record holds `hash`, when its row has one.
 */
export const stateRepairSchema = z.strictObject({ clientId: z.string(), fieldsJson: z.string(), hash: z.string(), rowKey: z.string().optional() });
export type StateRepair = z.infer<typeof stateRepairSchema>;

/**
 * The row key of an unchanged record whose row was mapped (the inventory did not know the key):
 * stored so the next run takes that row's fast path, only while the record still has `hash`.
 * Needs no call. Not part of the plan (src/plan/row-key-repairs.ts).
 */
export interface RowKeyRepair {
  clientId: string;
  rowKey: string;
  hash: string;
}

export const planCountsSchema = z.strictObject({ create: z.number().int(), update: z.number().int(), replace: z.number().int(), delete: z.number().int(), noop: z.number().int() });
export type PlanCounts = z.infer<typeof planCountsSchema>;

/** Calls the plan needs and the time they take at the configured rate (report/ puts it in words). */
export const planEstimateSchema = z.strictObject({
  /** Every call the writes make, those read first (`ifAbsent`, `ifEmpty`) counted twice. */
  calls: z.number(),
  rps: z.number(),
  seconds: z.number(),
  /** Creates sent as create-if-absent: a GET, then a full POST (absent) or a partial POST (adopted). */
  ifAbsent: z.number().optional(),
  /** Updates with fields written if_empty, the record not read by the plan: a GET, then the write. */
  ifEmpty: z.number().optional(),
  /** GETs of the drift check (sample and rotating window), made before the writes; not in `calls`. */
  driftReads: z.number().optional(),
  /** Updates and deletes read first for `policy.undo: exact`: a GET, then the write. */
  undoReads: z.number().optional(),
});
export type PlanEstimate = z.infer<typeof planEstimateSchema>;

export const planSchema = z.strictObject({
  items: z.array(planItemSchema),
  counts: planCountsSchema,
  /** Owned records gone from the roster that upsert mode keeps. */
  orphans: z.array(z.string()),
  /** The last-applied name of each orphan the inventory names. */
  orphanNames: z.record(z.string(), z.string()).optional(),
  stateRepairs: z.array(stateRepairSchema),
  /** The name of the salt of the row keys this plan's writes store (none without the fast path): apply records it (StateStore.rowKeySalt). */
  rowKeySalt: z.string().optional(),
  guards: z.array(guardResultSchema),
  /** True when a tripped guard refuses the run. */
  refused: z.boolean(),
  estimate: planEstimateSchema,
  notes: z.array(planNoteSchema),
});
/**
 * The records a plan creates because the inventory does not know them, read a page at a time
 * (plan/new-records.ts): a first sync of a million rows cannot hold them as items. They come
 * before `items`; a saved plan file holds them in `items` (`materialized`).
 */
export interface PlanNewRecords {
  readonly count: number;
  clientIds(): Iterable<string>;
  pages(): Iterable<PlanItem[]>;
}

export type Plan = z.infer<typeof planSchema> & { newRecords?: PlanNewRecords };

/** Every item of a plan in the order apply writes them: the new records, then `items`. */
export function* planItems(plan: Pick<Plan, 'items' | 'newRecords'>): Generator<PlanItem> {
  for (const page of plan.newRecords?.pages() ?? []) yield* page;
  yield* plan.items;
}

/** How many items the plan holds, new records included. */
export function planItemCount(plan: Pick<Plan, 'items' | 'newRecords'>): number {
  return plan.items.length + (plan.newRecords?.count ?? 0);
}

/** The plan with every item in `items`, as a plan file holds it (the new records read into memory). */
export function materialized(plan: Plan): Plan {
  const { newRecords, ...rest } = plan;
  return newRecords ? { ...rest, items: [...planItems(plan)] } : plan;
}
