/**
 * The second half of a run, shared by `sync` and `apply plan.json`: from a plan to a recorded
 * run. guard → apply → record → report:
 * - guard: a plan refused by a tripped guard (plan/guards.ts) is not applied; a dry run stops here too;
 * - apply: the group is created if need be and the plan's items are written (apply/, the only writer);
 * - record: the run's outcome and exit code are decided, journaled in the state, and the report written.
 */
import { writePlan } from '../apply/apply.js';
import type { ApplyResult } from '../plan/outcomes.js';
import { ensureGroup } from '../apply/group.js';
import type { ServiceClient } from '../client/client.js';
import type { ResolvedPipeline } from '../config/load.js';
import { EXIT } from '../errors/user-facing-error.js';
import { planItemCount, type Plan } from '../plan/types.js';
import type { RowKeyRepairs } from '../plan/row-key-repairs.js';
import { buildRunReport, reportHeader, reportRecords, type ReportedRoster, type ReportHeader } from '../report/build.js';
import type { RunReport } from '../report/types.js';
import type { StateBackend } from '../state/backend.js';
import { failureDuringApply } from './exit-code.js';
import type { RunResult } from './options.js';
import type { RunRequest, WriteRequest } from './run-request.js';
import { rejectsNote } from '../report/run-notes.js';
import { refusalMessage, rejectsVerdict } from '../report/plan-text.js';
import { recordRun } from './record.js';
import { saveDriftWindow, type DriftWindowState } from './drift-window.js';
import { judgeRejects } from '../plan/rejects-tolerance.js';
import { GONE_GROUP_META } from '../state/binding.js';

/** Everything known before the first write. */
export interface PreparedRun {
  runId: string;
  startedAt: number;
  pipeline: ResolvedPipeline;
  client: ServiceClient;
  store: StateBackend;
  /** The roster without its ids: planning needed them, apply and the report do not. */
  roster: ReportedRoster;
  plan: Plan;
  /** Row keys apply stores before any call (gathered beside the plan, not part of it). */
  rowKeys?: RowKeyRepairs;
  /** The group the plan was made for; null when apply is to create it. */
  groupId: number | null;
  source: RunReport['source'];
  optionLabels?: ReadonlyMap<string, string>;
  notes: string[];
  /** What the drift check found (sync/drift.ts). */
  drift?: RunReport['drift'];
  /** Where the drift check's window starts next (sync/drift-window.ts): saved once every write was attempted. */
  nextDriftWindow?: DriftWindowState;
  /** The run this one undoes (`rostersync revert`, sync/revert.ts). */
  revertOf?: string;
}

interface Verdict {
  outcome: RunReport['outcome'];
  exitCode: number;
  message?: string;
  groupId: number | null;
}

export async function runPlan(prepared: PreparedRun, request: RunRequest): Promise<RunResult> {
  const { store, plan } = prepared;
  const { dryRun } = request.write;
  store.startRun({ id: prepared.runId, dryRun, sourceSha256: prepared.source.sha256 });

  if (plan.refused) {
    const message = refusalMessage(plan.guards);
    return record(prepared, withRejected(prepared, { outcome: 'refused', exitCode: EXIT.guard, message, groupId: prepared.groupId }), undefined, request);
  }
  if (dryRun) return record(prepared, withRejected(prepared, { outcome: 'dry_run', exitCode: EXIT.ok, groupId: prepared.groupId }), undefined, request);

  let groupId = prepared.groupId;
  const boundBefore = store.identity();
  let applied: ApplyResult | undefined;
  let callsMade: number | undefined;
  try {
    const group = await ensureGroup({
      groupId,
      pipeline: prepared.pipeline,
      baseUrl: request.write.baseUrl,
      ...(request.write.createGroup ? { createGroup: true } : {}),
      store,
      creator: prepared.client,
      ...(request.write.signal ? { signal: request.write.signal } : {}),
    });
    groupId = group.groupId;
    prepared.notes.push(...group.notes);
    const callsBefore = prepared.client.stats().calls;
    applied = await apply(prepared, group.groupId, request.write);
    callsMade = prepared.client.stats().calls - callsBefore;
    // The window moves on only when the records it found drifted were written again (or journaled
    // as failed, so retried): a run stopped early reads them again next time.
    if (prepared.nextDriftWindow && !applied.stopped) saveDriftWindow(store, prepared.nextDriftWindow);
    if (applied.stopped?.reason === 'group_gone') groupGone(prepared, applied, boundBefore.groupId);
  } catch (raw) {
    // Nothing else can be written (group creation failed, or the run stopped early): still
    // journal the run and write its report before letting the error reach the CLI. An unexpected
    // failure here may follow writes, so it does not exit 1 ("nothing was written").
    const error = failureDuringApply(raw);
    await record(prepared, { outcome: 'failed', exitCode: error.exitCode, message: error.message, groupId }, applied, request);
    throw error;
  }
  return record(prepared, withRejected(prepared, appliedVerdict(applied, groupId)), applied, request, callsMade);
}

/**
 * The service answered 404 for the group. A group this state was never bound to did not "go": it
 * never existed (a mistyped group_id), so the state is not left bound to it and the message says
 * so. A group it was bound to is remembered as gone, so no later hint proposes going back to it.
 */
