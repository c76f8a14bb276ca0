/**
 * The state backends a suite runs against: the embedded SQLite store (a temp directory) and the
 * PostgreSQL store (a fresh, migrated database on a real server this test file starts).
 *
 *   const backends = stateBackends();   // at the top of a test file; starts PostgreSQL in beforeAll
 *   describe.each(backends)('... on $name', (backend) => { ... await backend.location() ... });
 *
 * A location is where one or more pipelines keep state together (a state directory, a database):
 * pipelines opened from the same location share claims and targets.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StateBackend } from '../../src/state/backend.js';
import { connectState } from '../../src/state/postgres/connect.js';
import { migrate } from '../../src/state/postgres/migrations.js';
import type { RowKeyPage } from '../../src/state/backend.js';
import { PostgresStateStore, type PgStoreOptions } from '../../src/state/postgres/postgres-store.js';
import { SqliteStateStore } from '../../src/state/sqlite/sqlite-store.js';
import { ROW_KEY_LENGTH } from '../../src/mapping/row-key.js';
import { postgresForFile, type TestPostgres } from './postgres-server.js';

export interface StateLocationForTest {
  /** PostgreSQL-only options (a small `pageSize`) are ignored by SQLite, which streams from disk. */
  open(pipeline: string, options?: PgStoreOptions): StateBackend;
}

export interface BackendUnderTest {
  name: 'sqlite' | 'postgres';
  location(): Promise<StateLocationForTest>;
}

export function sqliteLocation(): StateLocationForTest {
  const dir = mkdtempSync(join(tmpdir(), 'rostersync-state-'));
  return { open: (pipeline, options) => SqliteStateStore.open(join(dir, `${pipeline}.sqlite`), pipeline, options) };
}

/** A migrated database on the server, opened as the product opens it (URL + PGPASSWORD). */
export async function postgresLocation(server: TestPostgres): Promise<StateLocationForTest & { url: string }> {
  const url = await server.createDatabase('state');
  withPassword(server, () => {
    const connection = connectState(url, { origin: 'test', fromEnvironment: true });
    try {
      migrate(connection);
    } finally {
      connection.close();
    }
  });
  return {
    url,
    open: (pipeline, options) => withPassword(server, () => PostgresStateStore.open(connectState(url, { origin: 'test', fromEnvironment: true }), pipeline, options)),
  };
}

export function withPassword<T>(server: TestPostgres, body: () => T): T {
  const before = process.env.PGPASSWORD;
  process.env.PGPASSWORD = server.password;
  try {
    return body();
  } finally {
    if (before === undefined) delete process.env.PGPASSWORD;
    else process.env.PGPASSWORD = before;
  }
}

/** Both backends; the PostgreSQL server starts once for the calling test file. */
export function stateBackends(): BackendUnderTest[] {
  const server = postgresForFile();
  return [
    { name: 'sqlite', location: async () => sqliteLocation() },
    { name: 'postgres', location: async () => postgresLocation(server()) },
  ];
}

/** A row key for store tests: any text of a real key's length (stores page keys end to end). */
export const rowKey = (label: string): string => label.padEnd(ROW_KEY_LENGTH, '0');

/** The client_ids of a row-key page, as an array. */
export function clientIdsOf(page: RowKeyPage): string[] {
  return page.clientIds.split('\0');
}

/** [row key, client_id] pairs of a store's `rowKeyPages()`, in page order. */
export function rowKeysOf(store: { rowKeyPages(): Iterable<RowKeyPage> }): Array<[string, string]> {
  return [...store.rowKeyPages()].flatMap((page) => clientIdsOf(page).map((clientId, i): [string, string] => [page.rowKeys.slice(i * ROW_KEY_LENGTH, (i + 1) * ROW_KEY_LENGTH), clientId]));
}
