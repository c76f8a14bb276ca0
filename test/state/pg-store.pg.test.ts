/**
 * What only the PostgreSQL state store has (the shared contract is test/state/store.pg.test.ts):
 * explicit migrations of a database an older rostersync left, inventory streams paged through the
 * worker, and row keys written in several messages yet in one transaction.
 */
import { describe, expect, it } from 'vitest';
import { connectState } from '../../src/state/postgres/connect.js';
import { LATEST_PG_VERSION, MIGRATIONS, migrate, PG_SCHEMA } from '../../src/state/postgres/migrations.js';
import { PostgresStateStore, type PgStoreOptions } from '../../src/state/postgres/postgres-store.js';
import { budgetName } from '../../src/rate-limit/budget-same-host.js';
import { sharedLimiter } from '../../src/rate-limit/shared-budget.js';
import { budgetSessionOf } from '../../src/state/shared-database.js';
import { postgresForFile } from '../support/postgres-server.js';
import { clientIdsOf, postgresLocation, rowKey, rowKeysOf, withPassword } from '../support/state-backends.js';

const server = postgresForFile();

const connect = (url: string) => withPassword(server(), () => connectState(url, { origin: 'test', fromEnvironment: true }));

/** A database exactly as a rostersync whose latest migration was `version` left it. */
async function databaseAt(version: number): Promise<string> {
  const url = await server().createDatabase('older');
  const connection = connect(url);
  try {
    connection.transaction([
      { text: `CREATE SCHEMA ${PG_SCHEMA}` },
      { text: `CREATE TABLE ${PG_SCHEMA}.schema_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())` },
    ]);
    for (const migration of MIGRATIONS.filter((m) => m.version <= version)) {
      connection.transaction([
        { text: migration.sql },
        { text: `INSERT INTO ${PG_SCHEMA}.schema_migrations(version, description) VALUES ($1, $2)`, values: [migration.version, migration.description] },
      ]);
    }
  } finally {
    connection.close();
  }
  return url;
}

const applied = (store: PostgresStateStore, clientId: string, hash: string, rowKey?: string) => {
  const journalId = store.journalSent('r', clientId, 'update');
  store.recordApplied({ journalId, clientId, fieldsJson: '{}', hash, runId: 'r', sourceRow: null, status: 200, attempts: 1, ...(rowKey === undefined ? {} : { rowKey }) });
};

