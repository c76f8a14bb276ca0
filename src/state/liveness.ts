/**
 * Whether the owner of a lock is still running. Where the owner's pid means something to us, its
 * process decides, never clocks: a run whose clock is ahead must not take the lock of a live run.
 *
 * A pid means something only in the PID namespace it was given in, on the kernel boot it was given
 * in. The host name says neither: two containers on the host network share it, each with its own
 * PID namespace, and each would take the other's pid for a dead (or another) process. So a lock
 * records its owner's identity as `<boot id>:<start ticks>:<PID namespace>`, and the owner's
 * process is consulted only when the boot and the namespace are ours and /proc shows our namespace;
 * otherwise, as for another host, only the heartbeat can tell. The start time guards against a pid
 * reused after the owner died.
 */
import { readFileSync, readlinkSync } from 'node:fs';

/** How a lock's liveness is judged: by its owner's process, or by its heartbeat's age. */
export type LivenessRule = 'process' | 'heartbeat';

/** Where a pid means the same process: one kernel boot, one PID namespace. */
export interface PidScope {
  bootId: string;
  pidNamespace: string;
}

/** An owner identity as a lock records it (see the module comment), or null where /proc says nothing. */
export function lockIdentityOf(pid: number, scope: PidScope | null = ourPidScope()): string | null {
  const ticks = startTicksOf(pid);
  if (ticks === null || scope === null) return null;
  return `${scope.bootId}:${ticks}:${scope.pidNamespace}`;
}

/** The parts of a recorded identity; a lock written before namespaces were recorded has none. */
export function parseLockIdentity(identity: string | null): (PidScope & { startTicks: string }) | null {
  const match = identity === null ? null : /^([^:]+):(\d+):(.+)$/.exec(identity);
  return match ? { bootId: match[1]!, startTicks: match[2]!, pidNamespace: match[3]! } : null;
}

/**
 * The rule for a lock whose owner recorded `identity`, judged from `ours`: the process only when
 * both are known and name the same boot and PID namespace, whatever the host names say.
 */
export function livenessRule(identity: string | null, ours: PidScope | null): LivenessRule {
  const theirs = parseLockIdentity(identity);
  if (theirs === null || ours === null) return 'heartbeat';
  return theirs.bootId === ours.bootId && theirs.pidNamespace === ours.pidNamespace ? 'process' : 'heartbeat';
}

/** True when the recorded owner (same boot and PID namespace as ours) still runs. */
export function ownerAlive(pid: number, identity: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const current = lockIdentityOf(pid);
  return current === null || current === identity;
}

let cachedScope: PidScope | null | undefined;
/** This process's boot id and PID namespace (Linux /proc); null where they cannot be read or /proc is not of our namespace. */
export function ourPidScope(): PidScope | null {
  if (cachedScope === undefined) {
    try {
      cachedScope = pidScopeFrom({
        bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
        // `pid:[4026531836]`: the namespace's inode, the same for every process in it.
        pidNamespace: readlinkSync('/proc/self/ns/pid'),
        procSelf: readlinkSync('/proc/self'),
        pid: process.pid,
      });
    } catch {
      cachedScope = null;
    }
  }
  return cachedScope;
}

/**
 * Where pids can be checked in /proc, and in which scope. A PID namespace made without mounting
 * its own /proc (`unshare --pid --fork` without `--mount-proc`, a container given the host's
 * /proc) sees the host's processes there: `/proc/<pid>` is another process than our pid `<pid>`,
 * and the start time read there would take a live owner for dead. `/proc/self` names us by the
 * pid of the namespace the mount belongs to: unless that is our own pid, nothing in /proc can
 * tell whether a pid of ours is alive, so no scope, and every lock is judged by its heartbeat.
 */
export function pidScopeFrom(seen: { bootId: string; pidNamespace: string; procSelf: string; pid: number }): PidScope | null {
  if (!seen.bootId || !seen.pidNamespace || seen.procSelf !== String(seen.pid)) return null;
  return { bootId: seen.bootId, pidNamespace: seen.pidNamespace };
}

/** The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or null. */
function startTicksOf(pid: number): string | null {
  try {
    // Our own through `self`: a /proc mounted for another PID namespace lists us under another pid.
    const stat = readFileSync(`/proc/${pid === process.pid ? 'self' : pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
