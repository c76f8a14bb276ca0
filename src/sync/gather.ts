/**
 * Gathers the plan's input: the only phase before apply that does I/O (the changesets split of
 * get-release-plan apart from the pure assemble-release-plan). It reads the custom-fields
 * listing, compiles the mapping, streams the roster through the mapping into the classifier
 * against the inventory, and, with --refresh, fetches remote records. It never writes to the
 * service; of the state it only reads.
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CallOptions, ServiceClient } from '../client/client.js';
import type { ResolvedPipeline } from '../config/load.js';
import { compileMapping } from '../mapping/compile.js';
import { mapRoster, type FastPath, type RosterSummary } from '../mapping/roster.js';
import { rowKeyOf, rowKeySalt, rowKeySaltName } from '../mapping/row-key.js';
import { KnownRows } from '../plan/known-rows.js';
import type { DesiredRecord } from '../mapping/types.js';
import { loadFieldsFile } from '../config/fields-file.js';
import { ConfigError } from '../config-error.js';
import type { BuildPlanInput } from '../plan/build.js';
import { RosterClassifier } from '../plan/classify.js';
import type { RowKeyRepairs } from '../plan/row-key-repairs.js';
import type { NewRecords } from '../plan/new-records.js';
import type { RunReport } from '../report/types.js';
import { openSource, sha256File } from '../sources/index.js';
import { overlayOpeners } from '../sources/layers.js';
import { FAST_PATH_BATCHES_AHEAD, openSourceInWorker, WORKER_READ_MIN_BYTES } from '../sources/read-in-worker.js';
import { identityChangesOf } from '../plan/identity-changes.js';
import { DuplicatePeopleFinder } from '../mapping/duplicate-people.js';
import { checkBinding, GONE_GROUP_META } from '../state/binding.js';
import type { StateBackend } from '../state/backend.js';
import { foreignReason, ownMissing } from '../plan/ownership.js';
import { unfinishedAsMissing } from '../plan/unfinished.js';
import { guardInputOf } from '../plan/guards.js';
import { driftCheckSkippedNote, driftNote, foreignNote, REFRESH_WITHOUT_GROUP_NOTE } from '../report/run-notes.js';
import { checkDuplicatePeople } from './duplicate-people-check.js';
import { checkDrift, GroupGoneError, pickDriftReads } from './drift.js';
import type { DriftWindowState } from './drift-window.js';
import { groupCheckNote } from './group-check.js';
import { fetchRemote } from './remote-records.js';
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

/**
 * `rowKeys` receives the row keys the plan's apply is to store (the fast path's repairs), and
 * `created` the new records (kept on disk past its first pages); the caller disposes of both once
 * the run is over, whatever happened.
 */
