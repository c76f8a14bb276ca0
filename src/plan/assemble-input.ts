/**
 * The plan's input, assembled from what the gather phase read (sync/gather.ts), pure: every
 * decision between reading and planning is made here, in the order gather needs them (the
 * changesets split of get-release-plan, which reads, apart from assemble-release-plan, which
 * decides). Gather calls these between its reads, hands over what it read, and changes nothing
 * itself: which configurations refuse, whether the fast path runs, which roster records are left
 * as they are, which owned records count as missing, whether the drift check reads and what,
 * and the plan's input itself (drifted records planned again, `--max-rps` over the policy, the
 * guards' facts).
 */
import type { PolicyConfig } from '../config/pipeline.js';
import { ConfigError } from '../errors/config-error.js';
import type { CompiledMapping } from '../mapping/compile.js';
import type { RosterSummary } from '../mapping/roster.js';
import type { UnfinishedWrite } from '../state/backend.js';
import type { BuildPlanInput } from './build.js';
import type { Classification } from './classify.js';
import { guardInputOf, type GuardAllowances } from './guards.js';
import { identityChangesOf } from './identity-changes.js';
import type { ClassifiedRecord } from './new-records.js';
import { ownMissing, type ForeignReason } from './ownership.js';
import type { Fields } from './types.js';
import { unfinishedAsMissing } from './unfinished.js';

/**
 * A full POST replaces the whole record: it would overwrite the values that fields written
 * `on_create` or `if_empty` keep. Refused before the roster is read.
 */
export function refuseFullUpdateOfSeededFields(pipelineFile: string, update: PolicyConfig['update'], compiled: Pick<CompiledMapping, 'seededFields' | 'fieldNames'>): void {
  const seeded = Object.keys(compiled.seededFields);
  if (update !== 'full' || seeded.length === 0) return;
  throw new ConfigError(pipelineFile, [{ path: 'policy.update', message: `full updates replace whole records, so they cannot keep the service's values of fields written on_create or if_empty (${seeded.map((field) => compiled.fieldNames[field] ?? field).join(', ')})` }], {
    hint: 'Use policy.update: partial (the default), or write: always on those fields.',
  });
}

/**
 * The plan's fast path (a row whose key the inventory holds is its record, unchanged, and is not
 * mapped): off with `--no-fast-path`, with --refresh (the remote decides), and on a shared group
 * (each row's claim is checked).
 */
export function fastPathAllowed(request: { fastPath: boolean; refresh: false | 'planned' | 'all' }, binding: { sharedPrefixes: readonly string[] | null; sharedWith: readonly string[] }): boolean {
  return request.fastPath && !request.refresh && !binding.sharedPrefixes && binding.sharedWith.length === 0;
}

/**
 * In the roster but not to be written: rows rejected for their values, duplicated ids (with
 * `duplicate_client_ids: reject`), and records another pipeline owns. The same-person check may
 * add to it (sync/duplicate-people-check.ts).
 */
export function keptAsIs(roster: Pick<RosterSummary, 'rejectedClientIds' | 'duplicateClientIds'>, duplicatePolicy: CompiledMapping['duplicatePolicy'], foreign: ReadonlyMap<string, ForeignReason>): Set<string> {
  const keep = new Set(roster.rejectedClientIds);
  if (duplicatePolicy === 'reject') for (const clientId of roster.duplicateClientIds) keep.add(clientId);
  for (const clientId of foreign.keys()) keep.add(clientId);
  return keep;
}

/**
 * The owned records the run counts as gone from the roster, from the classifier's list:
 * - never a deletion from a suspicion: an owned record whose new client_id is held back as the
 *   same person (`pendingRenames`) stays;
 * - on a shared group, a record another pipeline has claimed since is its own (`claims`: the
 *   claims of the classifier's missing records), and is added to `foreign`;
 * - unfinished writes that may have happened count as missing (plan/unfinished.ts).
 * Returns a new classification and `foreign` with the claimed records added.
 */
export function settleMissing(input: {
  classification: Classification;
  pendingRenames: ReadonlyMap<string, unknown>;
  /** The claims of `classification.missing` on a shared group; absent when the group is not shared. */
  claims?: ReadonlyMap<string, string> | undefined;
  pipeline: string;
  foreign: ReadonlyMap<string, ForeignReason>;
  unfinished: ReadonlyMap<string, UnfinishedWrite>;
  inRoster: (clientId: string) => boolean;
  keptAsIs: ReadonlySet<string>;
  /** Whether the inventory holds a client_id (a lookup, asked only of unfinished writes). */
  owned: (clientId: string) => boolean;
}): { classification: Classification; foreign: Map<string, ForeignReason> } {
  const foreign = new Map(input.foreign);
  let missing = input.classification.missing;
  if (input.pendingRenames.size > 0) missing = missing.filter((clientId) => !input.pendingRenames.has(clientId));
  if (input.claims) missing = ownMissing(missing, input.claims, input.pipeline, foreign);
  missing = [...missing, ...unfinishedAsMissing(input.unfinished, { inRoster: input.inRoster, keptAsIs: (id) => input.keptAsIs.has(id), owned: input.owned })];
  return { classification: { ...input.classification, missing }, foreign };
}

