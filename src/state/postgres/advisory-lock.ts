/**
 * The pipeline lock on PostgreSQL: a session-level advisory lock, held by the store's connection
 * and released by PostgreSQL the moment the process dies or its connection drops, so it never
 * goes stale and no clock decides anything. The `lock_owners` row only names the holder for a
 * refused run.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { LockTakenError, lockedError, type LockInfo } from '../backend.js';
import { lockIdentityOf } from '../liveness.js';
import { toLock, type LockDbRow } from '../rows.js';
import { PG_SCHEMA as S } from './migrations.js';
import type { SyncConnection } from './sync-connection.js';

/** The advisory-lock key of a pipeline: 64 bits of sha256, so pipelines never share a key in practice. */
export function pipelineLockKey(pipeline: string): bigint {
  return createHash('sha256').update(`rostersync:pipeline:${pipeline}`).digest().readBigInt64BE(0);
}

/**
 * The host name a lock names. ROSTERSYNC_HOSTNAME overrides the system's: containers often get
 * random host names, and an operator reading "locked by ... on <host>" wants the node or job name.
 */
export function lockHostName(env: NodeJS.ProcessEnv = process.env): string {
  return env.ROSTERSYNC_HOSTNAME?.trim() || hostname();
}

export class AdvisoryLock {
  private readonly lockKey: string;
  /** The run holding this session's advisory lock, if any. */
  private lockedRun: string | null = null;

  constructor(
    private readonly connection: SyncConnection,
    private readonly pipeline: string,
    private readonly iso: () => string,
  ) {
    this.lockKey = pipelineLockKey(pipeline).toString();
    connection.explainLoss = () => this.takenError();
  }

  /**
   * When the session holding the lock is lost: was it ended by `rostersync unlock`? That removes
   * the lock's label before ending the session, so a label still naming this run means the
   * database went away instead (a label survives a restart). Asked over a second session.
   */
  private takenError(): LockTakenError | undefined {
    if (this.lockedRun === null) return undefined;
    let probe: SyncConnection | undefined;
    try {
      probe = this.connection.sibling(5_000);
      const label = probe.query<{ run_id: string; owner: string; host: string; pid: number }>(`SELECT run_id, owner, host, pid FROM ${S}.lock_owners WHERE pipeline = $1`, [this.pipeline])[0];
      if (label?.run_id === this.lockedRun) return undefined;
      return new LockTakenError(label ? `run ${label.run_id} (${label.owner} on ${label.host}, pid ${label.pid}) holds it now` : 'it was cleared (rostersync unlock), which ended this run\'s database session');
    } catch {
      return undefined;
    } finally {
      probe?.close();
    }
  }

  /**
   * Takes the pipeline's advisory lock for this session, or refuses naming the holder (owner,
   * host, pid, start time). There is nothing stale to take over: a dead holder's session, and
   * with it the lock, is gone.
   */
  acquire(runId: string, owner: string = process.env.USER ?? 'unknown'): LockInfo {
    const nowIso = this.iso();
    const mine: LockInfo = { owner, host: lockHostName(), pid: process.pid, processStart: lockIdentityOf(process.pid), startedAt: nowIso, heartbeatAt: nowIso, runId };
    // A session may take an advisory lock twice; a second run through the same store must not.
    const got = this.lockedRun === null && this.connection.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS got', [this.lockKey])[0]!.got;
    if (!got) {
      throw lockedError(
        this.pipeline,
        this.read(),
        'Wait for that run to finish. The lock belongs to its database session: PostgreSQL releases it the moment that process exits or loses its connection, so a crashed run never leaves it behind.',
      );
    }
    this.lockedRun = runId;
    this.connection.query(
      `INSERT INTO ${S}.lock_owners(pipeline, owner, host, pid, process_started_at, started_at, heartbeat_at, run_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (pipeline) DO UPDATE SET owner = excluded.owner, host = excluded.host, pid = excluded.pid, process_started_at = excluded.process_started_at,
         started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at, run_id = excluded.run_id`,
      [this.pipeline, mine.owner, mine.host, mine.pid, mine.processStart, mine.startedAt, mine.heartbeatAt, mine.runId],
    );
    return mine;
  }

  /** False once the lock is not ours any more (the session was lost, or `unlock` removed its label). */
  heartbeat(runId: string): boolean {
    if (this.lockedRun !== runId || this.connection.isLost) return false;
    try {
      const rows = this.connection.query(`UPDATE ${S}.lock_owners SET heartbeat_at = $3 WHERE pipeline = $1 AND run_id = $2 RETURNING run_id`, [
        this.pipeline,
        runId,
        this.iso(),
      ]);
      return rows.length > 0;
    } catch {
      // The session is gone, and the lock with it.
      return false;
    }
  }

  release(runId: string): void {
    if (this.lockedRun !== runId) return;
    this.lockedRun = null;
    if (this.connection.isLost) return; // the lost session released it
    try {
      this.connection.run([
        { text: `DELETE FROM ${S}.lock_owners WHERE pipeline = $1 AND run_id = $2`, values: [this.pipeline, runId] },
        { text: 'SELECT pg_advisory_unlock($1::bigint)', values: [this.lockKey] },
      ]);
    } catch {
      // Going away now releases it too.
    }
  }

  read(): LockInfo | undefined {
    const row = this.connection.query<LockDbRow>(
      `SELECT o.owner, o.host, o.pid, o.process_started_at AS proc_start, o.started_at, o.heartbeat_at, o.run_id
       FROM ${S}.lock_owners o WHERE o.pipeline = $1 AND EXISTS (
         SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
           AND l.classid = (($2::bigint >> 32) & 4294967295)::oid AND l.objid = ($2::bigint & 4294967295)::oid)`,
      [this.pipeline, this.lockKey],
    )[0];
    return row ? toLock(row) : undefined;
  }

  /**
   * Takes the lock away from its holder (`rostersync unlock`): ends the holder's database
   * session, which releases its advisory lock. A live holder learns it at its next call and stops
   * without writing, exactly as a SQLite run whose lock was cleared stops at its next heartbeat.
   */
  forceUnlock(): LockInfo | undefined {
    const current = this.read();
    // The label goes first: the holder, its session ended, finds it gone and says "lock taken".
    this.connection.run([
      { text: `DELETE FROM ${S}.lock_owners WHERE pipeline = $1`, values: [this.pipeline] },
      {
        text: `SELECT pg_terminate_backend(l.pid, 5000) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                 AND l.classid = (($1::bigint >> 32) & 4294967295)::oid AND l.objid = ($1::bigint & 4294967295)::oid AND l.pid <> pg_backend_pid()`,
        values: [this.lockKey],
      },
    ]);
    if (this.lockedRun !== null) this.release(this.lockedRun);
    return current;
  }

  /** A lock is stale only when no session holds it any more (then it is already free). */
  isStale(_lock: LockInfo): boolean {
    return this.read() === undefined;
  }
}
