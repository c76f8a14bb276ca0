/**
 * Where a pipeline's state lives. State sits beside the pipeline file by default
 * (`state_dir: .rostersync`, relative to the pipeline's directory), so a cron job finds the same
 * inventory whatever its working directory. A shared PostgreSQL database replaces it when
 * ROSTERSYNC_STATE_URL or the pipeline's `state:` key names one (src/state/postgres/).
 */
import { join, resolve } from 'node:path';
import type { ResolvedPipeline } from '../config/load.js';
import type { StateBackend } from './backend.js';
import { openPostgresState, sharedStateUrl } from './postgres/connect.js';
import { StateStore, type StateStoreOptions } from './store.js';

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

export function openState(pipeline: ResolvedPipeline, options: StateLocation = {}, storeOptions: StateStoreOptions = {}): StateBackend {
  const shared = sharedStateUrl(pipeline, options.env);
  if (shared) return openPostgresState(shared, pipeline.name, { ...storeOptions, ...(options.env ? { env: options.env } : {}) });
  return StateStore.open(stateFile(pipeline, options), pipeline.name, storeOptions);
}
