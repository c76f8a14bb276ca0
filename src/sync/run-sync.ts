/**
 * One run of a pipeline, the data flow of shared/design.md end to end:
 * source → rows → mapping → plan (pure) → apply (the single writer) → state + report.
 *
 * A dry run is the same code path stopped before apply: every lookup, validation and guard runs.
 * `plan --out` stops at the same point and saves the plan; `apply plan.json` resumes from it
 * after checking that nothing it was computed against has changed.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import pLimit from 'p-limit';
import type { Logger } from 'pino';
import { applyPlan, type ApplyResult } from '../apply/apply.js';
import { createClient, type ClientOptions, type ServiceClient } from '../client/client.js';
import { AmbiguousGroupCreationError } from '../client/errors.js';
import { customFieldsListingSchema, type CustomFieldsListing } from '../client/schemas.js';
import { loadPipeline, type ResolvedPipeline } from '../config/load.js';
import { EXIT, UserFacingError } from '../errors.js';
import { compileMapping } from '../mapping/compile.js';
import { mapRoster, type RosterSummary } from '../mapping/roster.js';
import type { DesiredRecord } from '../mapping/types.js';
import { buildPlan } from '../plan/build.js';
import { RosterClassifier } from '../plan/classify.js';
import type { Fields, Plan } from '../plan/types.js';
import { writeReport, type WrittenReport } from '../report/write.js';
import type { RunReport } from '../report/types.js';
import { openSource, sha256File } from '../sources/index.js';
import { HASH_BATCH, HEARTBEAT_MS, mayHaveWritten, StateStore } from '../state/store.js';
import { buildRunReport } from './report-builder.js';
import { newRunId } from './run-id.js';
import { planBindings, savePlanFile, type PlanBindings } from './plan-file.js';

export interface RunOptions {
  pipelinePath: string;
  /** Where the service is; the key never reaches logs or reports. */
  service: { baseUrl: string; apiKey: string };
  dryRun?: boolean;
  /** `planned`: GET every planned key; `all`: every owned key too. */
  refresh?: false | 'planned' | 'all';
  allowDeletes?: number;
  allowSourceDrop?: boolean;
  allowEmptySource?: boolean;
  maxRps?: number;
  concurrency?: number;
  /** Stop starting new calls after this many milliseconds. */
  maxDurationMs?: number;
  reportDir?: string;
  stateDir?: string;
  /** A saved custom-fields listing instead of asking the service. */
  fieldsFile?: string;
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logger?: Logger;
  now?: () => number;
  /** Extra client options for tests and benchmarks (dispatcher, sleep, retry policy). */
  client?: Partial<ClientOptions>;
  onProgress?: (done: number, total: number) => void;
  /** `rostersync plan --out`: save the plan (a dry run) for a later `rostersync apply`. */
  savePlanTo?: string;
}

export interface RunResult {
  report: RunReport;
  exitCode: number;
  written: WrittenReport;
}

/** Everything computed before the first write. */
export interface PreparedRun {
  runId: string;
  startedAt: number;
  pipeline: ResolvedPipeline;
  client: ServiceClient;
  store: StateStore;
  roster: RosterSummary;
  plan: Plan;
  groupId: number | null;
  bindings: PlanBindings;
  source: RunReport['source'];
  notes: string[];
}

