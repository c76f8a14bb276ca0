/**
 * `rostersync revert <pipeline> <run-id>`: undoes the writes of one run. The second half is that of
 * every run (sync/run-plan.ts: guard → apply → record → report); what differs is where the plan
 * comes from: not the roster but the run's journal (checked first: src/revert/journal.ts says
 * where the run wrote, or refuses), the whole records read back from that group (one GET per
 * record the run wrote: sync/remote-records.ts), the inventory and the claims, planned by
 * src/revert/plan.ts. The revert's own writes carry the records it read (`PlanItem.held`), so
 * apply journals exactly what they replace and a revert of the revert restores it whole.
 *
 * Without `yes` it is a dry run: the plan diff and the report, nothing written. `--out plan.json`
 * saves it for `rostersync apply`, which plans it again (journal, read-back, inventory) and
 * applies it only if every action is still the same. A revert run is journaled and reported like
 * any run: its report names the reverted run (`revertOf`), its source is `revert:<run id>`, and it
 * can itself be reverted.
 */
import { resolve } from 'node:path';
import type { ResolvedPipeline } from '../config/load.js';
import type { CustomFieldsListing } from '../client/schemas.js';
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';
import { compileMapping } from '../mapping/compile.js';
import type { ReportedRoster } from '../report/build.js';
import { buildRevertPlan, type RevertPlan } from '../revert/plan.js';
import { revertTarget } from '../revert/journal.js';
import type { JournalEntry, StateBackend } from '../state/backend.js';
import { checkBinding } from '../state/binding.js';
import { readFieldListing } from './field-listing.js';
import type { RunOptions, RunResult } from './options.js';
import { planBindings, planDifferences, planOptionsOf, savePreparedPlan, staleBindings, verifyPlanDigest, type PlanFile } from './plan-file.js';
import { fetchHeld } from './remote-records.js';
import { withRun, type RunContext } from './run-context.js';
import { runPlan, type PreparedRun } from './run-plan.js';
import { savedRevertNote } from '../report/run-notes.js';

export interface RevertOptions extends Omit<RunOptions, 'dryRun' | 'refresh' | 'fastPath' | 'createGroup' | 'allowSourceDrop' | 'allowEmptySource' | 'allowIdentityChanges'> {
  /** The run to undo. */
  revertRunId: string;
  /** Write (`--yes`); without it, the plan diff only. */
  yes?: boolean;
  /** Undo these records even though they changed since the run (`--force-record`). */
  forceRecords?: readonly string[];
  /** Leave these records as they are (`--skip-record`). */
  skipRecords?: readonly string[];
}

/** The source a revert run records: how the run history, and `lastSuccessfulRun`, tell it from a sync. */
export function revertSource(runId: string): string {
  return `revert:${runId}`;
}

export async function runRevert(options: RevertOptions): Promise<RunResult> {
  return withRun({ ...options, dryRun: options.yes !== true }, async (run) => {
    if (options.yes) run.lock();
    const stateSerial = run.store.serial();
    const prepared = await prepareRevert(run, { revertOf: options.revertRunId, force: options.forceRecords ?? [], skip: options.skipRecords ?? [] });
    if (options.savePlanTo) {
      await savePreparedPlan(resolve(run.cwd, options.savePlanTo), {
        prepared,
        stateSerial,
        secret: run.store.planSecret(),
        baseUrl: run.request.plan.baseUrl,
        options: planOptionsOf(options),
        now: run.now(),
        // The run `last` stood for: applying the plan later must undo that run, whatever ran since.
        revert: { runId: prepared.revertOf ?? options.revertRunId, forceRecords: [...(options.forceRecords ?? [])], skipRecords: [...(options.skipRecords ?? [])] },
      });
    }
    return runPlan(prepared, run.request);
  });
}

