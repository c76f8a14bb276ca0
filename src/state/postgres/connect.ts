/**
 * Connecting to the PostgreSQL state database named by a URL (`state:` in the pipeline file or
 * ROSTERSYNC_STATE_URL). The password never comes from a flag or from the pipeline file: it comes
 * from PGPASSWORD, from the file named by ROSTERSYNC_STATE_PASSWORD_FILE (a mounted secret), from
 * ROSTERSYNC_STATE_URL itself (an environment variable), or from ~/.pgpass / PGPASSFILE as libpq does.
 */
import { readFileSync } from 'node:fs';
import { StateError, type StateStoreOptions } from '../backend.js';
import { PostgresStateStore } from './postgres-store.js';
import { SyncConnection } from './sync-connection.js';

export const STATE_URL_ENV = 'ROSTERSYNC_STATE_URL';
export const STATE_PASSWORD_FILE_ENV = 'ROSTERSYNC_STATE_PASSWORD_FILE';

export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/**
 * Query parameters that carry a password. pg reads `password` from the query as it reads the
 * userinfo's (pg-connection-string copies every parameter into the connection settings), and the
 * key may be percent-encoded (`pass%77ord`); URLSearchParams decodes it. For display, any key
 * that names a password is hidden too.
 */
const PASSWORD_PARAMETER = /password/i;

/** True when the URL carries a password, in its userinfo or its query, in any spelling pg reads. */
export function stateUrlHasPassword(url: URL): boolean {
  return url.password !== '' || url.searchParams.has('password');
}

/** The URL without its password (userinfo or query), for messages, `state show` and logs. */
export function redactStateUrl(value: string): string {
  try {
    const url = new URL(value);
    url.password = '';
    for (const key of [...new Set(url.searchParams.keys())]) if (PASSWORD_PARAMETER.test(key)) url.searchParams.set(key, 'redacted');
    return url.toString();
  } catch {
    return '(unparseable state URL)';
  }
}

export interface StateUrlSource {
  /** Where the URL came from, for messages: "ROSTERSYNC_STATE_URL" or "pipelines/x.yaml: state". */
  origin: string;
  /** True when it came from the environment (then it may carry a password). */
  fromEnvironment: boolean;
}

/** Resolves the password into the connection string and checks the URL. */
export function connectionStringFor(value: string, source: StateUrlSource, env: NodeJS.ProcessEnv = process.env): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new StateError(`${source.origin}: "${redactStateUrl(value)}" is not a URL.`, { hint: 'Write it as postgres://user@host:5432/database (options such as ?sslmode=require may follow).' });
  }
  if (!isPostgresUrl(value)) {
    throw new StateError(`${source.origin}: the state URL must start with postgres:// or postgresql://.`, { hint: 'Leave `state` out to keep the embedded SQLite store in state_dir.' });
  }
  if (stateUrlHasPassword(url) && !source.fromEnvironment) {
    throw new StateError(`${source.origin}: the state URL carries a password (in its user info or its query); a pipeline file or a flag is no place for one.`, {
      hint: `Remove it from the URL and set PGPASSWORD, or put it in a file named by ${STATE_PASSWORD_FILE_ENV}.`,
    });
  }
  if (!stateUrlHasPassword(url)) {
    const password = env.PGPASSWORD ?? readPasswordFile(env[STATE_PASSWORD_FILE_ENV]);
    if (password !== undefined) url.password = encodeURIComponent(password);
  }
  return url.toString();
}

function readPasswordFile(path: string | undefined): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new StateError(`${STATE_PASSWORD_FILE_ENV}: cannot read ${path}: ${(error as Error).message}`, { hint: 'Point it at a readable file that holds only the password.' });
  }
}

/** Opens one synchronous session to the state database; a refused connection is a clear error. */
export function connectState(value: string, source: StateUrlSource, options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): SyncConnection {
  const label = redactStateUrl(value);
  return new SyncConnection({ connectionString: connectionStringFor(value, source, options.env), label, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) });
}

export interface SharedStateUrl extends StateUrlSource {
  url: string;
}

/**
 * The shared state database a pipeline uses, if any: ROSTERSYNC_STATE_URL, else the pipeline
 * file's `state:` key; null keeps the embedded SQLite store in state_dir.
 */
export function sharedStateUrl(pipeline: { file: string; config: { state?: string | undefined } }, env: NodeJS.ProcessEnv = process.env): SharedStateUrl | null {
  const fromEnv = env[STATE_URL_ENV]?.trim();
  if (fromEnv) return { url: fromEnv, origin: STATE_URL_ENV, fromEnvironment: true };
  const fromFile = pipeline.config.state?.trim();
  if (fromFile) return { url: fromFile, origin: `${pipeline.file}: state`, fromEnvironment: false };
  return null;
}

/** Opens a pipeline's state in the shared database (which `rostersync state migrate` prepared). */
export function openPostgresState(shared: SharedStateUrl, pipeline: string, options: StateStoreOptions & { env?: NodeJS.ProcessEnv } = {}): PostgresStateStore {
  return PostgresStateStore.open(connectState(shared.url, shared, options.env ? { env: options.env } : {}), pipeline, options);
}