/** Which owned records the plan needs the last-applied fields of: changed, missing and kept unchanged. */
export function lastAppliedNeeded(classification: Classification): string[] {
  return [...classification.changed.map((c) => c.record.clientId), ...classification.missing, ...classification.unchanged.map((c) => c.record.clientId)];
}

/** What the drift check (sync/drift.ts) does in this run. */
export interface DriftCheckPlan {
  /** Count the reads a real run would make, for the estimate. */
  count: boolean;
  /**
   * Read back: `window-and-sample` in real syncs; `sample` in dry runs, for its one verdict that
   * stops a run (the group is gone), planning nothing from it; none otherwise.
   */
  read: 'window-and-sample' | 'sample' | undefined;
}

/**
 * The drift check of real runs (`driftCheck: 'read'`); --refresh reads more than it would. A dry
 * run or a plan counts (`'count'`) what a real run would read; dry runs (`groupProbe`) also read the
 * random sample, not the rotating window. Nothing to check without a known group or owned records.
 */
export function driftCheckPlan(input: {
  driftCheck: 'read' | 'count' | undefined;
  groupProbe: boolean;
  refresh: false | 'planned' | 'all';
  groupKnown: boolean;
  policy: Pick<PolicyConfig, 'drift_sample' | 'drift_cycle'>;
  ownedCount: number;
}): DriftCheckPlan | undefined {
  const { policy } = input;
  if (!(input.driftCheck || input.groupProbe) || input.refresh || !input.groupKnown || !(policy.drift_sample > 0 || policy.drift_cycle > 0) || input.ownedCount === 0) return undefined;
  const read = input.driftCheck === 'read' ? 'window-and-sample' : input.groupProbe && policy.drift_sample > 0 ? 'sample' : undefined;
  return { count: input.driftCheck === 'count', read };
}

/** Records the plan does not take as unchanged (created, changed, left as they are, unfinished): the drift check reads none of them. */
export function notUnchanged(classification: Classification, keepAsIs: ReadonlySet<string>, unfinished: ReadonlyMap<string, unknown>): Set<string> {
  const ids = new Set([...classification.created.clientIds(), ...classification.changed.map((item) => item.record.clientId)]);
  for (const clientId of keepAsIs) ids.add(clientId);
  for (const clientId of unfinished.keys()) ids.add(clientId);
  return ids;
}

/** What gather read, for the plan. */
export interface GatheredFacts {
  classification: Classification;
  /** Last-applied fields of `lastAppliedNeeded(classification)`. */
  lastApplied: ReadonlyMap<string, Fields>;
  /** Records fetched with --refresh. */
  remote?: ReadonlyMap<string, Fields | null> | undefined;
  /** Records the drift check found drifted, as the inventory holds them, and their remote copies. */
  drifted?: { recheck: readonly ClassifiedRecord[]; remote: ReadonlyMap<string, Fields | null> } | undefined;
  /** GETs the drift check made or would make. */
  driftReads: number;
  unfinished: ReadonlyMap<string, UnfinishedWrite>;
  createIfAbsent: boolean;
  policy: PolicyConfig;
  /** `--max-rps`. */
  maxRps?: number | undefined;
  compiled: Pick<CompiledMapping, 'fieldNames' | 'seededFields'>;
  rowKeySalt?: string | undefined;
  roster: Pick<RosterSummary, 'counts' | 'unidentifiedRejected'>;
  ownedCount: number;
  /** Valid records of the last successful run; null without one. */
  previousValidCount: number | null;
  groupKnown: boolean;
  allow: GuardAllowances;
}

export function assemblePlanInput(facts: GatheredFacts): BuildPlanInput {
  const { policy, roster, compiled } = facts;
  // Owned records whose row now describes someone else (the identity-change guard).
  const identityChanges = identityChangesOf(facts.classification.changed, facts.lastApplied);
  let { classification, lastApplied, remote } = facts;
  // Drifted records are planned again against their remote copy, as --refresh plans them.
  if (facts.drifted && facts.drifted.recheck.length > 0) {
    const { recheck } = facts.drifted;
    classification = { ...classification, unchanged: [...classification.unchanged, ...recheck] };
    lastApplied = new Map([...lastApplied, ...recheck.map((item) => [item.record.clientId, item.record.fields] as const)]);
    remote = facts.drifted.remote;
  }
  const seeded = Object.keys(compiled.seededFields).length > 0;
  return {
    classification,
    lastApplied,
    ...(remote ? { remote } : {}),
    previouslyFailed: new Map([...facts.unfinished].map(([clientId, write]) => [clientId, write.action])),
    createIfAbsent: facts.createIfAbsent,
    policy: { ...policy, max_rps: facts.maxRps ?? policy.max_rps },
    fieldLabels: new Map(Object.entries(compiled.fieldNames)),
    ...(seeded ? { seededFields: compiled.seededFields } : {}),
    ...(facts.rowKeySalt !== undefined ? { rowKeySalt: facts.rowKeySalt } : {}),
    ...(facts.driftReads > 0 ? { driftReads: facts.driftReads } : {}),
    guardInput: guardInputOf({
      ownedCount: facts.ownedCount,
      validCount: roster.counts.valid,
      previousValidCount: facts.previousValidCount,
      groupKnown: facts.groupKnown,
      unidentifiedRejected: roster.unidentifiedRejected,
      identityChanges,
      rosterCounts: roster.counts,
      allow: facts.allow,
    }),
  };
}
