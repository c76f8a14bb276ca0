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
import type { StateStore } from './store.js';

export type StateBackend = { [K in keyof StateStore]: StateStore[K] };