export async function runSync(options: RunOptions): Promise<RunResult> {
  const now = options.now ?? Date.now;
  const pipeline = loadPipeline(resolve(options.cwd ?? process.cwd(), options.pipelinePath));
  const store = openState(pipeline, options);
  const runId = newRunId(now());
  let unlock = () => {};
  const lockLost = new AbortController();
  options = { ...options, signal: options.signal ? AbortSignal.any([options.signal, lockLost.signal]) : lockLost.signal };
  try {
    if (!options.dryRun) {
      unlock = lock(store, runId, () => {
        options.logger?.error({ runId, pipeline: pipeline.name }, 'the pipeline lock was taken from this run: stopping');
        lockLost.abort();
      });
    }
    const startedAt = now();
    const prepared = await prepareRun(pipeline, store, runId, options).catch(async (error: unknown) => {
      await recordEarlyFailure({ pipeline, store, runId, startedAt, error, options });
      throw error;
    });
    if (options.savePlanTo) {
      await savePlanFile(resolve(options.cwd ?? process.cwd(), options.savePlanTo), {
        pipeline: pipeline.name,
        bindings: prepared.bindings,
        plan: prepared.plan,
        roster: prepared.roster,
        source: prepared.source,
        now: now(),
      });
    }
    return await finishRun(prepared, options);
  } finally {
    unlock();
    store.close();
  }
}

/**
 * State and reports live beside the pipeline file by default (`state_dir: .rostersync`,
 * `report_dir: reports`, relative to the pipeline's directory), so a cron job finds the same
 * inventory whatever its working directory.
 */
export function stateFile(pipeline: ResolvedPipeline, options: Pick<RunOptions, 'stateDir' | 'cwd'> = {}): string {
  const dir = options.stateDir ? resolve(options.cwd ?? process.cwd(), options.stateDir) : resolve(pipeline.dir, pipeline.config.state_dir ?? '.rostersync');
  return join(dir, `${pipeline.name}.sqlite`);
}

export function reportRoot(pipeline: ResolvedPipeline): string {
  return resolve(pipeline.dir, pipeline.config.report_dir ?? 'reports', pipeline.name);
}

export function openState(pipeline: ResolvedPipeline, options: Pick<RunOptions, 'stateDir' | 'cwd'> = {}): StateStore {
  return StateStore.open(stateFile(pipeline, options), pipeline.name);
}

/**
 * Takes the pipeline lock and keeps its heartbeat going; returns the release function. If the
 * lock stops being ours (someone ran `unlock`, or judged it stale), `onLost` is told, so the run
 * stops starting calls instead of writing beside another run.
 */
export function lock(store: StateStore, runId: string, onLost: () => void = () => {}): () => void {
  store.acquireLock(runId);
  const timer = setInterval(() => {
    if (!store.heartbeat(runId)) {
      clearInterval(timer);
      onLost();
    }
  }, HEARTBEAT_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    store.releaseLock(runId);
  };
}

