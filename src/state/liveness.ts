/**
 * Whether the owner of a lock is still running. On the owner's own host this is decided by its
 * process, never by clocks: a run whose clock is ahead must not take the lock of a live run.
 * The process start time guards against a pid reused by an unrelated process after the owner died.
 */
import { readFileSync } from 'node:fs';

/**
 * An identity of a running process that survives pid reuse: the boot id and the start time in
 * clock ticks since boot (Linux `/proc`). Null where `/proc` is not available.
 */
export function processStartOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const startTicks = fields[19];
    return startTicks ? `${bootId()}:${startTicks}` : null;
  } catch {
    return null;
  }
}

let cachedBootId: string | undefined;
function bootId(): string {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cachedBootId = '';
    }
  }
  return cachedBootId;
}

/** True when a process with this pid exists (and, when `start` is known, is the same process). */
export function processAlive(pid: number, start: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (start === null) return true;
  const current = processStartOf(pid);
  return current === null || current === start;
}
