/**
 * The pipeline lock, held for the length of a run or of a command that changes the inventory.
 */
import { HEARTBEAT_MS, type StateBackend } from './backend.js';

/**
 * Takes the pipeline lock and keeps its heartbeat going; returns the release function. If the
 * lock stops being ours (someone ran `unlock`, or judged it stale), `onLost` is told, so the run
 * stops starting calls instead of writing beside another run. The release function never throws.
 */
export function holdLock(store: StateBackend, runId: string, onLost: () => void = () => {}): () => void {
  store.acquireLock(runId);
  const timer = setInterval(() => {
    if (!store.heartbeat(runId)) {
      clearInterval(timer);
      onLost();
    }
  }, HEARTBEAT_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    try {
      store.releaseLock(runId);
    } catch {
      // Released in `finally`, after the run ended, perhaps with an error of its own: a release
      // that fails (a full disk: SQLITE_FULL) must never replace that error. The lock left behind
      // is stale once this process is gone (on its host) or its heartbeat stopped (elsewhere).
    }
  };
}