export async function gatherPlanInput(input: {
  pipeline: ResolvedPipeline;
  store: StateBackend;
  client: ServiceClient;
  request: PlanRequest;
  rowKeys?: RowKeyRepairs;
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
}): Promise<GatheredInput> {
  const { pipeline, store, client, request } = input;
  const call: CallOptions = request.signal ? { signal: request.signal } : {};
  const policy = pipeline.config.policy;
  const notes: string[] = [];
  // Before any call: a state bound to another service or group is never used against this one.
  const binding = checkBinding(store, pipeline, { baseUrl: request.baseUrl, createGroup: request.createGroup });
  const groupId = binding.groupId;

  const listing = request.fieldsFile ? loadFieldsFile(resolve(request.cwd, request.fieldsFile)) : await client.listCustomFields(call);
  const compiled = compileMapping(pipeline.mapping, listing, { mappingFile: pipeline.mappingFile });
  const seeded = Object.keys(compiled.seededFields);
  if (policy.update === 'full' && seeded.length > 0) {
    // A full POST replaces the whole record: it would overwrite the values seeded fields keep.
    throw new ConfigError(pipeline.file, [{ path: 'policy.update', message: `full updates replace whole records, so they cannot keep the service's values of fields written on_create or if_empty (${seeded.map((field) => compiled.fieldNames[field] ?? field).join(', ')})` }], {
      hint: 'Use policy.update: partial (the default), or write: always on those fields.',
    });
  }

  const reopen = () => openSource(pipeline.source, { baseDir: pipeline.dir });
  const fastPathOn = request.fastPath && !request.refresh && !binding.sharedPrefixes && binding.sharedWith.length === 0;
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
  const salt = fastPathOn ? closingOnError(() => rowKeySalt({ mappingHash: pipeline.mappingHash, listing, headers: opened.headers, format: opened.format })) : undefined;
  const saltName = salt === undefined ? undefined : rowKeySaltName(salt);
  const keysUsable = saltName !== undefined && closingOnError(() => store.rowKeySalt()) === saltName;
  if (keysUsable) opened.allowReadAhead?.(FAST_PATH_BATCHES_AHEAD);
  // Hashed while the rows are read; awaited once they are.
  const sourceSha256 = layeredSha256(opened.file, pipeline.source.overlays.map((overlay) => overlay.file));
  sourceSha256.catch(() => undefined);
  const overlays = overlayOpeners(pipeline.source.overlays, { baseDir: pipeline.dir });

  // Read before the inventory: a write that lands while planning then makes a saved plan stale.
  const stateSerial = closingOnError(() => store.serial());
  const unfinished = closingOnError(() => store.unfinishedOrFailed());
  // The run holds the pipeline lock, so the inventory cannot change while it is read.
  const ownedCount = closingOnError(() => store.ownedCount());
  const classifier = new RosterClassifier({ keepUnchanged: request.refresh === 'all', rewrite: new Set(unfinished.keys()), ...(input.rowKeys ? { rowKeys: input.rowKeys } : {}), ...(input.created ? { created: input.created } : {}) });
  // Records are compared with the inventory in batches, so the inventory stays on disk. A known row
  // that replaces an earlier row of its client_id (duplicate policy `last`) queues behind them
  // while a batch is open: classified in row order, the later row wins.
  const pending: Array<DesiredRecord | string> = [];
  /** Pending records that replace an earlier row of their client_id (`duplicate_client_ids: last`). */
  const replacing = new Set<DesiredRecord>();
  // One owner per record: rows outside this pipeline's declared prefixes, or whose client_id
  // another pipeline sharing the group claims, are neither written nor (being in the roster) deleted.
  const foreign = new Map<string, string>();
  const shared = groupId !== null && binding.sharedWith.length > 0 ? { baseUrl: request.baseUrl, groupId } : null;
  // Identities of the mapped rows, and which of them the inventory lacks: the same person twice.
  const people = new DuplicatePeopleFinder();
  // An empty inventory (a first run) owns none: every row is new, and no set of a million ids is kept.
  const newIds = ownedCount === 0 ? undefined : new Set<string>();
  const classifyPending = () => {
    const mapped = pending.flatMap((entry) => (typeof entry === 'string' ? [] : [entry.clientId]));
    const owned = store.ownedHashesOf(mapped);
    // Kept as long as the check is (past DUPLICATE_PEOPLE_MAX_ROWS it is skipped).
    if (people.overflowed) newIds?.clear();
    else if (newIds) for (const clientId of mapped) if (!owned.has(clientId)) newIds.add(clientId);
    const claimedBy = shared ? store.claimOwners(shared, mapped) : new Map<string, string>();
    for (const record of pending) {
      if (typeof record === 'string') {
        classifier.addUnchanged(record);
        continue;
      }
      const why = foreignReason(record.clientId, claimedBy.get(record.clientId), pipeline.name, binding.sharedPrefixes);
      if (why !== undefined) foreign.set(record.clientId, why);
      classifier.add(record, owned.get(record.clientId), replacing.has(record));
    }
    pending.length = 0;
    replacing.clear();
  };
  const fastPath = salt === undefined
    ? undefined
    : closingOnError(() =>
        knownRowsFastPath({
          store,
          keysUsable,
          ownedCount,
          rewrite: unfinished,
          onKnown: (clientId) => {
            if (pending.length === 0) classifier.addUnchanged(clientId);
            else if (pending.push(clientId) >= store.lookupBatch) classifyPending();
          },
          salt,
          headers: opened.headers,
        }),
      );
  const roster = await mapRoster(opened, compiled, {
    onRecord: (record, replaces) => {
      if (replaces) replacing.add(record);
      people.add(record);
      if (pending.push(record) >= store.lookupBatch) classifyPending();
    },
    reopen,
    ...(fastPath ? { fastPath } : {}),
    ...(overlays.openers.length > 0 ? { overlays: overlays.openers } : {}),
  });
  classifyPending();
  // Readers add notes while reading (merged cells, an encoding switch), so collect them after.
  notes.push(...opened.notes, ...overlays.notes());
  // In the roster but not to be written: rows rejected for their values, and duplicated ids.
  const keepAsIs = new Set(roster.rejectedClientIds);
  if (compiled.duplicatePolicy === 'reject') for (const clientId of roster.duplicateClientIds) keepAsIs.add(clientId);
  for (const clientId of foreign.keys()) keepAsIs.add(clientId);
  const samePerson = checkDuplicatePeople({ people, store, ...(newIds ? { newIds } : {}), roster, sourceFile: opened.file, keepAsIs, policy: policy.duplicate_people });
  notes.push(...samePerson.notes);
  const classification = classifier.finish(roster.firstRowById, { count: ownedCount, ids: () => store.ownedIds() }, keepAsIs);
  // Never a deletion from a suspicion: an owned record whose new client_id is held back stays.
  if (samePerson.pendingRenames.size > 0) classification.missing = classification.missing.filter((clientId) => !samePerson.pendingRenames.has(clientId));
  if (shared) classification.missing = ownMissing(classification.missing, store.claimOwners(shared, classification.missing), pipeline.name, foreign);
  const foreignText = foreignNote(foreign);
  if (foreignText) notes.push(foreignText);
  classification.missing.push(
    ...unfinishedAsMissing(unfinished, { inRoster: (id) => roster.firstRowById.has(id), keptAsIs: (id) => keepAsIs.has(id), owned: (id) => store.getOwned(id) !== undefined }),
  );

  const needApplied = [
    ...classification.changed.map((c) => c.record.clientId),
    ...classification.missing,
    ...classification.unchanged.map((c) => c.record.clientId),
  ];
  const lastApplied = store.lastApplied(needApplied);
  // Owned records whose row now describes someone else (the identity-change guard).
  const identityChanges = identityChangesOf(classification.changed, lastApplied);
  let remote = request.refresh && groupId !== null ? await fetchRemote({ client, groupId, managedFields: compiled.managedFields, setFields: compiled.setFields, clientIds: needApplied, call, concurrency: 8 }) : undefined;
  if (request.refresh && groupId === null) notes.push(REFRESH_WITHOUT_GROUP_NOTE);
  // A group nothing is owned in yet (a pinned group_id, `state set-group`): is it there at all?
  if (input.groupProbe && groupId !== null && ownedCount === 0 && !request.refresh) {
    const note = await groupCheckNote({ client, groupId, clientIds: classification.created.clientIds(), call, pipelineFile: pipeline.file });
    if (note) notes.push(note);
  }
  // The drift check of real runs; --refresh reads more than it would. A dry run or a plan counts
  // what a real run would read, for the estimate; dry runs also read the random sample (not the
  // rotating window) for its one verdict that stops a run, the group is gone, and plan nothing
  // from it: a random sample would not be the real run's.
  let drift: RunReport['drift'];
  let nextDriftWindow: DriftWindowState | undefined;
  let driftReads = 0;
  if ((input.driftCheck || input.groupProbe) && !request.refresh && groupId !== null && (policy.drift_sample > 0 || policy.drift_cycle > 0) && ownedCount > 0) {
    const notUnchanged = new Set([...classification.created.clientIds(), ...classification.changed.map((item) => item.record.clientId)]);
    for (const clientId of keepAsIs) notUnchanged.add(clientId);
    for (const clientId of unfinished.keys()) notUnchanged.add(clientId);
    const pick = { store, ownedCount, sampleSize: policy.drift_sample, cycle: policy.drift_cycle, rosterIds: roster.firstRowById, notUnchanged, random: request.random, now: request.now };
    if (input.driftCheck === 'count') driftReads = pickDriftReads(pick).clientIds.length;
    const reads = input.driftCheck === 'read' ? pick : input.groupProbe && policy.drift_sample > 0 ? { ...pick, cycle: 0 } : undefined;
    const found = !reads
      ? undefined
      : await checkDrift({ ...reads, client, groupId, managedFields: compiled.managedFields, setFields: compiled.setFields, sourceFile: opened.file, call }).catch((error: unknown) => {
          // A check that cannot read (the service failing past its retries) is skipped, not fatal: the
          // run goes on as it would have without it, and says so. A group gone stops it.
          if (error instanceof GroupGoneError) store.setMeta(GONE_GROUP_META, String(groupId));
          if (error instanceof GroupGoneError || request.signal?.aborted) throw error;
          notes.push(driftCheckSkippedNote(error));
          return undefined;
        });
    if (found && input.driftCheck === 'read') {
      driftReads = found.calls;
      nextDriftWindow = found.nextWindow;
      drift = { sampled: found.sampled, calls: found.calls, deleted: found.deleted, changed: found.changed, ...(found.window ? { window: found.window } : {}) };
      // Drifted records are planned again against their remote copy, as --refresh plans them.
      classification.unchanged.push(...found.recheck);
      for (const item of found.recheck) lastApplied.set(item.record.clientId, item.record.fields);
      if (found.recheck.length > 0) {
        remote = found.remote;
        notes.push(driftNote(found));
      }
    }
  }

  const previous = store.lastSuccessfulRun();
  const planInput: BuildPlanInput = {
    classification,
    lastApplied,
    ...(remote ? { remote } : {}),
    previouslyFailed: new Map([...unfinished].map(([clientId, write]) => [clientId, write.action])),
    createIfAbsent: binding.createIfAbsent,
    policy: { ...policy, max_rps: request.maxRps ?? policy.max_rps },
    fieldLabels: new Map(Object.entries(compiled.fieldNames)),
    ...(seeded.length > 0 ? { seededFields: compiled.seededFields } : {}),
    ...(saltName !== undefined ? { rowKeySalt: saltName } : {}),
    ...(driftReads > 0 ? { driftReads } : {}),
    guardInput: guardInputOf({
      ownedCount,
      validCount: roster.counts.valid,
      previousValidCount: previous?.validRecords ?? null,
      groupKnown: groupId !== null,
      unidentifiedRejected: roster.unidentifiedRejected,
      identityChanges,
      rosterCounts: roster.counts,
      allow: request.allow,
    }),
  };
  return {
    planInput,
    roster,
    source: { file: opened.file, sha256: await sourceSha256, format: opened.format, ...(opened.sheet ? { sheet: opened.sheet } : {}) },
    stateSerial,
    groupId,
    ...(drift ? { drift } : {}),
    ...(nextDriftWindow ? { nextDriftWindow } : {}),
    optionLabels: new Map(listing.author_from_group.flatMap((field) => (field.options ?? []).map((option) => [option.api_id, option.option] as const))),
    notes,
  };
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

