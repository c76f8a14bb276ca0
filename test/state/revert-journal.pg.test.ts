/**
 * The journal's undo values (what `rostersync revert` reads) on both state backends: kept with the
 * write when it is planned, replaced when the outcome tells more, read back by run and by record;
 * a revert run is not the source-drop guard's baseline; and a state an older rostersync left (no
 * undo column) is upgraded in place, its earlier entries kept without undo values.
 */
import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectState } from '../../src/state/postgres/connect.js';
import { MIGRATIONS, migrate, PG_SCHEMA } from '../../src/state/postgres/migrations.js';
import { PostgresStateStore } from '../../src/state/postgres/postgres-store.js';
import { SqliteStateStore } from '../../src/state/sqlite/sqlite-store.js';
import { postgresForFile } from '../support/postgres-server.js';
import { postgresLocation, sqliteLocation, withPassword, type BackendUnderTest } from '../support/state-backends.js';

const server = postgresForFile();
const backends: BackendUnderTest[] = [
  { name: 'sqlite', location: async () => sqliteLocation() },
  { name: 'postgres', location: async () => postgresLocation(server()) },
];

describe.each(backends)('journal undo values on $name', (backend) => {
  it('keeps them from planning, replaces them on outcome, reads them by run and by record', async () => {
    const store = (await backend.location()).open('p');
    const target = { baseUrl: 'http://service.test', groupId: 502 };
    const created = store.journalSent('run1', 'a', 'create', '{"before":null,"after":{"name":"A"}}', target);
    store.recordApplied({ journalId: created, clientId: 'a', fieldsJson: '{"name":"A"}', hash: 'h1', runId: 'run1', sourceRow: 2, status: 200, attempts: 1 });
    const adopted = store.journalSent('run1', 'b', 'create', '{"before":null,"after":{"name":"B"}}', target);
    store.recordApplied({ journalId: adopted, clientId: 'b', fieldsJson: '{"name":"B"}', hash: 'h2', runId: 'run1', sourceRow: 3, status: 200, attempts: 1, undoJson: '{"before":null,"after":{"name":"B"},"adopted":true}' });
    const failed = store.journalSent('run1', 'c', 'update', '{"before":{"name":"C"},"after":{"name":"C2"}}', target);
    store.journalFailed(failed, 503, 'unavailable', 3);
    const later = store.journalSent('run2', 'a', 'update', '{"before":{"name":"A"},"after":{"name":"A2"}}');

    expect(store.runJournal('run1')).toEqual([
      { id: created, runId: 'run1', clientId: 'a', action: 'create', state: 'done', status: 200, undoJson: '{"before":null,"after":{"name":"A"}}', target },
      { id: adopted, runId: 'run1', clientId: 'b', action: 'create', state: 'done', status: 200, undoJson: '{"before":null,"after":{"name":"B"},"adopted":true}', target },
      // A failure keeps what was journaled at planning: the write may have reached the service.
      { id: failed, runId: 'run1', clientId: 'c', action: 'update', state: 'failed', status: 503, undoJson: '{"before":{"name":"C"},"after":{"name":"C2"}}', target },
    ]);
    expect(store.journalOf(['a']).map((entry) => [entry.runId, entry.state])).toEqual([
      ['run1', 'done'],
      ['run2', 'sent'],
    ]);
    expect(store.journalOf(['a', 'c']).map((entry) => entry.id)).toEqual([created, failed, later]);
    expect(store.journalOf([])).toEqual([]);
    store.close();
  });

  it('finds a run by id; a revert run is not the baseline of the source-drop guard', async () => {
    const store = (await backend.location()).open('p');
    store.startRun({ id: 'sync1', dryRun: false, sourceSha256: 'abc' });
    store.finishRun({ id: 'sync1', outcome: 'success', validRecords: 40, counts: {} });
    store.startRun({ id: 'undo1', dryRun: false, sourceSha256: 'revert:sync1' });
    store.finishRun({ id: 'undo1', outcome: 'success', validRecords: 0, counts: {} });
    expect(store.findRun('undo1')).toMatchObject({ id: 'undo1', sourceSha256: 'revert:sync1', dryRun: false });
    expect(store.findRun('nope')).toBeUndefined();
    expect(store.lastSuccessfulRun()).toMatchObject({ id: 'sync1', validRecords: 40 });
    store.close();
  });
});