export async function prepareRun(pipeline: ResolvedPipeline, store: StateStore, runId: string, options: RunOptions): Promise<PreparedRun> {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const policy = pipeline.config.policy;
  const client = createClient({
    baseUrl: options.service.baseUrl,
    apiKey: options.service.apiKey,
    rateLimit: {
      rps: options.maxRps ?? policy.max_rps,
      burst: policy.burst,
      maxInFlight: options.concurrency ?? policy.concurrency,
    },
    ...(options.logger ? { logger: options.logger } : {}),
    ...options.client,
  });
  const notes: string[] = [];

  const listing = options.fieldsFile
    ? await readFieldsFile(resolve(options.cwd ?? process.cwd(), options.fieldsFile))
    : await client.listCustomFields({ ...(options.signal ? { signal: options.signal } : {}) });
  const compiled = compileMapping(pipeline.mapping, listing, { mappingFile: pipeline.mappingFile });

  const reopen = () => openSource(pipeline.source, { baseDir: pipeline.dir });
  const opened = await reopen();
  compiled.checkHeaders(opened.headers, opened.file);
  const sourceSha256 = await sha256File(opened.file);

  const configuredGroup = 'group_id' in pipeline.config.target ? pipeline.config.target.group_id : null;
  const rememberedGroup = store.groupId();
  if (configuredGroup !== null && rememberedGroup !== null && configuredGroup !== rememberedGroup) {
    throw new UserFacingError(
      `pipeline "${pipeline.name}" targets group ${configuredGroup}, but its state inventories group ${rememberedGroup}.`,
      { hint: 'A state belongs to one group. Use another state_dir for the new group, or `rostersync state set-group` if the group id really changed.' },
    );
  }
  const groupId = configuredGroup ?? rememberedGroup;

  // Read before the inventory: a write that lands while planning then makes a saved plan stale.
  const stateSerial = store.serial();
  const refreshAll = options.refresh === 'all';
  const unfinished = store.unfinishedOrFailed();
  const classifier = new RosterClassifier({ keepUnchanged: refreshAll, rewrite: new Set(unfinished.keys()) });
  // Records are compared with the inventory in batches, so the inventory stays on disk.
  const pending: DesiredRecord[] = [];
  const classifyPending = () => {
    const owned = store.ownedHashesOf(pending.map((record) => record.clientId));
    for (const record of pending) classifier.add(record, owned.get(record.clientId));
    pending.length = 0;
  };
  const roster = await mapRoster(opened, compiled, {
    onRecord: (record) => {
      if (pending.push(record) >= HASH_BATCH) classifyPending();
    },
    reopen,
  });
  classifyPending();
  // Readers add notes while reading (merged cells, an encoding switch), so collect them after.
  notes.push(...opened.notes);
  // In the roster but not to be written: rows rejected for their values, and duplicated ids.
  const keepAsIs = new Set(roster.rejectedClientIds);
  if (compiled.duplicatePolicy === 'reject') for (const clientId of roster.duplicateClientIds) keepAsIs.add(clientId);
  const classification = classifier.finish(store.ownedIds(), keepAsIs);
  // A create or update the service may have performed without this pipeline learning of it (a
  // kill after the call, an outage, a fault after the handler ran) is not in the inventory. If its
  // row has since left the roster, the record may still exist: count it as gone from the roster
  // like an owned one, so mirror mode deletes it (a 404 means it never existed) and upsert mode
  // lists it as an orphan. A definite refusal (4xx) wrote nothing: such an id is left alone, as the
  // group may hold a record of that id that this pipeline never owned.
  for (const [clientId, write] of unfinished) {
    if (write.action === 'delete' || !mayHaveWritten(write)) continue;
    if (!classifier.has(clientId) && !keepAsIs.has(clientId) && store.getOwned(clientId) === undefined) classification.missing.push(clientId);
  }

  const needApplied = [
    ...classification.changed.map((c) => c.record.clientId),
    ...classification.missing,
    ...classification.unchanged.map((c) => c.record.clientId),
  ];
  const lastApplied = store.lastApplied(needApplied);
  const remote = options.refresh && groupId !== null ? await fetchRemote(client, groupId, compiled.managedFields, needApplied, options.signal) : undefined;
  if (options.refresh && groupId === null) notes.push('--refresh skipped: the target group does not exist yet.');

  const ownedCount = store.ownedCount();
  const previous = store.lastSuccessfulRun();
  const plan = buildPlan({
    classification,
    lastApplied,
    ...(remote ? { remote } : {}),
    previouslyFailed: new Map([...unfinished].map(([clientId, write]) => [clientId, write.action])),
    policy: { ...policy, max_rps: options.maxRps ?? policy.max_rps },
    fieldLabels: new Map(Object.entries(compiled.fieldNames)),
    optionLabels: new Map(listing.author_from_group.flatMap((field) => (field.options ?? []).map((option) => [option.api_id, option.option] as const))),
    guardInput: {
      ownedCount,
      validCount: roster.counts.valid,
      previousValidCount: previous?.validRecords ?? null,
      inventoryMissing: groupId !== null && ownedCount === 0,
      unidentifiedRejected: roster.unidentifiedRejected,
      allow: {
        ...(options.allowDeletes !== undefined ? { deletes: options.allowDeletes } : {}),
        ...(options.allowSourceDrop ? { sourceDrop: true } : {}),
        ...(options.allowEmptySource ? { emptySource: true } : {}),
      },
    },
  });

  options.logger?.info(
    { runId, pipeline: pipeline.name, dryRun: options.dryRun === true, rows: roster.counts.rowsRead, valid: roster.counts.valid, rejected: roster.counts.rejected, plan: plan.counts, refused: plan.refused },
    `planned: ${plan.estimate.text}`,
  );
  const bindings = planBindings({ pipeline, sourceSha256, stateSerial, baseUrl: options.service.baseUrl, groupId });
  return {
    runId,
    startedAt,
    pipeline,
    client,
    store,
    roster,
    plan,
    groupId,
    bindings,
    source: { file: opened.file, sha256: sourceSha256, format: opened.format, ...(opened.sheet ? { sheet: opened.sheet } : {}) },
    notes,
  };
}