function groupGone(prepared: PreparedRun, applied: ApplyResult, boundGroup: number | null): void {
  const { store, pipeline } = prepared;
  const groupId = store.identity().groupId;
  const wrote = [...applied.outcomes.values()].some((o) => o.outcome === 'done');
  if (groupId !== null) store.setMeta(GONE_GROUP_META, String(groupId));
  if (boundGroup !== null || wrote || groupId === null || !applied.stopped) return;
  store.retarget({ baseUrl: store.identity().baseUrl, groupId: null });
  const pinned = 'group_id' in pipeline.config.target;
  applied.stopped.message =
    `group ${groupId} does not exist in the service (or is another organization's): the first write to it was answered 404, and nothing was written. ` +
    (pinned ? `Check target.group_id in ${pipeline.file}` : `Check the id given to \`rostersync state set-group\``) +
    '; the state was left unbound, so the next run with the right id needs no rebind';
}

function apply(prepared: PreparedRun, groupId: number, options: WriteRequest): Promise<ApplyResult> {
  const total = planItemCount(prepared.plan);
  let done = 0;
  return writePlan({
    plan: prepared.plan,
    ...(prepared.rowKeys ? { rowKeys: prepared.rowKeys } : {}),
    groupId,
    writer: prepared.client,
    store: prepared.store,
    runId: prepared.runId,
    concurrency: options.concurrency ?? prepared.pipeline.config.policy.concurrency,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.maxDurationMs !== undefined ? { deadline: prepared.startedAt + options.maxDurationMs } : {}),
    now: options.now,
    onOutcome: (item, result) => {
      if (result.outcome === 'failed') options.logger?.warn({ runId: prepared.runId, clientId: item.clientId, action: item.action, status: result.httpStatus }, 'record failed');
      options.onProgress?.(++done, total);
    },
  });
}

function appliedVerdict(applied: ApplyResult, groupId: number): Verdict {
  const failed = [...applied.outcomes.values()].filter((o) => o.outcome === 'failed').length;
  if (applied.stopped) {
    const { reason } = applied.stopped;
    return {
      outcome: reason === 'interrupted' ? 'interrupted' : reason === 'deadline' ? 'partial' : 'failed',
      exitCode: reason === 'deadline' && failed > 0 ? EXIT.partial : applied.stopped.exitCode,
      message: applied.stopped.message,
      groupId,
    };
  }
  if (failed > 0) return { outcome: 'partial', exitCode: EXIT.partial, message: `${failed} record${failed === 1 ? '' : 's'} failed; they are planned again on the next run.`, groupId };
  return { outcome: 'success', exitCode: EXIT.ok, groupId };
}

/**
 * Rejected rows are records that could not be synced: a run that skipped them finishes, but it
 * says so with exit 2 (dry runs too, as the real run would), so a nightly job does not hide them,
 * unless `policy.rejects` tolerates that many: then a finished run exits 0 with the outcome
 * `warning`, and the report and rejected.csv still list every row.
 */
function withRejected(prepared: PreparedRun, verdict: Verdict): Verdict {
  const counts = prepared.roster.counts;
  if (verdict.exitCode !== EXIT.ok || counts.rejected === 0 || verdict.outcome === 'interrupted') return verdict;
  const judged = rejectsVerdict(judgeRejects(counts, prepared.pipeline.config.policy.rejects));
  const note = rejectsNote(judged.text);
  const message = [verdict.message, note].filter(Boolean).join(' ');
  if (judged.tolerated) return { ...verdict, outcome: verdict.outcome === 'success' ? 'warning' : verdict.outcome, message };
  return { ...verdict, exitCode: EXIT.partial, outcome: verdict.outcome === 'success' ? 'partial' : verdict.outcome, message };
}

async function record(prepared: PreparedRun, verdict: Verdict, applied: ApplyResult | undefined, request: RunRequest, callsMade?: number): Promise<RunResult> {
  const { pipeline } = prepared;
  const base: ReportHeader = reportHeader({
    runId: prepared.runId,
    pipeline,
    source: prepared.source,
    target: reportTarget(prepared, verdict.groupId, request.write.baseUrl),
    dryRun: request.write.dryRun,
    revertOf: prepared.revertOf,
    startedAt: prepared.startedAt,
    outcome: verdict.outcome,
    exitCode: verdict.exitCode,
    message: verdict.message,
    limiter: { ...prepared.client.stats() },
    drift: prepared.drift,
  });
  const report = buildRunReport({
    base,
    plan: prepared.plan,
    roster: prepared.roster,
    ...(applied ? { applied } : {}),
    ...(callsMade !== undefined ? { callsMade } : {}),
    ...(prepared.optionLabels ? { optionLabels: prepared.optionLabels } : {}),
    startedAt: prepared.startedAt,
    finishedAt: request.write.now(),
    notes: prepared.notes,
  });
  const records = () => reportRecords({ plan: prepared.plan, ...(applied ? { applied } : {}), ...(prepared.optionLabels ? { optionLabels: prepared.optionLabels } : {}) });
  const written = await recordRun({ pipeline, store: prepared.store, report, validRecords: prepared.roster.counts.valid, records, options: request.report });
  return { report, exitCode: verdict.exitCode, written };
}

/**
 * The group as the report names it: the pipeline's `target.group`, else the name the state kept
 * when the group was created (a pinned `group_id` carries no name, and groups cannot be listed).
 * A run that has no group yet plans its creation (only with --create-group: checkBinding refuses
 * otherwise), and the report shows that creation as a change like any other.
 */
function reportTarget(prepared: PreparedRun, groupId: number | null, baseUrl: string): RunReport['target'] {
  const target = prepared.pipeline.config.target;
  const spec = 'group' in target ? target.group : undefined;
  const groupName = spec?.name ?? prepared.store.identity().groupName ?? undefined;
  return {
    baseUrl,
    groupId,
    ...(groupName !== undefined ? { groupName } : {}),
    ...(groupId === null && spec ? { groupToCreate: { ownerTeam: spec.owner_team, editorTeams: spec.editor_teams, viewerTeams: spec.viewer_teams } } : {}),
  };
}
