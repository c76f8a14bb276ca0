/**
 * Where a pipeline's state lives. State sits beside the pipeline file by default
 * (`state_dir: .rostersync`, relative to the pipeline's directory), so a cron job finds the same
 * inventory whatever its working directory.
 */
import { join, resolve } from 'node:path';
import type { ResolvedPipeline } from '../config/load.js';
import { StateStore } from './store.js';

export interface StateLocation {
  /** `--state-dir`, relative to `cwd`; overrides the pipeline's `state_dir`. */
  stateDir?: string;
  cwd?: string;
}

export function stateFile(pipeline: ResolvedPipeline, options: StateLocation = {}): string {
  const dir = options.stateDir ? resolve(options.cwd ?? process.cwd(), options.stateDir) : resolve(pipeline.dir, pipeline.config.state_dir ?? '.rostersync');
  return join(dir, `${pipeline.name}.sqlite`);
}

export function openState(pipeline: ResolvedPipeline, options: StateLocation = {}): StateStore {
  return StateStore.open(stateFile(pipeline, options), pipeline.name);
}
