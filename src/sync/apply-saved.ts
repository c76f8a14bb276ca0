/**
 * `rostersync apply plan.json`: applies a saved plan after proving it still describes the world
 * it was computed against (pipeline, mapping, source, inventory, service and group).
 */
import { resolve } from 'node:path';
import { createClient } from '../client/client.js';
import { loadPipeline } from '../config/load.js';
import { EXIT, UserFacingError } from '../errors.js';
import type { RosterSummary } from '../mapping/roster.js';
import type { Plan } from '../plan/types.js';
import { sha256File } from '../sources/sha256-file.js';
import { planBindings, readPlanFile, staleBindings } from './plan-file.js';
import { finishRun, lock, openState, type RunOptions, type RunResult } from './run-sync.js';
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
    unlock = lock(store, runId);
    const configuredGroup = 'group_id' in pipeline.config.target ? pipeline.config.target.group_id : null;
    const groupId = configuredGroup ?? store.groupId();
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
    const policy = pipeline.config.policy;
    const client = createClient({
      baseUrl: options.service.baseUrl,
      apiKey: options.service.apiKey,
      rateLimit: { rps: options.maxRps ?? policy.max_rps, burst: policy.burst, maxInFlight: options.concurrency ?? policy.concurrency },
      ...(options.logger ? { logger: options.logger } : {}),
      ...options.client,
    });
    const roster: RosterSummary = {
      counts: { ...saved.input, duplicatesIgnored: 0 },
      rejected: [],
      rejectedNotStored: saved.input.rejected,
      duplicateClientIds: new Set(),
      warnings: [],
      rejectedClientIds: new Set(),
      unidentifiedRejected: 0,
    };
    return await finishRun(
      {
        runId,
        startedAt: now(),
        pipeline,
        client,
        store,
        roster,
        plan: saved.plan as Plan,
        groupId,
        bindings: current,
        source: saved.source,
        notes: [`applied the saved plan ${path} made at ${saved.createdAt}.`],
      },
      { ...options, pipelinePath: pipeline.file },
    );
  } finally {
    unlock();
    store.close();
  }
}
