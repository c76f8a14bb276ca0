/**
 * Opens a pipeline's state: the shared PostgreSQL database when ROSTERSYNC_STATE_URL or the
 * pipeline's `state:` key names one (src/state/postgres/), else the SQLite file beside the
 * pipeline (src/state/paths.ts).
 */
import { existsSync } from 'node:fs';
import type { ResolvedPipeline } from '../config/load.js';
import type { StateBackend, StateStoreOptions } from './backend.js';
import { stateFile, type StateLocation } from './paths.js';
import { openPostgresState, sharedStateUrl } from './postgres/connect.js';
import { SqliteStateStore } from './sqlite/sqlite-store.js';

export function openState(pipeline: ResolvedPipeline, options: StateLocation = {}, storeOptions: StateStoreOptions = {}): StateBackend {
  const shared = sharedStateUrl(pipeline, options.env);
  if (shared) return openPostgresState(shared, pipeline.name, { ...storeOptions, ...(options.env ? { env: options.env } : {}) });
  return SqliteStateStore.open(stateFile(pipeline, options), pipeline.name, storeOptions);
}

/**
 * The pipeline's state if it has one (a shared database named, or the SQLite file present), for a
 * command that only reads it (`validate`): it never creates one.
 */
export function existingState(pipeline: ResolvedPipeline, options: StateLocation = {}): StateBackend | undefined {
  if (!sharedStateUrl(pipeline, options.env) && !existsSync(stateFile(pipeline, options))) return undefined;
  return openState(pipeline, options);
}
