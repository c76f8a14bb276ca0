/**
 * The pipeline lock on SQLite: one row of the pipeline's database naming its holder, renewed by
 * heartbeat. A lock held on this host is stale only when its owner's process is gone, whatever
 * the clocks say; a lock held on another host is stale when its heartbeat is older than
 * STALE_LOCK_MS.
 */
import type Database from 'better-sqlite3';
import { hostname } from 'node:os';
import { lockedError, type LockInfo } from '../backend.js';
import { lockIdentityOf, livenessRule, ourPidScope, ownerAlive } from '../liveness.js';
import { toLock, type LockDbRow } from '../rows.js';

/** A lock whose heartbeat is older than this is stale (the owner died without releasing it). */
export const STALE_LOCK_MS = 2 * 60_000;

export class LockRow {
  constructor(
    private readonly db: Database.Database,
    private readonly pipeline: string,
    private readonly now: () => number,
  ) {}

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  /**
   * Takes the pipeline's lock, or refuses with the current owner's details. A lock held on this
   * host is stale only when its owner's process is gone, whatever the clocks say; a lock held on
   * another host is stale when its heartbeat is older than STALE_LOCK_MS.
   */
  acquire(runId: string, owner: string = process.env.USER ?? 'unknown'): LockInfo {
    const nowIso = this.iso();
    const mine: LockInfo = { owner, host: hostname(), pid: process.pid, processStart: lockIdentityOf(process.pid), startedAt: nowIso, heartbeatAt: nowIso, runId };
    return this.db.transaction(() => {
      const current = this.read();
      if (current && !this.isStale(current)) {
        const sameHost = livenessRule(current.processStart, ourPidScope()) === 'process';
        throw lockedError(
          this.pipeline,
          current,
          sameHost
            ? `Wait for that run to finish: its process ${current.pid} is alive on this host. If it is not a rostersync run, clear the lock with \`rostersync unlock ${this.pipeline}\`.`
            : `Wait for that run to finish. If it died, the lock turns stale ${STALE_LOCK_MS / 60_000} minutes after its last heartbeat, or clear it now with \`rostersync unlock ${this.pipeline}\`.`,
        );
      }
      this.db.prepare('DELETE FROM lock').run();
      this.db
        .prepare('INSERT INTO lock(id, owner, host, pid, proc_start, started_at, heartbeat_at, run_id) VALUES (1, ?, ?, ?, ?, ?, ?, ?)')
        .run(mine.owner, mine.host, mine.pid, mine.processStart, mine.startedAt, mine.heartbeatAt, mine.runId);
      return mine;
    }).immediate();
  }

  /** Renews the lock; false when it is no longer ours (cleared with `unlock` or taken over as stale). */
  heartbeat(runId: string): boolean {
    return this.db.prepare('UPDATE lock SET heartbeat_at = ? WHERE run_id = ?').run(this.iso(), runId).changes > 0;
  }

  release(runId: string): void {
    this.db.prepare('DELETE FROM lock WHERE run_id = ?').run(runId);
  }

  read(): LockInfo | undefined {
    const row = this.db.prepare('SELECT * FROM lock WHERE id = 1').get() as LockDbRow | undefined;
    return row ? toLock(row) : undefined;
  }

  /** Removes the lock whatever its state (`rostersync unlock`). Returns what was removed. */
  forceUnlock(): LockInfo | undefined {
    const current = this.read();
    this.db.prepare('DELETE FROM lock').run();
    return current;
  }

  /**
   * Where the owner's pid means its process (same boot, same PID namespace: see liveness.ts), the
   * process decides, whatever the clocks say (a clock a few minutes ahead must not take the lock
   * of a live run). Elsewhere (another host, another container) only the heartbeat can tell.
   */
  isStale(lock: LockInfo): boolean {
    if (lock.processStart !== null && livenessRule(lock.processStart, ourPidScope()) === 'process') return !ownerAlive(lock.pid, lock.processStart);
    return this.now() - Date.parse(lock.heartbeatAt) > STALE_LOCK_MS;
  }}
