/**
 * Where a run's report goes: `--report-dir` if given, else `<report_dir>/<pipeline>/<run id>`
 * beside the pipeline file (`report_dir: reports` by default), whatever the working directory.
 * `ROSTERSYNC_REPORT_DIR` replaces every pipeline's `report_dir` (the container image points it
 * at its /reports volume, so history and retention keep working there).
 */
import { join, resolve } from 'node:path';
import type { ResolvedPipeline } from '../config/load.js';

export function reportDirFor(pipeline: ResolvedPipeline, runId: string, options: { reportDir?: string; cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  if (options.reportDir) return resolve(options.cwd ?? process.cwd(), options.reportDir);
  return join(reportRootFor(pipeline, options.env), runId);
}

/**
 * The pipeline's report folder, `<report_dir>/<pipeline>`: its run history (`history/`,
 * `index.html`) and, by default, one folder per run, pruned by `policy.reports.keep`.
 */
export function reportRootFor(pipeline: ResolvedPipeline, env: NodeJS.ProcessEnv = {}): string {
  const base = env.ROSTERSYNC_REPORT_DIR ? resolve(env.ROSTERSYNC_REPORT_DIR) : resolve(pipeline.dir, pipeline.config.report_dir ?? 'reports');
  return join(base, pipeline.name);
}
