/**
 * Gathers the plan's input: the only phase before apply that does I/O (the changesets split of
 * get-release-plan apart from the pure assemble-release-plan: plan/assemble-input.ts makes every
 * decision). It reads the custom-fields listing, compiles the mapping, streams the roster through
 * the mapping into the classifier against the inventory, and, with --refresh or the drift check,
 * reads remote records. It writes nothing, neither to the service nor to the state: what a run
 * learns while gathering (a group the drift check found gone) is written by the run
 * (sync/run-sync.ts).
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ServiceClient } from '../client/client.js';
import type { CustomFieldsListing } from '../client/schemas.js';
import type { ResolvedPipeline } from '../config/load.js';
import type { PolicyConfig } from '../config/pipeline.js';
import { compileMapping, type CompiledMapping } from '../mapping/compile.js';
import { mapRoster, type FastPath, type RosterSummary } from '../mapping/roster.js';
import { rowKeyOf, rowKeySalt, rowKeySaltName } from '../mapping/row-key.js';
import { KnownRows } from '../plan/known-rows.js';
import type { DesiredRecord } from '../mapping/types.js';
import { assemblePlanInput, driftCheckPlan, fastPathAllowed, keptAsIs, lastAppliedNeeded, notUnchanged, refuseFullUpdateOfSeededFields, settleMissing, type DriftCheckPlan } from '../plan/assemble-input.js';
import type { BuildPlanInput } from '../plan/build.js';
import { RosterClassifier } from '../plan/classify.js';
import type { RowKeyRepairs } from '../plan/row-key-repairs.js';
import type { NewRecords } from '../plan/new-records.js';
import type { RunReport } from '../report/types.js';
import { openSource, sha256File } from '../sources/index.js';
import { overlayOpeners } from '../sources/overlays.js';
import type { OpenedSource } from '../sources/types.js';
import { FAST_PATH_BATCHES_AHEAD, openSourceInWorker, WORKER_READ_MIN_BYTES } from '../sources/read-in-worker.js';
import { DuplicatePeopleFinder } from '../mapping/duplicate-people.js';
import { DuplicateProbe } from '../mapping/duplicate-probe.js';
import { checkBinding, type BindingCheck } from '../state/binding.js';
import type { StateBackend, UnfinishedWrite } from '../state/backend.js';
import { foreignReason, type ForeignReason } from '../plan/ownership.js';
import { driftCheckSkippedNote, driftNote, foreignNote, REFRESH_WITHOUT_GROUP_NOTE } from '../report/run-notes.js';
import { checkDuplicatePeople } from './duplicate-people-check.js';
import { checkDrift, GroupGoneError, pickDriftReads, type DriftFound } from './drift.js';
import type { DriftWindowState } from './drift-window.js';
import { groupCheckNote } from './group-check.js';
import { fetchRemote } from './remote-records.js';
import { readFieldListing } from './field-listing.js';
import type { PlanRequest } from './run-request.js';

export interface GatheredInput {
  planInput: BuildPlanInput;
  roster: RosterSummary;
  source: RunReport['source'];
  /** The inventory's serial read before planning: a saved plan is bound to it. */
  stateSerial: number;
  groupId: number | null;
  /** Option labels by option api_id, for the report. */
  optionLabels: Map<string, string>;
  notes: string[];
  /** What the drift check found (real syncs only). */
  drift?: RunReport['drift'];
  /** Where the drift check's window starts next: saved once the run's writes were all attempted (sync/run-plan.ts). */
  nextDriftWindow?: DriftWindowState;
}

export interface GatherInput {
  pipeline: ResolvedPipeline;
  store: StateBackend;
  client: ServiceClient;
  request: PlanRequest;
  /** Receives the row keys the plan's apply is to store (the fast path's repairs). */
  rowKeys?: RowKeyRepairs;
  /** Receives the new records. The caller (sync/run-context.ts) lets go of both once the run is over. */
  created?: NewRecords;
  /**
   * The drift check (sync/drift.ts): `read` back unchanged records in real syncs only, not in plans
   * nor `apply plan.json`, whose plan must not change; `count` them for the estimate of a dry run
   * whose real run would read them (not a saved plan: `apply` reads none).
   */
  driftCheck?: 'read' | 'count';
  /**
   * Dry runs (`plan`, `--dry-run`): read back a few roster records of a group nothing is owned in
   * yet, to name a group_id the service may not know, and the drift sample of a group with owned
   * records, for its one verdict that stops a run (the group is gone). A real run's first write settles it.
   */
  groupProbe?: boolean;
}

