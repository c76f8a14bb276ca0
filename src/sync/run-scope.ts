/**
 * What every command that runs a pipeline shares (`sync`, `apply plan.json`, `revert`, the
 * saved-revert apply): the state opened, a run id, the pipeline lock when the command writes, and
 * the same answer to a lost lock everywhere: the run's signal is aborted with a LockLostError, so
 * apply starts no new call, and the run ends with exit 2, "lost the pipeline lock" (apply/apply.ts);
 * lost before the writes, the command stops with the same words and exit 2 (LockTakenError).
 * The lock is released and the state closed however the command ends.
 */
import { LockLostError } from '../apply/apply.js';
import type { ResolvedPipeline } from '../config/load.js';
import { LockTakenError, type StateBackend } from '../state/backend.js';
import { holdLock } from '../state/lock.js';
import { openState } from '../state/open.js';
import type { RunOptions } from './options.js';
import { newRunId } from './run-id.js';

export interface RunScope {
  pipeline: ResolvedPipeline;
  store: StateBackend;
  runId: string;
  /** The command's own signal (SIGINT/SIGTERM), also aborted when the lock is lost. */
  signal: AbortSignal;
  /** Takes the pipeline lock for the rest of the command (once its checks passed); its loss aborts `signal`. */
  lock(): void;
}

type ScopeOptions = Pick<RunOptions, 'signal' | 'logger' | 'now' | 'stateDir' | 'env' | 'cwd'>;

export async function withRunScope<T>(pipeline: ResolvedPipeline, options: ScopeOptions, body: (scope: RunScope) => Promise<T>): Promise<T> {
  const store = openState(pipeline, options);
  const runId = newRunId((options.now ?? Date.now)());
  const lockLost = new AbortController();
  let lostHow: string | undefined;
  let unlock: (() => void) | undefined;
  const scope: RunScope = {
    pipeline,
    store,
    runId,
    signal: options.signal ? AbortSignal.any([options.signal, lockLost.signal]) : lockLost.signal,
    lock() {
      unlock ??= holdLock(store, runId, () => {
        // Say exactly what happened: no signal was sent, another run (or `unlock`) took the lock.
        const holder = store.readLock();
        lostHow = holder ? `run ${holder.runId} (${holder.owner} on ${holder.host}, pid ${holder.pid}) took it at ${holder.startedAt}` : 'it was cleared (rostersync unlock)';
        const message = `this run lost the pipeline lock: ${lostHow}`;
        options.logger?.error({ runId, pipeline: pipeline.name }, `${message}: stopping`);
        lockLost.abort(new LockLostError(message));
      });
    },
  };
  try {
    return await body(scope);
  } catch (error) {
    // Lost before the writes (a read in flight was aborted with it): said as what it is, exit 2.
    if (lostHow !== undefined && !options.signal?.aborted && !(error instanceof LockTakenError)) throw new LockTakenError(lostHow);
    throw error;
  } finally {
    unlock?.();
    store.close();
  }
}
