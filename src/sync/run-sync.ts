/**
 * One run of a pipeline, the data flow of CONTRIBUTING.md ("How a run flows") end to end, one phase per module:
 *
 *   gather the plan's input (sync/gather.ts: listing, mapping, roster, inventory, --refresh)
 *   → plan (plan/build.ts, pure, guards included: plan/guards.ts)
 *   → guard → apply → record → report (sync/run-plan.ts: apply/ is the only writer,
 *     sync/record.ts journals the run, report/ builds and writes the report)
 *
 * A dry run is the same code path stopped before apply: every lookup, validation and guard runs.
 * `plan --out` stops at the same point and saves the plan; `apply plan.json` (sync/apply-saved.ts)
 * resumes from it after checking that nothing it was computed against has changed.
 */
import { resolve } from 'node:path';
import { buildPlan } from '../plan/build.js';
import { GONE_GROUP_META } from '../state/binding.js';
import { earlyFailureReport, estimateText, reportedRoster, reportHeader } from '../report/build.js';
import { GroupGoneError } from './drift.js';
import { exitCodeOf } from './exit-code.js';
import { gatherPlanInput } from './gather.js';
import type { RunOptions, RunResult } from './options.js';
import { planOptionsOf, savePreparedPlan } from './plan-file.js';
import { recordEarlyFailure } from './record.js';
import { runPlan, type PreparedRun } from './run-plan.js';
import { withRun, type RunContext } from './run-context.js';

export type { RunOptions, RunResult } from './options.js';

export async function runSync(options: RunOptions): Promise<RunResult> {
  return withRun(options, async (run) => {
    const { pipeline, store, request } = run;
    if (!request.write.dryRun) run.lock();
    const startedAt = run.now();
    const savePlanTo = options.savePlanTo === undefined ? undefined : resolve(run.cwd, options.savePlanTo);
    const { prepared, stateSerial } = await gatherAndPlan(run, startedAt, savePlanTo !== undefined).catch(async (error: unknown) => {
      // The drift check found the group gone: remembered, so that no later hint proposes going back
      // to it (gather only reads; the run writes what it learned).
      if (error instanceof GroupGoneError) store.setMeta(GONE_GROUP_META, String(error.groupId));
      // The alerts of a run that failed before planning end with the command's own signal only.
      await recordEarlyFailure({ pipeline, store, report: failedBeforePlanning(run, startedAt, error), options: { ...request.report, signal: options.signal } });
      throw error;
    });
    if (savePlanTo !== undefined) {
      await savePreparedPlan(savePlanTo, { prepared, stateSerial, secret: store.planSecret(), baseUrl: request.plan.baseUrl, options: planOptionsOf(options), now: run.now() });
    }
    return await runPlan(prepared, request);
  });
}

/** gather → plan: everything before the first write. */
async function gatherAndPlan(run: RunContext, startedAt: number, savingPlan: boolean): Promise<{ prepared: PreparedRun; stateSerial: number }> {
  const { pipeline, store, runId, rowKeys, created, request } = run;
  const { dryRun, logger } = request.write;
  const client = run.client();
  const gathered = await gatherPlanInput({ pipeline, store, client, request: request.plan, rowKeys, created, driftCheck: !dryRun ? 'read' : savingPlan ? undefined : 'count', groupProbe: dryRun });
  const plan = buildPlan(gathered.planInput);
  const { roster } = gathered;
  logger?.info(
    { runId, pipeline: pipeline.name, dryRun, rows: roster.counts.rowsRead, valid: roster.counts.valid, rejected: roster.counts.rejected, plan: plan.counts, refused: plan.refused },
    `planned: ${estimateText(plan.estimate)}`,
  );
  // The roster's ids (a million at a million rows) are let go here: apply and the report do not need them.
  const prepared = { runId, startedAt, pipeline, client, store, roster: reportedRoster(roster), plan, rowKeys, groupId: gathered.groupId, source: gathered.source, optionLabels: gathered.optionLabels, notes: gathered.notes, ...(gathered.drift ? { drift: gathered.drift } : {}), ...(gathered.nextDriftWindow ? { nextDriftWindow: gathered.nextDriftWindow } : {}) };
  return { prepared, stateSerial: gathered.stateSerial };
}

function failedBeforePlanning(run: RunContext, startedAt: number, error: unknown) {
  const { pipeline } = run;
  return earlyFailureReport({
    base: reportHeader({
      runId: run.runId,
      pipeline,
      source: { file: pipeline.source.file, sha256: '', format: pipeline.source.format },
      target: { baseUrl: run.request.plan.baseUrl, groupId: run.store.groupId() },
      dryRun: run.request.write.dryRun,
      startedAt,
      exitCode: exitCodeOf(error),
      message: error instanceof Error ? error.message : String(error),
    }),
    startedAt,
    finishedAt: run.now(),
  });
}