describe('upgrading a state an older rostersync left', () => {
  it('SQLite: schema 3 gains the undo column; earlier entries have none', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'rostersync-state-')), 'p.sqlite');
    const current = SqliteStateStore.open(path, 'p');
    const old = current.journalSent('run0', 'a', 'create');
    current.close();
    // Back to what version 3 left: no undo column, no index by run.
    const db = new Database(path);
    db.exec("DROP INDEX journal_run; ALTER TABLE journal DROP COLUMN undo_json; ALTER TABLE journal DROP COLUMN service; ALTER TABLE journal DROP COLUMN group_id; UPDATE meta SET value = '3' WHERE key = 'schema_version'");
    db.close();

    const store = SqliteStateStore.open(path, 'p');
    expect(store.runJournal('run0')).toEqual([{ id: old, runId: 'run0', clientId: 'a', action: 'create', state: 'sent', status: null, undoJson: null, target: null }]);
    store.journalSent('run1', 'b', 'create', '{"before":null,"after":{}}');
    expect(store.runJournal('run1')[0]!.undoJson).toBe('{"before":null,"after":{}}');
    store.close();
    const check = new Database(path, { readonly: true });
    expect(check.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get()).toBe('5');
    check.close();
  });

  it('PostgreSQL: migration 4 adds the undo column to a version 3 database; earlier entries have none', async () => {
    const url = await server().createDatabase('v3');
    const connect = () => withPassword(server(), () => connectState(url, { origin: 'test', fromEnvironment: true }));
    const connection = connect();
    connection.transaction([
      { text: `CREATE SCHEMA ${PG_SCHEMA}` },
      { text: `CREATE TABLE ${PG_SCHEMA}.schema_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())` },
    ]);
    for (const migration of MIGRATIONS.filter((m) => m.version <= 3)) {
      connection.transaction([{ text: migration.sql }, { text: `INSERT INTO ${PG_SCHEMA}.schema_migrations(version, description) VALUES ($1, $2)`, values: [migration.version, migration.description] }]);
    }
    connection.query(`INSERT INTO ${PG_SCHEMA}.journal(pipeline, run_id, client_id, action, state, at) VALUES ('p', 'run0', 'a', 'create', 'done', '2026-11-01T00:00:00Z')`);
    expect(migrate(connection)).toMatchObject({ from: 3, to: 6 });
    connection.close();

    const store = PostgresStateStore.open(connect(), 'p');
    expect(store.runJournal('run0')).toEqual([expect.objectContaining({ clientId: 'a', state: 'done', undoJson: null })]);
    store.close();
  });

  it('SQLite: schema 4 gains where each write went; earlier entries have none, and the revert refuses them', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'rostersync-state-')), 'p.sqlite');
    const current = SqliteStateStore.open(path, 'p');
    const old = current.journalSent('run0', 'a', 'create', '{"before":null,"after":{}}');
    current.close();
    const db = new Database(path);
    db.exec("ALTER TABLE journal DROP COLUMN service; ALTER TABLE journal DROP COLUMN group_id; UPDATE meta SET value = '4' WHERE key = 'schema_version'");
    db.close();

    const store = SqliteStateStore.open(path, 'p');
    expect(store.runJournal('run0')).toEqual([expect.objectContaining({ id: old, undoJson: '{"before":null,"after":{}}', target: null })]);
    store.journalSent('run1', 'b', 'create', '{"v":5,"before":null,"after":{}}', { baseUrl: 'http://s', groupId: 9 });
    expect(store.runJournal('run1')[0]!.target).toEqual({ baseUrl: 'http://s', groupId: 9 });
    store.close();
    const check = new Database(path, { readonly: true });
    expect(check.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get()).toBe('5');
    check.close();
  });

  it('PostgreSQL: migration 5 adds where each write went to a version 4 database; earlier entries have none', async () => {
    const url = await server().createDatabase('v4');
    const connect = () => withPassword(server(), () => connectState(url, { origin: 'test', fromEnvironment: true }));
    const connection = connect();
    connection.transaction([
      { text: `CREATE SCHEMA ${PG_SCHEMA}` },
      { text: `CREATE TABLE ${PG_SCHEMA}.schema_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())` },
    ]);
    for (const migration of MIGRATIONS.filter((m) => m.version <= 4)) {
      connection.transaction([{ text: migration.sql }, { text: `INSERT INTO ${PG_SCHEMA}.schema_migrations(version, description) VALUES ($1, $2)`, values: [migration.version, migration.description] }]);
    }
    connection.query(`INSERT INTO ${PG_SCHEMA}.journal(pipeline, run_id, client_id, action, state, at, undo_json) VALUES ('p', 'run0', 'a', 'create', 'done', '2026-11-01T00:00:00Z', '{}')`);
    expect(migrate(connection)).toMatchObject({ from: 4, to: 6 });
    connection.close();

    const store = PostgresStateStore.open(connect(), 'p');
    expect(store.runJournal('run0')).toEqual([expect.objectContaining({ clientId: 'a', undoJson: '{}', target: null })]);
    store.journalSent('run1', 'b', 'create', '{}', { baseUrl: 'http://s', groupId: 9 });
    expect(store.runJournal('run1')[0]!.target).toEqual({ baseUrl: 'http://s', groupId: 9 });
    store.close();
  });
});
