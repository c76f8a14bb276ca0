/**
 * The pipeline lock, held for the length of a run or of a command that changes the inventory.
 */
import type { StateBackend } from './backend.js';
import { HEARTBEAT_MS } from './store.js';

/**
 * Takes the pipeline lock and keeps its heartbeat going; returns the release function. If the
 * lock stops being ours (someone ran `unlock`, or judged it stale), `onLost` is told, so the run
 * stops starting calls instead of writing beside another run.
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
    store.releaseLock(runId);
  };
}
