/**
 * What every state backend offers: exactly the public surface of the embedded SQLite store
 * (src/state/store.ts), so a method added there must be mirrored by every other backend before
 * the type check passes.
 *
 * The surface is synchronous on purpose: apply journals an operation `sent` before its call and
 * its outcome right after, and a synchronous store makes "durable before the next call is sent"
 * hold by construction. The PostgreSQL backend keeps that contract by running its client in a
 * worker thread and waiting for each answer (src/state/postgres/sync-connection.ts).
 */
import { EXIT, UserFacingError } from '../errors.js';
import type { StateStore } from './store.js';

export type StateBackend = { [K in keyof StateStore]: StateStore[K] };

/** The database stopped answering: the run must stop before sending another write. */
export class StateUnavailableError extends UserFacingError {
  override name = 'StateUnavailableError';
  constructor(label: string, detail: string) {
    super(`the state database ${label} is unreachable: ${detail}`, {
      exitCode: EXIT.stateUnavailable,
      hint: 'No write was sent after the database went away; writes in flight were journaled as sent and are written again on the next run. Bring the database back and run again: the run converges.',
    });
  }
}

/**
 * The run's lock was taken from it (`rostersync unlock`): on PostgreSQL that ends the run's
 * database session, so the run learns it from a failed call. Exit 2, "lock taken", as on SQLite.
 */
export class LockTakenError extends UserFacingError {
  override name = 'LockTakenError';
  constructor(detail: string) {
    super(`this run lost the pipeline lock: ${detail}; no write was sent after that.`, {
      exitCode: EXIT.partial,
      hint: 'Writes in flight were journaled as sent and are written again by the next run, which converges. Check that no other run of this pipeline is going before running again.',
    });
  }
}
