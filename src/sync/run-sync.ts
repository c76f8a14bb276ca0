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
import { loadPipeline, type ResolvedPipeline } from '../config/load.js';
import { buildPlan } from '../plan/build.js';
import { RowKeyRepairs } from '../plan/row-key-repairs.js';
import { NewRecords } from '../plan/new-records.js';
import { boundHeapGrowth } from './bounded-heap.js';
import { earlyFailureReport, estimateText, reportHeader } from '../report/build.js';
import type { StateBackend } from '../state/backend.js';
import { clientForPipeline } from './client-for-pipeline.js';
import { exitCodeOf } from './exit-code.js';
import { gatherPlanInput } from './gather.js';
import type { RunOptions, RunResult } from './options.js';
import { savePreparedPlan } from './plan-file.js';
import { recordEarlyFailure } from './record.js';
import { runPlan, type PreparedRun } from './run-plan.js';
import { runRequestOf, type RunRequest } from './run-request.js';
import { withRunScope } from './run-scope.js';

export type { RunOptions, RunResult } from './options.js';

export async function runSync(options: RunOptions): Promise<RunResult> {
  const now = options.now ?? Date.now;
  const pipeline = loadPipeline(resolve(options.cwd ?? process.cwd(), options.pipelinePath));
  return withRunScope(pipeline, options, async ({ store, runId, signal, lock }) => {
    const rowKeys = new RowKeyRepairs();
    const created = new NewRecords({ onSpill: boundHeapGrowth });
    const request = runRequestOf({ ...options, signal });
    try {
      if (!options.dryRun) lock();
      const startedAt = now();
      const { prepared, stateSerial } = await gatherAndPlan({ pipeline, store, runId, startedAt, rowKeys, created }, options, request).catch(async (error: unknown) => {
        await recordEarlyFailure({ pipeline, store, report: failedBeforePlanning({ pipeline, store, runId, startedAt, error }, options), options });
        throw error;
      });
      if (options.savePlanTo) {
        await savePreparedPlan(resolve(options.cwd ?? process.cwd(), options.savePlanTo), { prepared, stateSerial, secret: store.planSecret(), options, now: now() });
      }
      return await runPlan(prepared, request);
    } finally {
      rowKeys.dispose();
      created.dispose();
    }
  });
}

/** gather → plan: everything before the first write. */
async function gatherAndPlan(
  run: { pipeline: ResolvedPipeline; store: StateBackend; runId: string; startedAt: number; rowKeys: RowKeyRepairs; created: NewRecords },
  options: RunOptions,
  request: RunRequest,
): Promise<{ prepared: PreparedRun; stateSerial: number }> {
  const { pipeline, store, runId, rowKeys, created } = run;
  const client = clientForPipeline(pipeline, options);
  const gathered = await gatherPlanInput({ pipeline, store, client, request: request.plan, rowKeys, created, driftCheck: options.dryRun !== true ? 'read' : options.savePlanTo ? undefined : 'count', groupProbe: options.dryRun === true });
  const plan = buildPlan(gathered.planInput);
  const { roster } = gathered;
  options.logger?.info(
    { runId, pipeline: pipeline.name, dryRun: options.dryRun === true, rows: roster.counts.rowsRead, valid: roster.counts.valid, rejected: roster.counts.rejected, plan: plan.counts, refused: plan.refused },
    `planned: ${estimateText(plan.estimate)}`,
  );
  const prepared = { runId, startedAt: run.startedAt, pipeline, client, store, roster, plan, rowKeys, groupId: gathered.groupId, source: gathered.source, optionLabels: gathered.optionLabels, notes: gathered.notes, ...(gathered.drift ? { drift: gathered.drift } : {}), ...(gathered.nextDriftWindow ? { nextDriftWindow: gathered.nextDriftWindow } : {}) };
  return { prepared, stateSerial: gathered.stateSerial };
}

function failedBeforePlanning(run: { pipeline: ResolvedPipeline; store: StateBackend; runId: string; startedAt: number; error: unknown }, options: RunOptions) {
  const { pipeline } = run;
  return earlyFailureReport({
    base: reportHeader({
      runId: run.runId,
      pipeline,
      source: { file: pipeline.source.file, sha256: '', format: pipeline.source.format },
      target: { baseUrl: options.service.baseUrl, groupId: run.store.groupId() },
      dryRun: options.dryRun === true,
      startedAt: run.startedAt,
      exitCode: exitCodeOf(run.error),
      message: run.error instanceof Error ? run.error.message : String(run.error),
    }),
    startedAt: run.startedAt,
    finishedAt: (options.now ?? Date.now)(),
  });
}