export async function gatherPlanInput(input: GatherInput): Promise<GatheredInput> {
  const { pipeline, store, client, request } = input;
  const policy = pipeline.config.policy;
  // Before any call: a state bound to another service or group is never used against this one.
  const binding = checkBinding(store, pipeline, { baseUrl: request.baseUrl, createGroup: request.createGroup });
  const groupId = binding.groupId;
  const listing = await readFieldListing(client, request);
  const compiled = compileMapping(pipeline.mapping, listing, { mappingFile: pipeline.mappingFile });
  refuseFullUpdateOfSeededFields(pipeline.file, policy.update, compiled);

  const read = await readRoster({ ...input, binding, listing, compiled });
  const { roster, opened, unfinished, ownedCount } = read;
  const notes = [...read.notes];
  const keepAsIs = keptAsIs(roster, compiled.duplicatePolicy, read.foreign);
  const samePerson = checkDuplicatePeople({ people: read.people, probe: read.probe, store, ...(read.newIds ? { newIds: read.newIds } : {}), roster, sourceFile: opened.file, keepAsIs, policy: policy.duplicate_people });
  notes.push(...samePerson.notes);
  const finished = read.classifier.finish(roster.firstRowById, { count: ownedCount, ids: () => store.ownedIds() }, keepAsIs);
  const settled = settleMissing({
    classification: finished,
    pendingRenames: samePerson.pendingRenames,
    claims: read.shared ? store.claimOwners(read.shared, finished.missing) : undefined,
    pipeline: pipeline.name,
    foreign: read.foreign,
    unfinished,
    inRoster: (id) => roster.firstRowById.has(id),
    keptAsIs: keepAsIs,
    owned: (id) => store.getOwned(id) !== undefined,
  });
  const { classification } = settled;
  const foreignText = foreignNote(settled.foreign);
  if (foreignText) notes.push(foreignText);

  const needApplied = lastAppliedNeeded(classification);
  const lastApplied = store.lastApplied(needApplied);
  const call = request.signal ? { signal: request.signal } : {};
  const remote = request.refresh && groupId !== null ? await fetchRemote({ client, groupId, managedFields: compiled.managedFields, setFields: compiled.setFields, clientIds: needApplied, call, concurrency: 8 }) : undefined;
  if (request.refresh && groupId === null) notes.push(REFRESH_WITHOUT_GROUP_NOTE);
  // A group nothing is owned in yet (a pinned group_id, `state set-group`): is it there at all?
  if (input.groupProbe && groupId !== null && ownedCount === 0 && !request.refresh) {
    const note = await groupCheckNote({ client, groupId, clientIds: classification.created.clientIds(), call, pipelineFile: pipeline.file });
    if (note) notes.push(note);
  }
  const driftPlan = driftCheckPlan({ driftCheck: input.driftCheck, groupProbe: input.groupProbe === true, refresh: request.refresh, groupKnown: groupId !== null, policy, ownedCount });
  const drift = driftPlan && groupId !== null ? await readDrift({ plan: driftPlan, store, client, groupId, policy, request, ownedCount, roster, compiled, sourceFile: opened.file, notUnchanged: notUnchanged(classification, keepAsIs, unfinished), notes }) : { driftReads: 0 };

  const planInput = assemblePlanInput({
    classification,
    lastApplied,
    remote,
    drifted: drift.found,
    driftReads: drift.driftReads,
    unfinished,
    createIfAbsent: binding.createIfAbsent,
    policy,
    maxRps: request.maxRps,
    compiled,
    rowKeySalt: read.saltName,
    roster,
    ownedCount,
    previousValidCount: store.lastSuccessfulRun()?.validRecords ?? null,
    groupKnown: groupId !== null,
    allow: request.allow,
  });
  return {
    planInput,
    roster,
    source: { file: opened.file, sha256: await read.sourceSha256, format: opened.format, ...(opened.sheet ? { sheet: opened.sheet } : {}) },
    stateSerial: read.stateSerial,
    groupId,
    ...(drift.found ? { drift: driftReport(drift.found) } : {}),
    ...(drift.found?.nextWindow ? { nextDriftWindow: drift.found.nextWindow } : {}),
    optionLabels: new Map(listing.author_from_group.flatMap((field) => (field.options ?? []).map((option) => [option.api_id, option.option] as const))),
    notes,
  };
}

