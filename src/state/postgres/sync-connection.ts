/**
 * One PostgreSQL session used synchronously.
 *
 * The state store's contract is synchronous (see ../backend.ts). `pg` is asynchronous, so the
 * session lives in a worker thread: each call posts its statements to the worker and blocks on
 * Atomics.wait until the worker has the answer, the way better-sqlite3 blocks on its file. The
 * worker holds exactly one connection for the store's lifetime, so session-level advisory locks
 * belong to this store and vanish when the process (and so the socket) dies.
 *
 * A lost connection is not retried: an outcome that cannot be written must stop the run before
 * another write is sent (StateUnavailableError, exit 6). The next run converges from the journal.
 */
import type { ClientConfig } from 'pg';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { UserFacingError } from '../../errors/user-facing-error.js';
import { StateUnavailableError } from '../backend.js';

export interface Statement {
  text: string;
  values?: readonly unknown[];
  /** 'array' returns rows as arrays (cheaper for wide lookups). */
  rowMode?: 'array';
}

export interface StatementResult<Row = Record<string, unknown>> {
  rows: Row[];
  rowCount: number;
}

export interface ConnectionOptions {
  /** postgres:// URL, password already resolved into it. */
  connectionString: string;
  /** Shown in messages instead of the URL (no password). */
  label: string;
  /** Longest wait for one answer before the database counts as gone. @default 30 s */
  timeoutMs?: number;
}

/** Says why the session was lost when it can tell better than "unreachable" (see PostgresStateStore). */
export type LossExplainer = () => UserFacingError | undefined;

/** A statement the database refused (not a lost connection). */
export class StatementError extends Error {
  override name = 'StatementError';
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/** What the session worker (session-worker.mjs) is asked. */
export type SessionRequest =
  | { op: 'connect'; config: ClientConfig }
  | { op: 'end' }
  | { op: 'run'; statements: readonly Statement[]; transaction: boolean };

export type SessionReply = { ok: true; results: StatementResult[] } | { ok: false; message: string; code?: string; lost: boolean };

export class SyncConnection {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag: Int32Array;
  private readonly timeoutMs: number;
  private lostReason: string | null = null;
  /** What every call throws once the session is lost. */
  private lostError: UserFacingError | null = null;
  /** Consulted once, when the session is lost. */
  explainLoss: LossExplainer | undefined;
  private closed = false;
  private sent = 0;
  /** Inside inTransaction(): the worker must not BEGIN/COMMIT on its own. */
  private spanning = false;

  constructor(private readonly options: ConnectionOptions) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    const channel = new MessageChannel();
    const shared = new SharedArrayBuffer(4);
    this.flag = new Int32Array(shared);
    this.port = channel.port1;
    this.worker = new Worker(new URL('./session-worker.mjs', import.meta.url), { workerData: { flag: shared, port: channel.port2 }, transferList: [channel.port2] });
    // The worker must never keep a finished command alive.
    this.worker.unref();
    this.port.unref();
    try {
      this.connect();
    } catch (error) {
      void this.worker.terminate();
      if (!(error instanceof StatementError)) throw error;
      throw new UserFacingError(`cannot open the state database ${options.label}: ${error.message}`, {
        hint: 'Check the user, the database name and the password (PGPASSWORD, ROSTERSYNC_STATE_PASSWORD_FILE or ~/.pgpass).',
        cause: error,
      });
    }
  }

  private connect(): void {
    const options = this.options;
    this.request({
      op: 'connect',
      config: {
        connectionString: options.connectionString,
        application_name: 'rostersync',
        connectionTimeoutMillis: this.timeoutMs,
        query_timeout: this.timeoutMs,
        keepAlive: true,
      },
    });
  }

  get label(): string {
    return this.options.label;
  }

  /** Runs statements in order (in one transaction when asked) and returns each result. */
  run(statements: readonly Statement[], transaction = false): StatementResult[] {
    // Inside a spanning transaction the statements are already all or nothing: their own
    // BEGIN/COMMIT would commit the spanning one early.
    return this.request({ op: 'run', statements, transaction: transaction && !this.spanning });
  }

  /**
   * One transaction over several requests, for work too large for one message; transaction()
   * calls inside it join it. All or nothing: an error rolls back, and a lost session has
   * already lost the transaction with it.
   */
  inTransaction<T>(body: () => T): T {
    if (this.spanning) throw new Error('inTransaction() does not nest');
    this.run([{ text: 'BEGIN' }]);
    this.spanning = true;
    try {
      const result = body();
      this.spanning = false;
      this.run([{ text: 'COMMIT' }]);
      return result;
    } catch (error) {
      this.spanning = false;
      if (!this.isLost) {
        try {
          this.run([{ text: 'ROLLBACK' }]);
        } catch {
          // the original error says what went wrong
        }
      }
      throw error;
    }
  }

  query<Row = Record<string, unknown>>(text: string, values: readonly unknown[] = []): Row[] {
    return this.run([{ text, values }])[0]!.rows as Row[];
  }

  /** Statements in one transaction; all or nothing. */
  transaction(statements: readonly Statement[]): StatementResult[] {
    return this.run(statements, true);
  }

  /** Requests sent to the session, each one message and one wait: what paging keeps few and small. */
  get roundTrips(): number {
    return this.sent;
  }

  get isLost(): boolean {
    return this.lostReason !== null;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.lostReason === null) {
      try {
        this.request({ op: 'end' });
      } catch {
        // closing a broken session: nothing to save
      }
    }
    void this.worker.terminate();
  }

  /** A second session to the same database, e.g. to ask why this one was ended. */
  sibling(timeoutMs: number): SyncConnection {
    return new SyncConnection({ ...this.options, timeoutMs });
  }

  private lose(reason: string): UserFacingError {
    if (this.lostError === null) {
      this.lostReason = reason;
      let explained: UserFacingError | undefined;
      try {
        explained = this.explainLoss?.();
      } catch {
        // no better explanation than the database being gone
      }
      this.lostError = explained ?? new StateUnavailableError(this.options.label, reason);
    }
    return this.lostError;
  }

  private request(message: SessionRequest): StatementResult[] {
    if (this.lostError !== null) throw this.lostError;
    if (this.closed && message.op !== 'end') throw new Error('state store used after close()');
    this.sent += 1;
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage(message);
    const deadline = Date.now() + this.timeoutMs + 5_000;
    let received = receiveMessageOnPort(this.port);
    while (received === undefined) {
      const left = deadline - Date.now();
      if (left <= 0) {
        void this.worker.terminate();
        throw this.lose(`no answer within ${Math.round(this.timeoutMs / 1000)} s`);
      }
      Atomics.wait(this.flag, 0, 0, Math.min(left, 1_000));
      received = receiveMessageOnPort(this.port);
    }
    const reply = received.message as SessionReply;
    if (reply.ok) return reply.results;
    if (reply.lost) throw this.lose(reply.message);
    throw new StatementError(reply.message, reply.code);
  }
}
