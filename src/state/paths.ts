/**
 * Where a pipeline's SQLite state lives. It sits beside the pipeline file by default
 * (`state_dir: .rostersync`, relative to the pipeline's directory), so a cron job finds the same
 * inventory whatever its working directory. A shared PostgreSQL database replaces it when
 * ROSTERSYNC_STATE_URL or the pipeline's `state:` key names one (src/state/open.ts).
 */
import { join, resolve } from 'node:path';
import type { ResolvedPipeline } from '../config/load.js';

export interface StateLocation {
  /** `--state-dir`, relative to `cwd`; overrides the pipeline's `state_dir`. */
  stateDir?: string;
  cwd?: string;
  /** Where ROSTERSYNC_STATE_URL and the database password are read (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

export function stateFile(pipeline: ResolvedPipeline, options: StateLocation = {}): string {
  const dir = options.stateDir ? resolve(options.cwd ?? process.cwd(), options.stateDir) : resolve(pipeline.dir, pipeline.config.state_dir ?? '.rostersync');
  return join(dir, `${pipeline.name}.sqlite`);
}