/** Applies a prepared plan (unless dry or refused), then journals the run and writes the report. */
export async function finishRun(prepared: PreparedRun, options: RunOptions): Promise<RunResult> {
  const now = options.now ?? Date.now;
  const { store, plan, pipeline } = prepared;
  const dryRun = options.dryRun === true;
  store.startRun({ id: prepared.runId, dryRun, sourceSha256: prepared.source.sha256 });

  let applied: ApplyResult | undefined;
  let outcome: RunReport['outcome'];
  let exitCode: number;
  let message: string | undefined;
  let groupId = prepared.groupId;

  if (plan.refused) {
    outcome = 'refused';
    exitCode = EXIT.guard;
    message = plan.guards.filter((g) => g.tripped).map((g) => `${g.guard}: ${g.message} Allow with ${g.allowWith}.`).join(' ');
  } else if (dryRun) {
    outcome = 'dry_run';
    exitCode = EXIT.ok;
  } else {
    try {
      groupId = await ensureGroup(prepared, options.signal);
      const total = plan.items.length;
      let done = 0;
      applied = await applyPlan({
        plan,
        groupId,
        writer: prepared.client,
        store,
        runId: prepared.runId,
        concurrency: options.concurrency ?? pipeline.config.policy.concurrency,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.maxDurationMs !== undefined ? { deadline: prepared.startedAt + options.maxDurationMs } : {}),
        now,
        onOutcome: (item, result) => {
          if (result.outcome === 'failed') options.logger?.warn({ runId: prepared.runId, clientId: item.clientId, action: item.action, status: result.httpStatus }, 'record failed');
          options.onProgress?.(++done, total);
        },
      });
    } catch (error) {
      // Nothing else can be written (group creation failed, or the run stopped early): still
      // journal the run and write its report before letting the error reach the CLI.
      await record(prepared, { outcome: 'failed', exitCode: exitCodeOf(error), message: (error as Error).message, groupId }, applied, options);
      throw error;
    }
    const failed = [...applied.outcomes.values()].filter((o) => o.outcome === 'failed').length;
    if (applied.stopped) {
      outcome = applied.stopped.reason === 'interrupted' ? 'interrupted' : applied.stopped.reason === 'deadline' ? 'partial' : 'failed';
      exitCode = applied.stopped.reason === 'deadline' && failed > 0 ? EXIT.partial : applied.stopped.exitCode;
      message = applied.stopped.message;
    } else if (failed > 0) {
      outcome = 'partial';
      exitCode = EXIT.partial;
      message = `${failed} record${failed === 1 ? '' : 's'} failed; they are planned again on the next run.`;
    } else {
      outcome = 'success';
      exitCode = EXIT.ok;
    }
  }
  // Rejected rows are records that could not be synced: a run that skipped them finishes, but it
  // says so with exit 2 (dry runs too, as the real run would), so a nightly job does not hide them.
  const rejected = prepared.roster.counts.rejected;
  if (exitCode === EXIT.ok && rejected > 0 && outcome !== 'interrupted') {
    exitCode = EXIT.partial;
    if (outcome === 'success') outcome = 'partial';
    message = [message, `${rejected} row${rejected === 1 ? '' : 's'} rejected and not synced; fix them in rejected.csv and run again.`].filter(Boolean).join(' ');
  }
  return record(prepared, { outcome, exitCode, ...(message ? { message } : {}), groupId }, applied, options);
}

