/**
 * The shared PostgreSQL state database as code outside src/state/ uses it: which database a
 * pipeline names, a session to it, its schema version and migrations (`rostersync state migrate`,
 * the webhook store), and the session that keeps the rate limiter's shared budget. The backend's
 * own files (src/state/postgres/) stay private to src/state/.
 */
import { connectState, sharedStateUrl } from './postgres/connect.js';
import { requireCurrentSchema } from './postgres/migrations.js';
import type { SyncConnection } from './postgres/sync-connection.js';

export { connectionStringFor, connectState, isPostgresUrl, redactStateUrl, sharedStateUrl, STATE_URL_ENV, type SharedStateUrl } from './postgres/connect.js';
export { LATEST_PG_VERSION, migrate, PG_SCHEMA } from './postgres/migrations.js';

/** One session per state database and process, for every run's budget (a worker thread each). */
const budgetSessions = new Map<string, SyncConnection>();

/**
 * The session that keeps the shared budget of a pipeline's runs (docs/scaling.md), opened on first
 * use; undefined when the pipeline keeps its state in SQLite (the budget is then a file of this
 * host). It refuses a database `state migrate` has not brought to this version's schema, which
 * holds the budget's table.
 */
export function budgetSessionOf(pipeline: { file: string; config: { state?: string | undefined } }, env: NodeJS.ProcessEnv): (() => SyncConnection) | undefined {
  const shared = sharedStateUrl(pipeline, env);
  if (!shared) return undefined;
  return () => {
    const open = budgetSessions.get(shared.url);
    if (open && !open.isLost) return open;
    const connection = connectState(shared.url, shared, { env });
    try {
      requireCurrentSchema(connection);
    } catch (error) {
      connection.close();
      throw error;
    }
    budgetSessions.set(shared.url, connection);
    return connection;
  };
}