/** What reading the roster against the inventory gave. */
interface RosterRead {
  opened: OpenedSource;
  roster: RosterSummary;
  classifier: RosterClassifier;
  /** Roster rows another pipeline owns, with why. */
  foreign: Map<string, ForeignReason>;
  /** The group, when other pipelines share it. */
  shared: { baseUrl: string; groupId: number } | null;
  /** Identities of the mapped rows, and which of them the inventory lacks: the same person twice. */
  people: DuplicatePeopleFinder;
  /** The mapped rows' identities, for the check of a nightly run's few new rows (mapping/duplicate-probe.ts). */
  probe: DuplicateProbe;
  newIds: Set<string> | undefined;
  unfinished: Map<string, UnfinishedWrite>;
  ownedCount: number;
  /** Read before the inventory: a write that lands while planning then makes a saved plan stale. */
  stateSerial: number;
  saltName: string | undefined;
  /** The readers' notes (merged cells, an encoding switch). */
  notes: string[];
  /** Hashed while the rows are read. */
  sourceSha256: Promise<string>;
}

/** Opens the roster (in a worker thread when large), and streams it through the mapping into the classifier against the inventory. */
async function readRoster(input: GatherInput & { binding: BindingCheck; listing: CustomFieldsListing; compiled: CompiledMapping }): Promise<RosterRead> {
  const { pipeline, store, request, binding, compiled } = input;
  const reopen = () => openSource(pipeline.source, { baseDir: pipeline.dir });
  const opened = await ((await sourceSize(pipeline)) >= (request.workerReadMinBytes ?? WORKER_READ_MIN_BYTES)
    ? openSourceInWorker(pipeline.source, { baseDir: pipeline.dir })
    : reopen());
  // Until mapRoster reads it, a failure here must stop the reader (a worker thread) itself.
  const closingOnError = <T>(step: () => T): T => {
    try {
      return step();
    } catch (error) {
      opened.close?.();
      throw error;
    }
  };
  closingOnError(() => compiled.checkHeaders(opened.headers, opened.file));
  // The rows' keys are salted with everything else that decides the mapped output. Keys stored
  // under another salt (before a mapping, listing or version change) cannot match: then none is
  // loaded. Else the worker reads ahead while they load (read-in-worker.ts).
  const salt = fastPathAllowed(request, binding) ? closingOnError(() => rowKeySalt({ mappingHash: pipeline.mappingHash, listing: input.listing, headers: opened.headers, format: opened.format })) : undefined;
  const saltName = salt === undefined ? undefined : rowKeySaltName(salt);
  const keysUsable = saltName !== undefined && closingOnError(() => store.rowKeySalt()) === saltName;
  if (keysUsable) opened.allowReadAhead?.(FAST_PATH_BATCHES_AHEAD);
  const sourceSha256 = layeredSha256(opened.file, pipeline.source.overlays.map((overlay) => overlay.file));
  sourceSha256.catch(() => undefined);
  const overlays = overlayOpeners(pipeline.source.overlays, { baseDir: pipeline.dir });

  const stateSerial = closingOnError(() => store.serial());
  const unfinished = closingOnError(() => store.unfinishedOrFailed());
  // The run holds the pipeline lock, so the inventory cannot change while it is read.
  const ownedCount = closingOnError(() => store.ownedCount());
  const classifier = new RosterClassifier({ keepUnchanged: request.refresh === 'all', rewrite: new Set(unfinished.keys()), ...(input.rowKeys ? { rowKeys: input.rowKeys } : {}), ...(input.created ? { created: input.created } : {}) });
  const groupId = binding.groupId;
  const shared = groupId !== null && binding.sharedWith.length > 0 ? { baseUrl: request.baseUrl, groupId } : null;
  const people = new DuplicatePeopleFinder();
  const probe = new DuplicateProbe();
  const batches = new InventoryBatches({ store, classifier, people, pipeline: pipeline.name, sharedPrefixes: binding.sharedPrefixes, shared, ownedCount });
  const fastPath = salt === undefined
    ? undefined
    : closingOnError(() => knownRowsFastPath({ store, keysUsable, ownedCount, rewrite: unfinished, onKnown: (clientId) => batches.known(clientId), salt, headers: opened.headers }));
  const roster = await mapRoster(opened, compiled, {
    onRecord: (record, replaces) => {
      people.add(record);
      probe.add(record);
      batches.record(record, replaces);
    },
    reopen,
    ...(fastPath ? { fastPath } : {}),
    ...(overlays.openers.length > 0 ? { overlays: overlays.openers } : {}),
  });
  batches.flush();
  // Readers add notes while reading (merged cells, an encoding switch), so collect them after.
  const notes = [...opened.notes, ...overlays.notes()];
  return { opened, roster, classifier, foreign: batches.foreign, shared, people, probe, newIds: batches.newIds, unfinished, ownedCount, stateSerial, saltName, notes, sourceSha256 };
}