async function record(
  prepared: PreparedRun,
  result: { outcome: RunReport['outcome']; exitCode: number; message?: string; groupId: number | null },
  applied: ApplyResult | undefined,
  options: RunOptions,
): Promise<RunResult> {
  const now = options.now ?? Date.now;
  const { store, pipeline } = prepared;
  const report = buildRunReport({
    base: {
      version: 1,
      runId: prepared.runId,
      pipeline: pipeline.name,
      pipelineFile: pipeline.file,
      source: prepared.source,
      target: {
        baseUrl: options.service.baseUrl,
        groupId: result.groupId,
        ...('group' in pipeline.config.target ? { groupName: pipeline.config.target.group.name } : {}),
      },
      mode: pipeline.config.policy.mode,
      update: pipeline.config.policy.update,
      dryRun: options.dryRun === true,
      startedAt: new Date(prepared.startedAt).toISOString(),
      outcome: result.outcome,
      exitCode: result.exitCode,
      ...(result.message ? { message: result.message } : {}),
      limiter: limiterStats(prepared.client),
    },
    plan: prepared.plan,
    roster: prepared.roster,
    ...(applied ? { applied } : {}),
    startedAt: prepared.startedAt,
    finishedAt: now(),
    notes: prepared.notes,
  });
  store.finishRun({ id: prepared.runId, outcome: result.outcome, validRecords: prepared.roster.counts.valid, counts: report.counts });
  options.logger?.info({ runId: prepared.runId, pipeline: pipeline.name, outcome: result.outcome, exitCode: result.exitCode, counts: report.counts, durationMs: report.durationMs }, 'run finished');
  const dir = options.reportDir
    ? resolve(options.cwd ?? process.cwd(), options.reportDir)
    : join(reportRoot(pipeline), prepared.runId);
  const written = await writeReport(report, { dir, env: options.env ?? process.env });
  return { report, exitCode: result.exitCode, written };
}

/**
 * A run that failed before its plan existed (service unreachable or refusing the key at the
 * custom-fields listing, an unreadable roster, a mapping error) still leaves a trace: a row in the
 * run history and a report saying what stopped it, so a 3 a.m. failure is explained in the morning.
 */
async function recordEarlyFailure(input: { pipeline: ResolvedPipeline; store: StateStore; runId: string; startedAt: number; error: unknown; options: RunOptions }): Promise<void> {
  const { pipeline, store, runId, options } = input;
  const now = options.now ?? Date.now;
  const exitCode = exitCodeOf(input.error);
  const message = input.error instanceof Error ? input.error.message : String(input.error);
  const report: RunReport = {
    version: 1,
    runId,
    pipeline: pipeline.name,
    pipelineFile: pipeline.file,
    source: { file: pipeline.source.file, sha256: '', format: pipeline.source.format },
    target: { baseUrl: options.service.baseUrl, groupId: store.groupId() },
    mode: pipeline.config.policy.mode,
    update: pipeline.config.policy.update,
    dryRun: options.dryRun === true,
    startedAt: new Date(input.startedAt).toISOString(),
    finishedAt: new Date(now()).toISOString(),
    durationMs: now() - input.startedAt,
    outcome: 'failed',
    exitCode,
    message,
    input: { rowsRead: 0, valid: 0, rejected: 0, filtered: 0, duplicates: 0 },
    counts: { create: {}, update: {}, delete: {}, noop: {} },
    guards: [],
    records: [],
    orphans: [],
    rejectedRows: [],
    rejectedRowsOmitted: 0,
    notes: ['the run stopped before planning: nothing was written.'],
  };
  try {
    store.startRun({ id: runId, dryRun: report.dryRun, sourceSha256: '' });
    store.finishRun({ id: runId, outcome: 'failed', validRecords: 0, counts: report.counts });
    const dir = options.reportDir ? resolve(options.cwd ?? process.cwd(), options.reportDir) : join(reportRoot(pipeline), runId);
    const written = await writeReport(report, { dir, env: options.env ?? process.env });
    options.logger?.error({ runId, pipeline: pipeline.name, exitCode, report: written.files.json }, 'run failed before planning');
  } catch {
    // The original error is what the operator needs; a report that cannot be written must not hide it.
  }
}