describe('PostgreSQL state store only', () => {
  it('refuses a database at schema version 2 until `state migrate`, which adds row keys and keeps the records', async () => {
    expect(LATEST_PG_VERSION).toBe(6);
    const url = await databaseAt(2);
    const before = connect(url);
    before.query(
      `INSERT INTO ${PG_SCHEMA}.records(pipeline, client_id, fields_json, hash, run_id, source_row, updated_at) VALUES ('p', 'a', '{"name":"A"}', 'h-a', 'r0', 2, '2026-11-01T00:00:00.000Z')`,
    );
    expect(() => PostgresStateStore.open(before, 'p')).toThrow(/has schema version 2; this rostersync needs version 6/);

    const migrating = connect(url);
    expect(migrate(migrating)).toEqual({
      from: 2,
      to: 6,
      applied: [
        { version: 3, description: expect.stringContaining('row_key') },
        { version: 4, description: expect.stringContaining('undo_json') },
        { version: 5, description: expect.stringContaining('journal.service and journal.group_id') },
        { version: 6, description: expect.stringContaining('budget_pace') },
      ],
    });
    expect(migrate(migrating)).toEqual({ from: 6, to: 6, applied: [] });
    migrating.close();

    const store = PostgresStateStore.open(connect(url), 'p');
    expect(store.getOwned('a')).toEqual({ clientId: 'a', fieldsJson: '{"name":"A"}', hash: 'h-a', runId: 'r0', sourceRow: 2 });
    // What an older version wrote has no key: its row takes the full path once.
    expect(rowKeysOf(store)).toEqual([]);
    store.setRowKeys([{ clientId: 'a', rowKey: rowKey('ka'), hash: 'h-a' }]);
    applied(store, 'b', 'h-b', rowKey('kb'));
    expect(rowKeysOf(store)).toEqual([[rowKey('ka'), 'a'], [rowKey('kb'), 'b']]);
    store.close();
  });

  // An older rostersync made the budget's table itself, on a run's first use of it.
  it.each([
    ['never shared its budget', false],
    ['shared its budget, making the table itself', true],
  ])('a version 5 database that %s: the budget refuses it, `state migrate` takes it to 6, and the budget is kept there', async (_, madeByOlder) => {
    const url = await databaseAt(5);
    const BASE_URL = 'http://127.0.0.1:9/';
    const older = connect(url);
    if (madeByOlder) {
      older.transaction([
        { text: `CREATE TABLE ${PG_SCHEMA}.budget_pace (budget text PRIMARY KEY, state text NOT NULL, updated_at double precision NOT NULL)` },
        { text: `INSERT INTO ${PG_SCHEMA}.budget_pace VALUES ('earlier', '{}', 1)` },
      ]);
    }
    const env = { ROSTERSYNC_STATE_URL: url, PGPASSWORD: server().password };
    const limiterFor = (apiKey: string, onAlone: (reason: string) => void) =>
      sharedLimiter({ baseUrl: BASE_URL, apiKey, env, rateLimit: { rps: 50 }, stateDatabase: budgetSessionOf({ file: 'p.yaml', config: {} }, env), onAlone });

    const alone: string[] = [];
    expect(limiterFor('key-a', (reason) => alone.push(reason))).toBeUndefined();
    expect(alone).toEqual([expect.stringMatching(/^the budget in the state database cannot be used \(the state database .* has schema version 5; this rostersync needs version 6\.\); this run paces alone$/)]);

    expect(migrate(older)).toEqual({ from: 5, to: 6, applied: [{ version: 6, description: expect.stringContaining('budget_pace') }] });
    const session = budgetSessionOf({ file: 'p.yaml', config: {} }, env)!;
    try {
      const limiter = limiterFor('key-a', (reason) => expect.fail(reason))!;
      const stop = new AbortController();
      for (let turn = 0; turn < 3; turn++) await limiter.turn(stop.signal);
      const rows = session().query<{ budget: string; state: string; updated_at: number }>(`SELECT budget, state, updated_at FROM ${PG_SCHEMA}.budget_pace ORDER BY budget`);
      expect(rows.map((row) => row.budget)).toEqual([...(madeByOlder ? ['earlier'] : []), budgetName(BASE_URL, 'key-a')].sort());
      const ours = rows.find((row) => row.budget === budgetName(BASE_URL, 'key-a'))!;
      expect(ours.state).not.toBe('{}');
      expect(ours.updated_at).toBeGreaterThan(0);
    } finally {
      session().close();
      older.close();
    }
  });

  it('streams row keys one page per round trip, lazily', async () => {
    const location = await postgresLocation(server());
    const open = (options: PgStoreOptions) => location.open('p', options) as PostgresStateStore;
    const store = open({ pageSize: 4 });
    for (let i = 0; i < 10; i++) applied(store, `id-${String(i).padStart(2, '0')}`, 'h', rowKey(`key-${i}`));
    applied(store, 'id-no-key', 'h');
    const start = store.roundTrips;
    const stream = store.rowKeyPages();
    const first = stream.next().value!;
    expect(first).toEqual({ rowKeys: ['key-0', 'key-1', 'key-2', 'key-3'].map(rowKey).join(''), clientIds: ['id-00', 'id-01', 'id-02', 'id-03'].join('\0'), count: 4 });
    expect(store.roundTrips - start).toBe(1);
    const rest = [...stream];
    // Pages of 4, 4 and 2 keyed rows, one message each (the unkeyed record is not sent at all).
    expect(store.roundTrips - start).toBe(3);
    expect(rest.map((page) => page.count)).toEqual([4, 2]);
    expect(rest.flatMap(clientIdsOf)).toEqual(Array.from({ length: 6 }, (_, i) => `id-${String(i + 4).padStart(2, '0')}`));
    store.close();
    // A write between two pages is allowed (each page is a query of its own) and seen by later pages.
    const other = open({ pageSize: 4 });
    const ids: string[] = [];
    for (const page of other.rowKeyPages()) {
      if (ids.length === 0) applied(other, 'id-zz', 'h', rowKey('key-zz'));
      ids.push(...clientIdsOf(page));
    }
    expect(ids).toHaveLength(11);
    expect(ids.at(-1)).toBe('id-zz');
    other.close();
  });

  it('writes row keys in several messages, all or nothing', async () => {
    const location = await postgresLocation(server());
    const store = location.open('p', { pageSize: 2 }) as PostgresStateStore;
    for (const id of ['a', 'b', 'c']) store.adopt({ clientId: id, fieldsJson: '{}', hash: `h-${id}`, runId: 'r' });
    const entries = [
      { clientId: 'a', rowKey: rowKey('ka'), hash: 'h-a' },
      { clientId: 'b', rowKey: rowKey('kb'), hash: 'h-b' },
      { clientId: 'c', rowKey: rowKey('kc'), hash: 'h-c' },
    ];
    // The second batch is refused (PostgreSQL text cannot hold NUL): the first is rolled back.
    expect(() => store.setRowKeys([...entries, { clientId: 'x\u0000', rowKey: rowKey('kx'), hash: 'h' }])).toThrow(/0x00/);
    expect(rowKeysOf(store)).toEqual([]);
    // The session is usable again, outside any transaction.
    const before = store.roundTrips;
    store.setRowKeys(entries);
    // BEGIN, two batches, COMMIT.
    expect(store.roundTrips - before).toBe(4);
    expect(rowKeysOf(store)).toEqual([[rowKey('ka'), 'a'], [rowKey('kb'), 'b'], [rowKey('kc'), 'c']]);
    store.close();
  });
});