/**
 * Records are compared with the inventory in batches, so the inventory stays on disk. A known row
 * that replaces an earlier row of its client_id (duplicate policy `last`) queues behind them
 * while a batch is open: classified in row order, the later row wins.
 */
class InventoryBatches {
  /** One owner per record: rows outside this pipeline's declared prefixes, or whose client_id another pipeline sharing the group claims, are neither written nor (being in the roster) deleted. */
  readonly foreign = new Map<string, ForeignReason>();
  /** Mapped client_ids the inventory lacks; none kept when the inventory is empty (a first run: every row is new, and no set of a million ids is kept). */
  readonly newIds: Set<string> | undefined;
  private readonly pending: Array<DesiredRecord | string> = [];
  /** Pending records that replace an earlier row of their client_id (`duplicate_client_ids: last`). */
  private readonly replacing = new Set<DesiredRecord>();

  constructor(
    private readonly input: {
      store: StateBackend;
      classifier: RosterClassifier;
      people: DuplicatePeopleFinder;
      pipeline: string;
      sharedPrefixes: readonly string[] | null;
      shared: { baseUrl: string; groupId: number } | null;
      /** How many records the inventory owns. */
      ownedCount: number;
    },
  ) {
    this.newIds = input.ownedCount === 0 ? undefined : new Set<string>();
  }

  record(record: DesiredRecord, replaces?: boolean): void {
    if (replaces) this.replacing.add(record);
    if (this.pending.push(record) >= this.input.store.lookupBatch) this.flush();
  }

  /** A row the fast path found unchanged. */
  known(clientId: string): void {
    if (this.pending.length === 0) this.input.classifier.addUnchanged(clientId);
    else if (this.pending.push(clientId) >= this.input.store.lookupBatch) this.flush();
  }

  flush(): void {
    const { store, classifier, people, shared } = this.input;
    const mapped = this.pending.flatMap((entry) => (typeof entry === 'string' ? [] : [entry.clientId]));
    const owned = store.ownedHashesOf(mapped);
    // Kept as long as the check is (a million-row first run skips it: DUPLICATE_PEOPLE_MAX_ROWS).
    // Kept as long as the check is (past DUPLICATE_PEOPLE_MAX_ROWS it is skipped).
    if (people.overflowed) this.newIds?.clear();
    else if (this.newIds) for (const clientId of mapped) if (!owned.has(clientId)) this.newIds.add(clientId);
    const claimedBy = shared ? store.claimOwners(shared, mapped) : new Map<string, string>();
    for (const record of this.pending) {
      if (typeof record === 'string') {
        classifier.addUnchanged(record);
        continue;
      }
      const why = foreignReason(record.clientId, claimedBy.get(record.clientId), this.input.pipeline, this.input.sharedPrefixes);
      if (why !== undefined) this.foreign.set(record.clientId, why);
      classifier.add(record, owned.get(record.clientId), this.replacing.has(record));
    }
    this.pending.length = 0;
    this.replacing.clear();
  }
}

