/**
 * One budget per API key for processes on several hosts that share the PostgreSQL state
 * (docs/scaling.md): the same pace as on one host (budget-same-host.ts), kept in a row of the state
 * database, one per base URL and key (hashed), claimed turn by turn in a transaction that locks
 * the row. A run that ends or dies claims no more turns: its share goes to the others at once, and
 * no lease needs reclaiming.
 *
 * The row's times are on the database's clock, never a host's (pace-times.ts): a host whose clock
 * runs behind would otherwise wait for turns that lie in its future while the others took them
 * all. Each transaction reads the database's clock once the row is locked, and the store moves the
 * state between that clock and the limiter's.
 */
import type { Clock, PaceState, PaceStore } from './rate-limiter.js';
import { ClockOffset, freshPace, hostClock, plausiblePace, shiftPace } from './pace-times.js';
import { decodePace, encodePace, STALE_MS } from './budget-same-host.js';

/** Made by the state database's migrations (schema version 6, src/state/postgres/migrations.ts). */
const TABLE = 'rostersync.budget_pace';
/** The database's clock in milliseconds: clock_timestamp() moves within a transaction, now() does not. */
const DB_NOW = 'extract(epoch from clock_timestamp()) * 1000';

/**
 * A session to the state database (src/state/shared-database.ts hands it in): each call runs its
 * statements in order, in one round trip, and answers their rows.
 */
export interface BudgetSession {
  run(statements: readonly { text: string; values?: readonly unknown[] }[]): { rows: unknown[] }[];
}

/** `clock` is the limiter's own (its host's monotonic clock); it may be any distance from the database's. */
export function postgresPaceStore(connection: BudgetSession, budget: string, onFailure: (error: unknown) => void, clock: Clock = hostClock): PaceStore {
  const offset = new ClockOffset();
  const [, setup] = connection.run([
    { text: `INSERT INTO ${TABLE} (budget, state, updated_at) VALUES ($1, '{}', 0) ON CONFLICT (budget) DO NOTHING`, values: [budget] },
    { text: `SELECT ${DB_NOW} AS now` },
  ]);
  offset.sample(Number((setup!.rows[0] as { now: string | number }).now), clock());
  let alone: PaceState | undefined;
  return {
    update<T>(change: (state: PaceState) => T, initial: () => PaceState): T {
      if (alone) return change(alone);
      try {
        // Two round trips: BEGIN and the locked read with the database's time; then the write and
        // COMMIT. The time may be taken before a wait for the lock: it is then too early, which
        // ClockOffset ignores (it keeps the greatest reading).
        const [, read] = connection.run([{ text: 'BEGIN' }, { text: `SELECT state, updated_at, ${DB_NOW} AS now FROM ${TABLE} WHERE budget = $1 FOR UPDATE`, values: [budget] }]);
        const row = read!.rows[0] as { state: string; updated_at: number; now: string | number } | undefined;
        // The row is made at the start; should it be gone, the offset known so far tells the time.
        const ours = clock();
        const ahead = row ? offset.sample(Number(row.now), ours) : offset.at(ours);
        const dbNow = ours + ahead;
        const stored = row && freshPace(row.updated_at, dbNow, STALE_MS) ? decodePace(row.state) : undefined;
        const state = stored && plausiblePace(stored, dbNow) ? shiftPace(stored, -ahead) : initial();
        const result = change(state);
        connection.run([{ text: `UPDATE ${TABLE} SET state = $2, updated_at = ${DB_NOW} WHERE budget = $1`, values: [budget, encodePace(shiftPace(state, ahead))] }, { text: 'COMMIT' }]);
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