/** `rostersync apply plan.json` of a plan saved by `revert --out`: planned again, applied only if unchanged. */
export async function applySavedRevert(path: string, saved: PlanFile & { revert: NonNullable<PlanFile['revert']> }, options: Omit<RunOptions, 'pipelinePath' | 'refresh' | 'dryRun'>): Promise<RunResult> {
  return withRun({ ...options, ...saved.options, pipelinePath: saved.bindings.pipelineFile }, async (run) => {
    const { pipeline, store } = run;
    verifyPlanDigest(path, saved, store.planSecret());
    run.lock();
    const stateSerial = store.serial();
    const prepared = await prepareRevert(run, { revertOf: saved.revert.runId, force: saved.revert.forceRecords, skip: saved.revert.skipRecords });
    const current = planBindings({ pipeline, sourceSha256: prepared.source.sha256, stateSerial, baseUrl: run.request.plan.baseUrl, groupId: prepared.groupId });
    const stale = staleBindings(saved.bindings, current);
    const differences = planDifferences(saved.plan, prepared.plan);
    if (stale.length > 0 || differences.length > 0) {
      throw new UserFacingError(`${path}: the saved revert no longer holds: ${[...stale, ...differences].slice(0, 10).join('; ')}.`, {
        hint: `Nothing was written. Make it again with \`rostersync revert ${pipeline.file} ${saved.revert.runId} --out ${path}\` and review it.`,
      });
    }
    if (saved.plan.refused) {
      throw new UserFacingError(`${path}: this revert was refused by ${prepared.plan.guards.filter((g) => g.tripped).map((g) => g.guard).join(', ')} and cannot be applied.`, {
        hint: `Make it again with ${prepared.plan.guards.filter((g) => g.tripped).map((g) => g.allowWith).join(' ')} if these changes are intended.`,
        exitCode: EXIT.guard,
      });
    }
    prepared.notes.push(savedRevertNote(path, saved.createdAt));
    return runPlan(prepared, run.request);
  });
}

/** What to undo: the run, and the records to undo anyway or to leave. */
interface RevertAsked {
  revertOf: string;
  force: readonly string[];
  skip: readonly string[];
}

/** Everything before the first write: the run, its journal and where it wrote, the read-back, the plan; conflicts refuse here. */
async function prepareRevert(run: Pick<RunContext, 'pipeline' | 'store' | 'runId' | 'now' | 'client' | 'request'>, asked: RevertAsked): Promise<PreparedRun> {
  const { pipeline, store } = run;
  const request = run.request.plan;
  const startedAt = run.now();
  const revertOf = asked.revertOf === LAST_RUN ? lastWritingRun(store, pipeline.name) : asked.revertOf;
  const reverted = store.findRun(revertOf);
  if (!reverted) {
    const recent = store.recentRuns(5).map((r) => r.id);
    throw new UserFacingError(`pipeline "${pipeline.name}" has no run ${revertOf} in its state (${store.path}).`, {
      hint: `Run ids are the report folder names (reports/${pipeline.name}/<run id>)${recent.length > 0 ? `; the latest runs are ${recent.join(', ')}` : ''}.`,
      exitCode: EXIT.usage,
    });
  }
  if (reverted.dryRun) throw new UserFacingError(`run ${revertOf} was a dry run (a plan): it wrote nothing, so there is nothing to undo.`, { exitCode: EXIT.usage });
  // Before any call: the state is used only against the service and group it is bound to, and
  // the run only where it wrote (src/revert/journal.ts).
  checkBinding(store, pipeline, { baseUrl: request.baseUrl });
  const entries = store.runJournal(revertOf);
  const target = revertTarget(reverted, entries, store.identity());
  const groupId = target.groupId;
  const client = run.client();
  const labels = await fieldLabels(pipeline, await readFieldListing(client, request));

  const clientIds = [...new Set(entries.map((entry) => entry.clientId))];
  const unknown = [...asked.force, ...asked.skip].filter((id) => !clientIds.includes(id));
  if (unknown.length > 0) {
    throw new UserFacingError(`run ${revertOf} wrote no record ${unknown.join(', ')}: --force-record and --skip-record name client_ids the run wrote.`, { exitCode: EXIT.usage });
  }
  const skip = new Set(asked.skip);
  const read = clientIds.filter((id) => !skip.has(id));
  const remote = await fetchHeld({ client, groupId, clientIds: read, call: request.signal ? { signal: request.signal } : {}, concurrency: 4 });
  const history = store.journalOf(clientIds);
  const planned: RevertPlan = buildRevertPlan({
    runId: revertOf,
    entries,
    history,
    revertsOfRun: revertsOf(store, revertOf, history),
    remote,
    owned: store.lastApplied(clientIds),
    claims: store.claimOwners(target, clientIds),
    pipeline: pipeline.name,
    managedFields: labels.managedFields,
    setFields: labels.setFields,
    force: new Set(asked.force),
    skip,
    fieldLabels: labels.names,
    policy: { guards: pipeline.config.policy.guards, max_rps: request.maxRps ?? pipeline.config.policy.max_rps },
    ownedCount: store.ownedCount(),
    ...(request.allow.deletes !== undefined ? { allowDeletes: request.allow.deletes } : {}),
  });
  if (planned.conflicts.length > 0) throw conflictsError(revertOf, planned);
  return {
    runId: run.runId,
    startedAt,
    pipeline,
    client,
    store,
    roster: emptyRoster(),
    plan: planned.plan,
    groupId,
    source: { file: pipeline.source.file, sha256: revertSource(revertOf), format: pipeline.source.format },
    optionLabels: labels.options,
    notes: planned.notes,
    revertOf,
  };
}

