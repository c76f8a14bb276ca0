/**
 * One budget per API key for processes on several hosts that share the PostgreSQL state
 * (docs/scaling.md): the same pace as on one host (same-host.ts), kept in a row of the state
 * database, one per base URL and key (hashed), claimed turn by turn in a transaction that locks
 * the row. A run that ends or dies claims no more turns: its share goes to the others at once, and
 * no lease needs reclaiming. Times are the hosts' wall clocks (NTP keeps them within milliseconds).
 */
import type { PaceState, PaceStore } from '../client/rate-limiter.js';
import type { SyncConnection } from '../state/postgres/sync-connection.js';
import { decodePace, encodePace, STALE_MS } from './same-host.js';

/** Made on first use: a run may share its budget before `state migrate` knows of it, and it holds nothing to migrate. */
const TABLE = 'rostersync.budget_pace';

export function postgresPaceStore(connection: SyncConnection, budget: string, onFailure: (error: unknown) => void): PaceStore {
  connection.run([
    { text: 'CREATE SCHEMA IF NOT EXISTS rostersync' },
    { text: `CREATE TABLE IF NOT EXISTS ${TABLE} (budget text PRIMARY KEY, state text NOT NULL, updated_at double precision NOT NULL)` },
    { text: `INSERT INTO ${TABLE} (budget, state, updated_at) VALUES ($1, '{}', 0) ON CONFLICT (budget) DO NOTHING`, values: [budget] },
  ]);
  let alone: PaceState | undefined;
  return {
    update<T>(change: (state: PaceState) => T, initial: () => PaceState): T {
      if (alone) return change(alone);
      try {
        // Two round trips: BEGIN and the locked read, then the write and COMMIT.
        const [, read] = connection.run([{ text: 'BEGIN' }, { text: `SELECT state, updated_at FROM ${TABLE} WHERE budget = $1 FOR UPDATE`, values: [budget] }]);
        const row = read!.rows[0] as { state: string; updated_at: number } | undefined;
        const now = Date.now();
        const state = row && now - row.updated_at < STALE_MS ? decodePace(row.state) : initial();
        const result = change(state);
        connection.run([{ text: `UPDATE ${TABLE} SET state = $2, updated_at = $3 WHERE budget = $1`, values: [budget, encodePace(state), now] }, { text: 'COMMIT' }]);
        return result;
      } catch (error) {
        // The database failing mid-run must not fail the run through its pace: go on alone. (The
        // state store on the same database stops the run on its own if it matters.)
        onFailure(error);
        alone = initial();
        return change(alone);
      }
    },
  };
}
