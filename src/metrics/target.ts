/**
 * Which metrics file a run writes, if any: `--metrics-file` (any run it is given to, a plan
 * included) else the pipeline's `metrics.file` (real runs only: a plan or a dry run in a pull
 * request must not stand in for the nightly sync in the operators' dashboards).
 */
import { resolve } from 'node:path';
import type { ResolvedPipeline } from '../config/load.js';
import type { RunReport } from '../report/types.js';
import type { StateBackend } from '../state/backend.js';
import { writeRunMetrics } from './write.js';

export interface MetricsRequest {
  /** `--metrics-file`, resolved against `cwd`. */
  metricsFile?: string | undefined;
  cwd?: string | undefined;
}

export function metricsPathFor(pipeline: ResolvedPipeline, report: RunReport, request: MetricsRequest): string | undefined {
  if (request.metricsFile) return resolve(request.cwd ?? process.cwd(), request.metricsFile);
  const configured = pipeline.config.metrics?.file;
  if (configured && !report.dryRun) return resolve(pipeline.dir, configured);
  return undefined;
}

/** Writes the run's metrics where asked; the warnings say what could not be written. */
export async function recordMetrics(pipeline: ResolvedPipeline, store: StateBackend | undefined, report: RunReport, request: MetricsRequest): Promise<string[]> {
  const path = metricsPathFor(pipeline, report, request);
  if (!path) return [];
  return writeRunMetrics({ path, lastSuccessFallback: () => lastSuccessOf(store) }, report);
}

/** The state's last run that ended success or warning (the history keeps the newest runs). */
function lastSuccessOf(store: StateBackend | undefined): number | undefined {
  try {
    const run = store?.recentRuns(100).find((r) => !r.dryRun && r.finishedAt !== null && (r.outcome === 'success' || r.outcome === 'warning'));
    return run?.finishedAt ? Date.parse(run.finishedAt) : undefined;
  } catch {
    // A state that cannot be read here already said so in the report; the file simply lacks the value.
    return undefined;
  }
}
