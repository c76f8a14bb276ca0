/**
 * `rostersync apply plan.json`: applies a saved plan after proving it still describes the world
 * it was computed against (pipeline, mapping, source, inventory, service and group), then runs
 * the second half of a run (sync/run-plan.ts) as `sync` does.
 */
import { resolve } from 'node:path';
import { loadPipeline } from '../config/load.js';
import { EXIT, UserFacingError } from '../errors.js';
import type { RosterSummary } from '../mapping/roster.js';
import { sha256File } from '../sources/sha256-file.js';
import { resolveGroupId } from '../state/group-id.js';
import { holdLock } from '../state/lock.js';
import { openState } from '../state/paths.js';
import { clientForPolicy } from './client-for-pipeline.js';
import type { RunOptions, RunResult } from './options.js';
import { planBindings, readPlanFile, staleBindings } from './plan-file.js';
import { runPlan } from './run-plan.js';
import { newRunId } from './run-id.js';

export async function applySavedPlan(planPath: string, options: Omit<RunOptions, 'pipelinePath' | 'refresh' | 'dryRun'>): Promise<RunResult> {
  const now = options.now ?? Date.now;
  const path = resolve(options.cwd ?? process.cwd(), planPath);
  const saved = await readPlanFile(path);
  if (saved.plan.refused) {
    const tripped = saved.plan.guards.filter((g) => g.tripped);
    throw new UserFacingError(`${path}: this plan was refused by ${tripped.map((g) => g.guard).join(', ')} and cannot be applied.`, {
      hint: `Make the plan again with ${tripped.map((g) => g.allowWith).join(' ')} if these changes are intended.`,
      exitCode: EXIT.guard,
    });
  }
  const pipeline = loadPipeline(saved.bindings.pipelineFile);
  const store = openState(pipeline, options);
  const runId = newRunId(now());
  let unlock = () => {};
  try {
    unlock = holdLock(store, runId);
    const groupId = resolveGroupId(pipeline, store);
    const current = planBindings({
      pipeline,
      sourceSha256: await sha256File(pipeline.source.file),
      stateSerial: store.serial(),
      baseUrl: options.service.baseUrl,
      groupId,
    });
    const stale = staleBindings(saved.bindings, current);
    if (stale.length > 0) {
      throw new UserFacingError(`${path}: the plan is stale: ${stale.join('; ')}.`, {
        hint: `Make a new plan with \`rostersync plan ${pipeline.file} --out ${planPath}\` and review it again.`,
      });
    }
    // The saved plan carries the input side of the report, not the rows themselves.
    const roster: RosterSummary = {
      counts: { ...saved.input, duplicatesIgnored: 0 },
      rejected: [],
      rejectedNotStored: saved.input.rejected,
      duplicateClientIds: new Set(),
      warnings: [],
      rejectedClientIds: new Set(),
      unidentifiedRejected: 0,
    };
    return await runPlan(
      {
        runId,
        startedAt: now(),
        pipeline,
        client: clientForPolicy(pipeline.config.policy, options),
        store,
        roster,
        plan: saved.plan,
        groupId,
        source: saved.source,
        optionLabels: new Map(Object.entries(saved.optionLabels)),
        notes: [`applied the saved plan ${path} made at ${saved.createdAt}.`],
      },
      { ...options, pipelinePath: pipeline.file },
    );
  } finally {
    unlock();
    store.close();
  }
}
