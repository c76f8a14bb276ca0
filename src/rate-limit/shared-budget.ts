/**
 * One budget per API key (docs/scaling.md): the limiter of a run shares its pace
 * with every other run on the same base URL and key — through the shared PostgreSQL state when the
 * pipeline keeps its state there (runs on several hosts), else through a file of this host.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { RateLimiter, type PaceStore, type RateLimiterOptions } from './rate-limiter.js';
import { postgresPaceStore, type BudgetSession } from './budget-postgres.js';
import { hostClock } from './pace-times.js';
import { budgetDir, budgetDirMustBeOwn, budgetFile, budgetName, sameHostPaceStore, sharedBudgetEnabled } from './budget-same-host.js';

export { budgetDir, budgetFile, sharedBudgetEnabled, wallClock } from './budget-same-host.js';

export interface SharedLimiterInput {
  baseUrl: string;
  apiKey: string;
  env: NodeJS.ProcessEnv;
  rateLimit: Omit<RateLimiterOptions, 'now' | 'sleep'>;
  /**
   * The session to the run's PostgreSQL state, when its pipeline keeps its state there: the budget
   * for every host is kept in it (src/state/shared-database.ts, `budgetSessionOf`). Opened only
   * when the budget is shared; what it throws makes the run pace alone.
   */
  stateDatabase?: (() => BudgetSession) | undefined;
  /** Told when the budget cannot be shared: the limiter then paces alone. */
  onAlone: (reason: string) => void;
}

/**
 * The limiter of a run that shares its budget with the other runs on the same base URL and key,
 * or undefined when sharing is off (`ROSTERSYNC_SHARED_BUDGET=off`).
 */
export function sharedLimiter(input: SharedLimiterInput): RateLimiter | undefined {
  if (!sharedBudgetEnabled(input.env)) return undefined;
  const where = input.stateDatabase ? 'the budget in the state database' : `the shared budget file ${budgetFile(budgetDir(input.env), input.baseUrl, input.apiKey)}`;
  const alone = (error: unknown) => input.onAlone(`${where} cannot be used (${error instanceof Error ? error.message : String(error)}); this run paces alone`);
  let store: PaceStore;
  try {
    if (input.stateDatabase) {
      store = postgresPaceStore(input.stateDatabase(), budgetName(input.baseUrl, input.apiKey), alone, hostClock);
    } else {
      store = sameHostPaceStore(budgetFile(budgetDir(input.env), input.baseUrl, input.apiKey), alone, { clock: hostClock, ownFolder: budgetDirMustBeOwn(input.env) });
    }
  } catch (error) {
    alone(error);
    return undefined;
  }
  return new RateLimiter({ ...input.rateLimit, now: hostClock, sleep: (ms, signal) => delay(ms, undefined, signal ? { signal } : {}), store });
}