/** Records changed since the run, or not the pipeline's to delete: nothing is written until each is decided. */
function conflictsError(revertOf: string, planned: RevertPlan): UserFacingError {
  const { conflicts } = planned;
  const forcible = conflicts.filter((c) => c.forcible).map((c) => c.clientId);
  const fixed = conflicts.filter((c) => !c.forcible).map((c) => c.clientId);
  return new UserFacingError(
    `cannot revert run ${revertOf}: ${conflicts.length} record${conflicts.length === 1 ? '' : 's'} cannot be restored as ${conflicts.length === 1 ? 'it stands' : 'they stand'}: ${conflicts.slice(0, 20).map((c) => c.message).join('; ')}${conflicts.length > 20 ? '; …' : ''}. Nothing was written.`,
    {
      hint: [
        forcible.length > 0 ? `For each changed record, decide: \`--force-record <client_id>\` undoes the run's write anyway (the later change is lost), \`--skip-record <client_id>\` leaves it as it is. E.g. ${forcible.slice(0, 3).map((id) => `--skip-record ${id}`).join(' ')}.` : '',
        fixed.length > 0 ? `No flag makes revert delete a record that is not the pipeline's; \`--skip-record\` leaves ${fixed.slice(0, 3).map((id) => `--skip-record ${id}`).join(' ')}${fixed.length > 3 ? ' …' : ''} as ${fixed.length === 1 ? 'it is' : 'they are'}.` : '',
      ]
        .filter(Boolean)
        .join(' '),
      exitCode: EXIT.guard,
    },
  );
}

/** The runs among `history` that revert `runId` (source `revert:<runId>`): their writes are that revert's, done earlier. */
function revertsOf(store: StateBackend, runId: string, history: readonly JournalEntry[]): Set<string> {
  const runs = new Set(history.map((entry) => entry.runId).filter((id) => id !== runId));
  return new Set([...runs].filter((id) => store.findRun(id)?.sourceSha256 === revertSource(runId)));
}

/**
 * The run id `last` stands for: the latest run that journaled a write. A revert that finished is
 * such a run (`last` twice undoes the undo); a revert that did not finish (killed, stopped, a
 * record failed) stands for the run it was undoing, so the same command again finishes the job
 * instead of undoing half of it. Its own id still names it.
 */
export const LAST_RUN = 'last';

function lastWritingRun(store: StateBackend, pipeline: string): string {
  const found = store.lastWritingRun();
  if (!found) throw new UserFacingError(`pipeline "${pipeline}" has no run that wrote anything: nothing to undo.`, { exitCode: EXIT.usage });
  const undoing = found.sourceSha256?.startsWith(revertSource('')) ? found.sourceSha256.slice(revertSource('').length) : undefined;
  const finished = found.finishedAt !== null && found.outcome === 'success';
  return undoing !== undefined && !finished ? undoing : found.id;
}

/** Field names for the diff and which fields are sets; a mapping that no longer compiles only costs the names. */
function fieldLabels(pipeline: ResolvedPipeline, listing: CustomFieldsListing) {
  // Every custom field by name, managed or not: a conflict names the fields editors changed.
  const names = new Map(listing.author_from_group.map((field) => [field.api_id, field.name] as const));
  const optionNames = new Map(listing.author_from_group.flatMap((field) => (field.options ?? []).map((option) => [option.api_id, option.option] as const)));
  try {
    const compiled = compileMapping(pipeline.mapping, listing, { mappingFile: pipeline.mappingFile });
    return { names: new Map([...names, ...Object.entries(compiled.fieldNames)]), managedFields: compiled.managedFields, setFields: compiled.setFields, options: optionNames };
  } catch {
    return { names, managedFields: [] as string[], setFields: new Set<string>(), options: optionNames };
  }
}

/** A revert reads no roster. */
function emptyRoster(): ReportedRoster {
  return {
    counts: { rowsRead: 0, valid: 0, rejected: 0, filtered: 0, duplicatesIgnored: 0 },
    knownRows: 0,
    rejected: [],
    rejectedNotStored: 0,
    duplicateClientIds: new Set(),
    warnings: [],
    rejectedClientIds: new Set(),
    unidentifiedRejected: 0,
  };
}