/**
 * The drift check's reads (sync/drift.ts), as `plan` (plan/assemble-input.ts) says: the reads a real
 * run would make counted, the owned records read back. A check that cannot read (the service
 * failing past its retries) is skipped, not fatal: the run goes on as it would have without it,
 * and says so. A group gone stops it. `found` only when the check's findings are planned.
 */
async function readDrift(input: {
  plan: DriftCheckPlan;
  store: StateBackend;
  client: ServiceClient;
  groupId: number;
  policy: Pick<PolicyConfig, 'drift_sample' | 'drift_cycle'>;
  request: PlanRequest;
  ownedCount: number;
  roster: RosterSummary;
  compiled: CompiledMapping;
  sourceFile: string;
  notUnchanged: ReadonlySet<string>;
  notes: string[];
}): Promise<{ driftReads: number; found?: DriftFound }> {
  const { plan, store, request, groupId, notes } = input;
  const pick = { store, ownedCount: input.ownedCount, sampleSize: input.policy.drift_sample, cycle: input.policy.drift_cycle, rosterIds: input.roster.firstRowById, notUnchanged: input.notUnchanged, random: request.random, now: request.now };
  const counted = plan.count ? pickDriftReads(pick).clientIds.length : 0;
  if (plan.read === undefined) return { driftReads: counted };
  const reads = plan.read === 'sample' ? { ...pick, cycle: 0 } : pick;
  const call = request.signal ? { signal: request.signal } : {};
  const found = await checkDrift({ ...reads, client: input.client, groupId, managedFields: input.compiled.managedFields, setFields: input.compiled.setFields, sourceFile: input.sourceFile, call }).catch((error: unknown) => {
    if (error instanceof GroupGoneError || request.signal?.aborted) throw error;
    notes.push(driftCheckSkippedNote(error));
    return undefined;
  });
  // A dry run's sample plans nothing: a random sample would not be the real run's.
  if (!found || plan.read !== 'window-and-sample') return { driftReads: counted };
  if (found.recheck.length > 0) notes.push(driftNote(found));
  return { driftReads: found.calls, found };
}

/** The drift check's part of the report. */
function driftReport(found: DriftFound): NonNullable<RunReport['drift']> {
  return { sampled: found.sampled, calls: found.calls, deleted: found.deleted, changed: found.changed, ...(found.window ? { window: found.window } : {}) };
}

/**
 * What a saved plan is bound to: the roster file's SHA-256, or with overlays, the SHA-256 of the
 * files' hashes in order (a change to any file, or to their order, changes it).
 */
async function layeredSha256(file: string, overlays: readonly string[]): Promise<string> {
  const own = await sha256File(file);
  if (overlays.length === 0) return own;
  const hashes = [own, ...(await Promise.all(overlays.map((overlay) => sha256File(overlay))))];
  return createHash('sha256').update(hashes.join('\n')).digest('hex');
}

/** The roster's size in bytes (0 if it cannot be read: the reader then says why). */
async function sourceSize(pipeline: ResolvedPipeline): Promise<number> {
  return stat(resolve(pipeline.dir, pipeline.source.file)).then(
    (info) => info.size,
    () => 0,
  );
}

/**
 * The plan's fast path: a row whose key the inventory holds is its record, unchanged, and is not
 * mapped. Off with --refresh (the remote decides), --no-fast-path, and on a shared group (each
 * row's claim is checked). A record whose last write failed or never finished is always mapped.
 */
function knownRowsFastPath(input: {
  store: StateBackend;
  /** False when the stored keys have another salt: none is loaded, every row is mapped and keyed. */
  keysUsable: boolean;
  ownedCount: number;
  onKnown: (clientId: string) => void;
  rewrite: ReadonlyMap<string, unknown>;
  salt: string;
  headers: readonly string[];
}): FastPath {
  return {
    rowKey: (row) => rowKeyOf(input.salt, input.headers, row),
    known: input.keysUsable ? KnownRows.from(input.store.rowKeyPages(), input.ownedCount, input.rewrite) : KnownRows.from([], 0),
    onKnown: input.onKnown,
  };
}