/**
 * The target group: configured, remembered, or created now. Creation is not idempotent
 * (shared/design.md decision 3): the intent is recorded before the call and the id right after,
 * and an ambiguous failure stops the run instead of risking a second group.
 */
async function ensureGroup(prepared: PreparedRun, signal: AbortSignal | undefined): Promise<number> {
  const { store, pipeline, client } = prepared;
  if (prepared.groupId !== null) {
    if (store.groupId() === null) store.setGroupId(prepared.groupId);
    return prepared.groupId;
  }
  const target = pipeline.config.target;
  if (!('group' in target)) throw new Error('unreachable: a target without group_id must name a group');
  const setGroupHint = `Look for the group "${target.group.name}" in the service's UI. If it exists, record its id with \`rostersync state set-group ${pipeline.file} <id>\`; if it does not, clear the intent with \`rostersync state set-group ${pipeline.file} --clear\` and run again.`;
  const intent = store.groupIntent();
  if (intent) {
    throw new UserFacingError(`an earlier run started creating group "${intent.name}" at ${intent.at} and never learned whether it was created.`, { hint: setGroupHint });
  }
  store.recordGroupIntent(target.group.name);
  try {
    const created = await client.createGroup(
      { group_name: target.group.name, owner_team: target.group.owner_team, editor_teams: target.group.editor_teams, viewer_teams: target.group.viewer_teams },
      signal ? { signal } : {},
    );
    store.setGroupId(created.authors_group_id);
    prepared.notes.push(`created authors group "${target.group.name}" with id ${created.authors_group_id}.`);
    return created.authors_group_id;
  } catch (error) {
    if (error instanceof AmbiguousGroupCreationError) {
      throw new UserFacingError(error.message, { hint: setGroupHint, exitCode: EXIT.unavailable, cause: error });
    }
    // A clear refusal (unknown team, plan feature missing): no group exists, forget the intent.
    store.clearGroupIntent();
    throw error;
  }
}

async function fetchRemote(
  client: ServiceClient,
  groupId: number,
  managedFields: string[],
  clientIds: string[],
  signal: AbortSignal | undefined,
): Promise<Map<string, Fields | null>> {
  const limit = pLimit(8);
  const remote = new Map<string, Fields | null>();
  await Promise.all(
    clientIds.map((clientId) =>
      limit(async () => {
        try {
          const record = (await client.getAuthor(groupId, clientId, signal ? { signal } : {})) as Record<string, unknown>;
          const fields: Fields = {};
          for (const field of managedFields) fields[field] = (record[field] ?? null) as Fields[string];
          remote.set(clientId, fields);
        } catch (error) {
          if ((error as { status?: number }).status === 404) remote.set(clientId, null);
          else throw error;
        }
      }),
    ),
  );
  return remote;
}

async function readFieldsFile(path: string): Promise<CustomFieldsListing> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new UserFacingError(`${path}: cannot read the custom-fields listing: ${(error as Error).message}`, {
      hint: 'Make one with `rostersync fields --json > fields.json`.',
    });
  }
  const result = customFieldsListingSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new UserFacingError(`${path}: not a custom-fields listing (${issue?.path.join('.')}: ${issue?.message})`, {
      hint: 'Make one with `rostersync fields --json > fields.json`.',
    });
  }
  return result.data;
}

function limiterStats(client: ServiceClient): RunReport['limiter'] {
  const stats = client.stats();
  return { ...stats };
}

export function exitCodeOf(error: unknown): number {
  const code = (error as { exitCode?: unknown }).exitCode;
  return typeof code === 'number' ? code : EXIT.usage;
}
