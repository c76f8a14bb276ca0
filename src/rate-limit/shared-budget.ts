/**
 * One budget per API key (docs/scaling.md): the limiter of a run shares its pace
 * with every other run on the same base URL and key — through the shared PostgreSQL state when the
 * pipeline keeps its state there (runs on several hosts), else through a file of this host.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { RateLimiter, type PaceStore, type RateLimiterOptions } from './rate-limiter.js';
import { connectState, sharedStateUrl } from '../state/postgres/connect.js';
import type { SyncConnection } from '../state/postgres/sync-connection.js';
import { postgresPaceStore } from './budget-postgres.js';
import { hostClock } from './pace-times.js';
import { budgetDir, budgetDirMustBeOwn, budgetFile, budgetName, sameHostPaceStore, sharedBudgetEnabled } from './budget-same-host.js';

export { budgetDir, budgetFile, sharedBudgetEnabled, wallClock } from './budget-same-host.js';

export interface SharedLimiterInput {
  baseUrl: string;
  apiKey: string;
  env: NodeJS.ProcessEnv;
  rateLimit: Omit<RateLimiterOptions, 'now' | 'sleep'>;
  /** The pipeline of the run: its PostgreSQL state, if any, holds the budget for every host. */
  pipeline?: { file: string; config: { state?: string | undefined } };
  /** Told when the budget cannot be shared: the limiter then paces alone. */
  onAlone: (reason: string) => void;
}

/** One session per state database and process, for every run's budget (a worker thread each). */
const connections = new Map<string, SyncConnection>();

/**
 * The limiter of a run that shares its budget with the other runs on the same base URL and key,
 * or undefined when sharing is off (`ROSTERSYNC_SHARED_BUDGET=off`).
 */
export function sharedLimiter(input: SharedLimiterInput): RateLimiter | undefined {
  if (!sharedBudgetEnabled(input.env)) return undefined;
  const shared = input.pipeline ? sharedStateUrl(input.pipeline, input.env) : null;
  const where = shared ? 'the budget in the state database' : `the shared budget file ${budgetFile(budgetDir(input.env), input.baseUrl, input.apiKey)}`;
  const alone = (error: unknown) => input.onAlone(`${where} cannot be used (${error instanceof Error ? error.message : String(error)}); this run paces alone`);
  let store: PaceStore;
  try {
    if (shared) {
      let connection = connections.get(shared.url);
      if (!connection || connection.isLost) {
        connection = connectState(shared.url, shared, { env: input.env });
        connections.set(shared.url, connection);
      }
      store = postgresPaceStore(connection, budgetName(input.baseUrl, input.apiKey), alone, hostClock);
    } else {
      store = sameHostPaceStore(budgetFile(budgetDir(input.env), input.baseUrl, input.apiKey), alone, { clock: hostClock, ownFolder: budgetDirMustBeOwn(input.env) });
    }
  } catch (error) {
    alone(error);
    return undefined;
  }
  return new RateLimiter({ ...input.rateLimit, now: hostClock, sleep: (ms, signal) => delay(ms, undefined, signal ? { signal } : {}), store });
}
