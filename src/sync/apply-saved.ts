/**
 * `rostersync apply plan.json`: applies a saved plan after proving that it was made by this
 * state (its HMAC signature, keyed with the state's secret), that it still describes the world
 * it was computed against (pipeline, mapping, source, inventory, service and group), and that
 * every one of its actions is still what a run would do now: the plan is made again against the
 * current inventory and claims, with the same flags, so every guard runs again too. Then the
 * second half of a run (sync/run-plan.ts) runs as `sync` does.
 */
import { resolve } from 'node:path';
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';
import { buildPlan } from '../plan/build.js';
import { gatherPlanInput } from './gather.js';
import type { RunOptions, RunResult } from './options.js';
import { planBindings, planDifferences, readPlanFile, staleBindings, verifyPlanDigest } from './plan-file.js';
import { runPlan } from './run-plan.js';
import { reportedRoster } from '../report/build.js';
import { savedPlanNote } from '../report/run-notes.js';
import { applySavedRevert } from './revert.js';
import { withRun } from './run-context.js';

export async function applySavedPlan(planPath: string, options: Omit<RunOptions, 'pipelinePath' | 'refresh' | 'dryRun'>): Promise<RunResult> {
  const path = resolve(options.cwd ?? process.cwd(), planPath);
  const saved = await readPlanFile(path);
  // A plan saved by `rostersync revert --out` is planned again from the journal, not the roster.
  if (saved.revert) return applySavedRevert(path, { ...saved, revert: saved.revert }, options);
  // The flags the plan was made with: the guards run again with exactly these.
  return withRun({ ...options, ...saved.options, pipelinePath: saved.bindings.pipelineFile }, async (run) => {
    const { pipeline, store, runId, rowKeys, created, request } = run;
    verifyPlanDigest(path, saved, store.planSecret());
    if (saved.plan.refused) {
      const tripped = saved.plan.guards.filter((g) => g.tripped);
      throw new UserFacingError(`${path}: this plan was refused by ${tripped.map((g) => g.guard).join(', ')} and cannot be applied.`, {
        hint: `Make the plan again with ${tripped.map((g) => g.allowWith).join(' ')} if these changes are intended.`,
        exitCode: EXIT.guard,
      });
    }
    run.lock();
    const client = run.client();
    const gathered = await gatherPlanInput({ pipeline, store, client, request: request.plan, rowKeys, created });
    const current = planBindings({
      pipeline,
      sourceSha256: gathered.source.sha256,
      stateSerial: gathered.stateSerial,
      baseUrl: request.plan.baseUrl,
      groupId: gathered.groupId,
    });
    const stale = staleBindings(saved.bindings, current);
    if (stale.length > 0) {
      throw new UserFacingError(`${path}: the plan is stale: ${stale.join('; ')}.`, {
        hint: `Make a new plan with \`rostersync plan ${pipeline.file} --out ${planPath}\` and review it again.`,
      });
    }
    const plan = buildPlan(gathered.planInput);
    const differences = planDifferences(saved.plan, plan);
    if (differences.length > 0) {
      throw new UserFacingError(
        `${path}: ${differences.length} action${differences.length === 1 ? '' : 's'} of the saved plan ${differences.length === 1 ? 'is' : 'are'} not what the current inventory and claims allow: ${differences.slice(0, 10).join('; ')}${differences.length > 10 ? '; …' : ''}.`,
        { hint: `Nothing was written. Make a new plan with \`rostersync plan ${pipeline.file} --out ${planPath}\` and review it again.` },
      );
    }
    return await runPlan(
      {
        runId,
        startedAt: run.now(),
        pipeline,
        client,
        store,
        roster: reportedRoster(gathered.roster),
        plan,
        rowKeys,
        groupId: gathered.groupId,
        source: gathered.source,
        optionLabels: gathered.optionLabels,
        notes: [...gathered.notes, savedPlanNote(path, saved.createdAt)],
      },
      request,
    );
  });
}
