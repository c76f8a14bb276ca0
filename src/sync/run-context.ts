/**
 * The one way to start a run, shared by every command that runs a pipeline (`sync`, `plan`,
 * `apply plan.json`, `revert`, the apply of a saved revert): `withRun(options, body)` works out the
 * clock, the folder and the run id once, opens the pipeline and the state, resolves what the run was
 * asked (sync/run-request.ts), and hands the body a RunContext. Below it, functions take the parts
 * they need, never RunOptions.
 *
 * The pipeline lock, when the command writes, and the same answer to a lost lock everywhere: the
 * run's signal is aborted with a LockLostError, so apply starts no new call, and the run ends with
 * exit 2, "lost the pipeline lock" (apply/apply.ts); lost before the writes, the command stops with
 * the same words and exit 2 (LockTakenError).
 *
 * The run owns the temporary files its plan's spools keep their pages in (src/spill/). However the
 * command ends, they are deleted, the lock is released and the state closed.
 */
import { resolve } from 'node:path';
import { LockLostError } from '../apply/apply.js';
import type { ServiceClient } from '../client/client.js';
import { loadPipeline, type ResolvedPipeline } from '../config/load.js';
import { NewRecords } from '../plan/new-records.js';
import { RowKeyRepairs } from '../plan/row-key-repairs.js';
import { runSpillFiles } from '../spill/run-files.js';
import { LockTakenError, type StateBackend } from '../state/backend.js';
import { holdLock } from '../state/lock.js';
import { openState } from '../state/open.js';
import { boundHeapGrowth } from './bounded-heap.js';
import { clientForPipeline } from './client-for-pipeline.js';
import type { RunOptions } from './options.js';
import { newRunId } from './run-id.js';
import { runRequestOf, type RunRequest } from './run-request.js';

export interface RunContext {
  pipeline: ResolvedPipeline;
  store: StateBackend;
  runId: string;
  /** The run's clock, in epoch milliseconds. */
  now: () => number;
  /** The folder relative paths are resolved against. */
  cwd: string;
  /** The command's own signal (SIGINT/SIGTERM), also aborted when the lock is lost. */
  signal: AbortSignal;
  /** What the run was asked, resolved once; its signals are `signal`. */
  request: RunRequest;
  /** The pipeline's service client, made on first use (after the command's own checks). */
  client(): ServiceClient;
  /** The new records the plan creates, past their first pages in a temporary file. */
  created: NewRecords;
  /** The row keys apply is to store, past their first pages in a temporary file. */
  rowKeys: RowKeyRepairs;
  /** Takes the pipeline lock for the rest of the command (once its checks passed); its loss aborts `signal`. */
  lock(): void;
}

export async function withRun<T>(options: RunOptions, body: (run: RunContext) => Promise<T>): Promise<T> {
  const cwd = options.cwd ?? process.cwd();
  const now = options.now ?? Date.now;
  const pipeline = loadPipeline(resolve(cwd, options.pipelinePath));
  const store = openState(pipeline, options);
  const runId = newRunId(now());
  const lockLost = new AbortController();
  let lostHow: string | undefined;
  let unlock: (() => void) | undefined;
  let client: ServiceClient | undefined;
  const spill = runSpillFiles({ onNewRecordsSpill: boundHeapGrowth });
  const signal = options.signal ? AbortSignal.any([options.signal, lockLost.signal]) : lockLost.signal;
  const run: RunContext = {
    pipeline,
    store,
    runId,
    now,
    cwd,
    signal,
    request: runRequestOf(options, { cwd, now, signal }),
    client: () => (client ??= clientForPipeline(pipeline, options)),
    created: new NewRecords({ pages: spill.newRecords }),
    rowKeys: new RowKeyRepairs({ pages: spill.rowKeys }),
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
    return await body(run);
  } catch (error) {
    // Lost before the writes (a read in flight was aborted with it): said as what it is, exit 2.
    if (lostHow !== undefined && !options.signal?.aborted && !(error instanceof LockTakenError)) throw new LockTakenError(lostHow);
    throw error;
  } finally {
    spill.dispose();
    unlock?.();
    store.close();
  }
}
