/**
 * The state store: inventory, journal, runs, identity, claims and the lock. The same suite runs
 * against every backend (SQLite files in a temp dir, a real PostgreSQL server); what only one
 * backend has (files, modes, heartbeat staleness) is tested below it.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StateBackend } from '../../src/state/backend.js';
import { ourPidScope } from '../../src/state/liveness.js';
import { StateError } from '../../src/state/backend.js';
import { SHARED_STATE_FILE } from '../../src/state/sqlite/schema.js';
import { STALE_LOCK_MS } from '../../src/state/sqlite/lock-row.js';
import { SqliteStateStore } from '../../src/state/sqlite/sqlite-store.js';
import { rowKey, rowKeysOf, stateBackends } from '../support/state-backends.js';

const dbPath = () => join(mkdtempSync(join(tmpdir(), 'rostersync-state-')), 'p.sqlite');

const backends = stateBackends();

describe.each(backends)('state store on $name', (backend) => {
  it('journals outcomes and keeps the inventory and serial in step', async () => {
    const store = (await backend.location()).open('p');
    const j1 = store.journalSent('run1', 'a', 'create');
    expect(store.unfinishedOrFailed()).toEqual(new Map([['a', { action: 'create', state: 'sent', status: null }]]));
    store.recordApplied({ journalId: j1, clientId: 'a', fieldsJson: '{"name":"A"}', hash: 'h1', runId: 'run1', sourceRow: 2, status: 200, attempts: 1 });
    expect(store.ownedHashesOf(['a', 'b'])).toEqual(new Map([['a', 'h1']]));
    expect([...store.ownedIds()]).toEqual(['a']);
    expect(store.unfinishedOrFailed().size).toBe(0);
    const j2 = store.journalSent('run1', 'b', 'create');
    store.journalFailed(j2, 400, 'bad value', 1);
    expect(store.unfinishedOrFailed()).toEqual(new Map([['b', { action: 'create', state: 'failed', status: 400 }]]));
    expect(store.ownedCount()).toBe(1);
    const serial = store.serial();
    const j3 = store.journalSent('run2', 'a', 'delete');
    store.recordDeleted({ journalId: j3, clientId: 'a', status: 200, attempts: 1 });
    expect(store.ownedCount()).toBe(0);
    expect(store.serial()).toBe(serial + 1);
    store.close();
  });

  it('looks hashes up in batches across the batch boundary', async () => {
    const store = (await backend.location()).open('p');
    const ids = Array.from({ length: 1203 }, (_, i) => `id-${i}`);
    for (const id of ids.filter((_, i) => i % 2 === 0)) store.adopt({ clientId: id, fieldsJson: '{}', hash: `h-${id}`, runId: 'r' });
    const found = store.ownedHashesOf([...ids, 'missing']);
    expect(found.size).toBe(602);
    expect(found.get('id-1202')).toBe('h-id-1202');
    expect(found.has('id-1')).toBe(false);
    store.close();
  });

  it('refuses a second lock with the owner, whatever the clocks say while the owner lives on this host, and unlocks', async () => {
    let now = Date.parse('2026-11-23T03:00:00Z');
    const at = await backend.location();
    const first = at.open('p', { now: () => now });
    first.acquireLock('run-1', 'alice');
    // A second run whose clock is far ahead: the owner's process is alive here, so the lock holds.
    const second = at.open('p', { now: () => now + 10 * STALE_LOCK_MS });
    expect(() => second.acquireLock('run-2', 'bob')).toThrow(/locked by run run-1: alice on .* pid \d+/);
    expect(first.heartbeat('run-1')).toBe(true);
    expect(second.forceUnlock()).toMatchObject({ runId: 'run-1' });
    expect(second.acquireLock('run-2', 'bob')).toMatchObject({ owner: 'bob', runId: 'run-2' });
    // The run whose lock was cleared learns it at its next heartbeat.
    expect(first.heartbeat('run-1')).toBe(false);
    expect(second.readLock()).toMatchObject({ runId: 'run-2', processStart: expect.any(String) });
    now += 1;
    first.close();
    second.close();
  });

  it('remembers the last successful real run for the source-drop guard', async () => {
    const store = (await backend.location()).open('p');
    store.startRun({ id: 'r1', dryRun: false, sourceSha256: 'x' });
    store.finishRun({ id: 'r1', outcome: 'success', validRecords: 100, counts: {} });
    store.startRun({ id: 'r2', dryRun: true, sourceSha256: 'x' });
    store.finishRun({ id: 'r2', outcome: 'dry_run', validRecords: 10, counts: {} });
    store.startRun({ id: 'r3', dryRun: false, sourceSha256: 'x' });
    store.finishRun({ id: 'r3', outcome: 'refused', validRecords: 20, counts: {} });
    store.startRun({ id: 'r4', dryRun: false, sourceSha256: 'x' });
    store.finishRun({ id: 'r4', outcome: 'failed', validRecords: 0, counts: {} });
    expect(store.lastSuccessfulRun()).toMatchObject({ id: 'r1', validRecords: 100 });
    // A run that applied everything but had rejected rows or failed records still counts.
    store.startRun({ id: 'r5', dryRun: false, sourceSha256: 'x' });
    store.finishRun({ id: 'r5', outcome: 'partial', validRecords: 90, counts: {} });
    expect(store.lastSuccessfulRun()).toMatchObject({ id: 'r5', validRecords: 90 });
    const dryRuns = new Map(store.recentRuns().map((run) => [run.id, run.dryRun]));
    expect(dryRuns).toEqual(new Map([['r1', false], ['r2', true], ['r3', false], ['r4', false], ['r5', false]]));
    store.close();
  });

  it('binds its identity, and retargeting lets the owned records go (no longer owned nor claimed)', async () => {
    const store = (await backend.location()).open('p');
    expect(store.identity()).toEqual({ pipeline: 'p', baseUrl: null, groupId: null, groupCreatedHere: false, groupName: null });
    store.bindService('HTTPS://Svc.Example.org:443/');
    store.setGroupId(7, { createdHere: true });
    expect(store.identity()).toEqual({ pipeline: 'p', baseUrl: 'https://svc.example.org', groupId: 7, groupCreatedHere: true, groupName: null });
    const target = { baseUrl: 'https://svc.example.org', groupId: 7 };
    store.adopt({ clientId: 'a', fieldsJson: '{}', hash: 'h', runId: 'r' });
    expect(store.claim(target, ['a']).size).toBe(0);
    store.journalSent('r', 'b', 'create');
    expect(store.retarget({ baseUrl: 'https://prod.example.org', groupId: 9 })).toEqual({ released: 1 });
    expect(store.identity()).toEqual({ pipeline: 'p', baseUrl: 'https://prod.example.org', groupId: 9, groupCreatedHere: false, groupName: null });
    expect(store.ownedCount()).toBe(0);
    expect(store.claimOwners(target, ['a']).size).toBe(0);
    expect(store.unfinishedOrFailed().size).toBe(0);
    store.close();
  });

  it('shares claims and targets between the pipelines of one state location', async () => {
    const at = await backend.location();
    const a = at.open('a');
    const b = at.open('b');
    const target = { baseUrl: 'https://svc.example.org/', groupId: 3 };
    expect(a.claim(target, ['x1', 'x2'])).toEqual(new Map());
    expect(b.claim(target, ['x2', 'y1'])).toEqual(new Map([['x2', 'a']]));
    expect(a.claimOwners(target, ['x1', 'x2', 'y1', 'z'])).toEqual(new Map([['x1', 'a'], ['x2', 'a'], ['y1', 'b']]));
    // Another group or service is another key.
    expect(b.claim({ ...target, groupId: 4 }, ['x2']).size).toBe(0);
    b.releaseClaims(target, ['x2']);
    expect(a.claimOwners(target, ['x2']).get('x2')).toBe('a');
    a.registerTarget(target, ['x']);
    b.registerTarget(target, null);
    expect(a.targetsOn(target)).toEqual([{ pipeline: 'a', sharedPrefixes: ['x'] }, { pipeline: 'b', sharedPrefixes: null }]);
    // A delete releases the claim on the bound target.
    a.bindService(target.baseUrl);
    a.setGroupId(3);
    a.adopt({ clientId: 'x1', fieldsJson: '{}', hash: 'h', runId: 'r' });
    const j = a.journalSent('r', 'x1', 'delete');
    a.recordDeleted({ journalId: j, clientId: 'x1', status: 200, attempts: 1 });
    expect(b.claimOwners(target, ['x1']).size).toBe(0);
    a.close();
    b.close();
  });

  it('claims owned records of a state made before claims, and names those another pipeline claims', async () => {
    const at = await backend.location();
    const a = at.open('a');
    const b = at.open('b');
    const target = { baseUrl: 'https://svc.example.org', groupId: 3 };
    for (const id of ['k1', 'k2']) a.adopt({ clientId: id, fieldsJson: '{}', hash: 'h', runId: 'r' });
    b.claim(target, ['k2']);
    expect(a.claimOwned(target)).toEqual(new Map([['k2', 'b']]));
    expect(b.claimOwners(target, ['k1', 'k2'])).toEqual(new Map([['k1', 'a'], ['k2', 'b']]));
    a.close();
    b.close();
  });

  it('keeps one plan-signing secret per state', async () => {
    const at = await backend.location();
    const store = at.open('p');
    const secret = store.planSecret();
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    store.close();
    const again = at.open('p');
    expect(again.planSecret()).toBe(secret);
    again.close();
    expect((await backend.location()).open('p').planSecret()).not.toBe(secret);
  });

  // The plan's fast path trusts a stored row key to mean "this row maps to exactly this record":
  // a key must never outlive the fields it was stored with.
  const applied = (store: StateBackend, clientId: string, hash: string, rowKey?: string) => {
    const journalId = store.journalSent('r', clientId, 'update');
    store.recordApplied({ journalId, clientId, fieldsJson: `{"h":"${hash}"}`, hash, runId: 'r', sourceRow: 2, status: 200, attempts: 1, ...(rowKey === undefined ? {} : { rowKey }) });
  };
  const keysOf = (store: StateBackend) => rowKeysOf(store).sort((a, b) => (a[1] < b[1] ? -1 : 1));

  it('stores the row key of each applied record and streams the known ones across pages', async () => {
    // Pages of 3 rows on PostgreSQL: 9 keys end exactly on a page boundary, 11 ids do not.
    const store = (await backend.location()).open('p', { pageSize: 3 });
    expect(rowKeysOf(store)).toEqual([]);
    const ids = Array.from({ length: 9 }, (_, i) => `id-${i}`);
    for (const id of ids) applied(store, id, `h-${id}`, rowKey(`key-${id}`));
    applied(store, 'no-key', 'h');
    store.adopt({ clientId: 'adopted', fieldsJson: '{}', hash: 'h', runId: 'r' });
    expect(keysOf(store)).toEqual(ids.map((id) => [rowKey(`key-${id}`), id]));
    expect([...store.ownedIds()].sort()).toEqual(['adopted', ...ids, 'no-key'].sort());
    store.close();
  });

  it('clears a row key on every other write of its record, and forgets it with the record', async () => {
    const store = (await backend.location()).open('p');
    applied(store, 'a', 'h1', rowKey('ka'));
    applied(store, 'b', 'h1', rowKey('kb'));
    applied(store, 'c', 'h1', rowKey('kc'));
    applied(store, 'd', 'h1', rowKey('kd'));
    // Applied again without a key (a row with a NUL, or not from the roster): unknown.
    applied(store, 'a', 'h2');
    // Adopted (state import): its fields did not come from a row.
    store.adopt({ clientId: 'b', fieldsJson: '{}', hash: 'h1', runId: 'r' });
    // Deleted and forgotten records take their keys with them, and come back without one.
    store.recordDeleted({ journalId: store.journalSent('r', 'c', 'delete'), clientId: 'c', status: 200, attempts: 1 });
    expect(store.forget('d')).toBe(true);
    expect(keysOf(store)).toEqual([]);
    store.adopt({ clientId: 'c', fieldsJson: '{}', hash: 'h1', runId: 'r' });
    store.adopt({ clientId: 'd', fieldsJson: '{}', hash: 'h1', runId: 'r' });
    expect(keysOf(store)).toEqual([]);
    // A new key replaces the old one.
    applied(store, 'a', 'h3', rowKey('ka3'));
    applied(store, 'a', 'h3', rowKey('ka4'));
    expect(keysOf(store)).toEqual([[rowKey('ka4'), 'a']]);
    expect(store.retarget({ baseUrl: null, groupId: null })).toEqual({ released: 4 });
    expect(keysOf(store)).toEqual([]);
    store.close();
  });

  it('stores pages of row keys, many at once (rebuilding the index) or a few, with the same guard', async () => {
    for (const expected of [3, 1_000_000]) {
      const store = (await backend.location()).open('p');
      for (const id of ['a', 'b', 'c']) store.adopt({ clientId: id, fieldsJson: '{}', hash: `h-${id}`, runId: 'r' });
      applied(store, 'd', 'h-d', rowKey('kd'));
      store.setRowKeyPages(
        [
          [{ clientId: 'a', rowKey: rowKey('ka'), hash: 'h-a' }, { clientId: 'b', rowKey: rowKey('kb'), hash: 'written since planning' }],
          [{ clientId: 'c', rowKey: rowKey('kc'), hash: 'h-c' }],
        ],
        expected,
      );
      expect(keysOf(store)).toEqual([[rowKey('ka'), 'a'], [rowKey('kc'), 'c'], [rowKey('kd'), 'd']]);
      // The keys are found through the index afterwards, as the fast path reads them.
      expect(rowKeysOf(store)).toHaveLength(3);
      store.close();
    }
  });

  it('keeps the salt of the stored row keys, without touching the inventory serial', async () => {
    const store = (await backend.location()).open('p');
    expect(store.rowKeySalt()).toBeUndefined();
    const serial = store.serial();
    store.setRowKeySalt('salt-1');
    store.setRowKeySalt('salt-2');
    expect(store.rowKeySalt()).toBe('salt-2');
    expect(store.serial()).toBe(serial);
    store.close();
  });

  it('sets row keys only on owned records that still have the hash the key was computed for', async () => {
    // Pages of 2 on PostgreSQL: setRowKeys spans several batches in one transaction.
    const store = (await backend.location()).open('p', { pageSize: 2 });
    for (const id of ['a', 'b', 'c', 'd']) store.adopt({ clientId: id, fieldsJson: '{}', hash: `h-${id}`, runId: 'r' });
    const serial = store.serial();
    store.setRowKeys([]);
    store.setRowKeys([
      { clientId: 'a', rowKey: rowKey('ka'), hash: 'h-a' },
      { clientId: 'b', rowKey: rowKey('kb'), hash: 'written since planning' },
      { clientId: 'not-owned', rowKey: rowKey('kx'), hash: 'h-a' },
      { clientId: 'c', rowKey: 'kc-first', hash: 'h-c' },
      { clientId: 'c', rowKey: rowKey('kc'), hash: 'h-c' },
    ]);
    expect(keysOf(store)).toEqual([[rowKey('ka'), 'a'], [rowKey('kc'), 'c']]);
    expect(store.ownedCount()).toBe(4);
    // A cache beside the inventory: saved plans bound to the serial stay valid.
    expect(store.serial()).toBe(serial);
    // A later write of the record clears it; a key for the new hash is taken.
    applied(store, 'a', 'h-a2');
    store.setRowKeys([{ clientId: 'a', rowKey: 'ka-old', hash: 'h-a' }, { clientId: 'd', rowKey: rowKey('kd'), hash: 'h-d' }]);
    expect(keysOf(store)).toEqual([[rowKey('kc'), 'c'], [rowKey('kd'), 'd']]);
    store.setRowKeys([{ clientId: 'a', rowKey: rowKey('ka2'), hash: 'h-a2' }]);
    expect(keysOf(store)).toEqual([[rowKey('ka2'), 'a'], [rowKey('kc'), 'c'], [rowKey('kd'), 'd']]);
    store.close();
  });
});

describe('StateStore (SQLite only)', () => {
  it('builds the row_key index again after storing many keys at once', () => {
    const path = dbPath();
    const store = SqliteStateStore.open(path, 'p');
    store.adopt({ clientId: 'a', fieldsJson: '{}', hash: 'h-a', runId: 'r' });
    store.setRowKeyPages([[{ clientId: 'a', rowKey: rowKey('ka'), hash: 'h-a' }]], 1_000_000);
    store.close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare("SELECT sql FROM sqlite_master WHERE name = 'records_row_key'").pluck().get()).toBe('CREATE INDEX records_row_key ON records(row_key)');
    const plan = db.prepare("EXPLAIN QUERY PLAN SELECT client_id FROM records WHERE row_key = 'x'").all() as Array<{ detail: string }>;
    expect(plan.map((step) => step.detail)).toEqual([expect.stringContaining('records_row_key')]);
    db.close();
  });

  it('refuses a state file that belongs to another pipeline', () => {
    const path = dbPath();
    SqliteStateStore.open(path, 'reviewers').close();
    expect(() => SqliteStateStore.open(path, 'board')).toThrow(/belongs to pipeline "reviewers", not "board"/);
  });

  it('refuses a file that is not a state database, with a hint', () => {
    const path = dbPath();
    writeFileSync(path, 'not sqlite at all, just text that is long enough to be a header '.repeat(10));
    expect(() => SqliteStateStore.open(path, 'p')).toThrow(StateError);
  });

  it('takes over a lock of another host only once its heartbeat is stale', () => {
    let now = Date.parse('2026-11-23T03:00:00Z');
    const path = dbPath();
    const raw = new Database(path.replace(/p\.sqlite$/, 'p.sqlite'));
    const store = SqliteStateStore.open(path, 'p', { now: () => now });
    raw.prepare('INSERT INTO lock(id, owner, host, pid, proc_start, started_at, heartbeat_at, run_id) VALUES (1, ?, ?, ?, NULL, ?, ?, ?)')
      .run('carol', `not-${hostname()}`, 1, new Date(now).toISOString(), new Date(now).toISOString(), 'run-0');
    raw.close();
    expect(() => store.acquireLock('run-1')).toThrow(/locked by run run-0: carol/);
    now += STALE_LOCK_MS + 1;
    expect(store.acquireLock('run-1')).toMatchObject({ runId: 'run-1' });
    store.close();
  });

  it('treats a lock of this host whose pid is alive but is another process (pid reused) as stale', () => {
    const store = SqliteStateStore.open(dbPath(), 'p');
    store.acquireLock('run-1');
    expect(store.isStale(store.readLock()!)).toBe(false);
    const { bootId, pidNamespace } = ourPidScope()!;
    expect(store.isStale({ ...store.readLock()!, processStart: `${bootId}:1:${pidNamespace}` })).toBe(true);
    store.close();
  });

  it('judges a lock from another PID namespace or boot, or one that names neither, by its heartbeat even under our host name', () => {
    let now = Date.parse('2026-11-23T03:00:00Z');
    const store = SqliteStateStore.open(dbPath(), 'p', { now: () => now });
    store.acquireLock('run-1');
    const { bootId, pidNamespace } = ourPidScope()!;
    // pid 1 is alive here, but these owners' pid 1 is another process.
    for (const processStart of [`${bootId}:1:pid:[1]`, `another-boot:1:${pidNamespace}`, `${bootId}:1`, null]) {
      const lock = { ...store.readLock()!, pid: 1, host: hostname(), processStart };
      expect(store.isStale(lock), String(processStart)).toBe(false);
      now += STALE_LOCK_MS + 1;
      expect(store.isStale(lock), String(processStart)).toBe(true);
      now -= STALE_LOCK_MS + 1;
    }
    store.close();
  });

  it('treats a lock held by a dead process on this host as stale', () => {
    const store = SqliteStateStore.open(dbPath(), 'p');
    store.acquireLock('run-1');
    const lock = { ...store.readLock()!, pid: 2 ** 22 + 12345 };
    expect(store.isStale(lock)).toBe(true);
    store.close();
  });

  it('creates its directory 0700 and its files 0600 (the state holds emails)', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'rostersync-state-')), 'nested', 'p.sqlite');
    const store = SqliteStateStore.open(path, 'p');
    store.adopt({ clientId: 'a', fieldsJson: '{}', hash: 'h', runId: 'r' });
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    for (const file of [path, `${path}-wal`, join(dirname(path), SHARED_STATE_FILE)]) expect(statSync(file).mode & 0o777, file).toBe(0o600);
    store.close();
  });

  // An older state file: the tables whose shape changed since, as that version created them (the
  // others are created as they are now), holding one applied record.
  const olderState = (version: 1 | 2) => {
    const path = dbPath();
    const old = new Database(path);
    old.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE records (client_id TEXT PRIMARY KEY, fields_json TEXT NOT NULL, hash TEXT NOT NULL, run_id TEXT NOT NULL, source_row INTEGER, updated_at TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE lock (id INTEGER PRIMARY KEY CHECK (id = 1), owner TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL, ${version === 2 ? 'proc_start TEXT, ' : ''}started_at TEXT NOT NULL, heartbeat_at TEXT NOT NULL, run_id TEXT NOT NULL);
      INSERT INTO meta VALUES ('schema_version', '${version}'), ('serial', '4'), ('pipeline', 'p'), ('group_id', '12');
      INSERT INTO records VALUES ('a', '{"name":"A"}', 'h-a', 'r0', 2, '2026-11-01T00:00:00.000Z');`);
    old.close();
    return path;
  };
  const schemaVersionOf = (path: string) => {
    const db = new Database(path, { readonly: true });
    try {
      return (db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string }).value;
    } finally {
      db.close();
    }
  };

  it.each([1, 2] as const)('migrates a version %i state: records kept without row keys, lock with process start time', (version) => {
    const path = olderState(version);
    const store = SqliteStateStore.open(path, 'p');
    expect(store.identity()).toMatchObject({ groupId: 12, baseUrl: null, groupCreatedHere: false });
    expect(store.acquireLock('r')).toMatchObject({ runId: 'r', processStart: expect.any(String) });
    expect(store.serial()).toBe(4);
    expect(store.getOwned('a')).toEqual({ clientId: 'a', fieldsJson: '{"name":"A"}', hash: 'h-a', runId: 'r0', sourceRow: 2 });
    // No key is known for what an older version wrote: every row takes the full path once.
    expect(rowKeysOf(store)).toEqual([]);
    store.setRowKeys([{ clientId: 'a', rowKey: rowKey('ka'), hash: 'h-a' }]);
    expect(rowKeysOf(store)).toEqual([[rowKey('ka'), 'a']]);
    store.close();
    expect(schemaVersionOf(path)).toBe('5');
    // Opening the migrated file again migrates nothing and keeps the key.
    const again = SqliteStateStore.open(path, 'p');
    expect(rowKeysOf(again)).toEqual([[rowKey('ka'), 'a']]);
    again.close();
  });

  it('refuses a state file from a newer rostersync', () => {
    const path = dbPath();
    SqliteStateStore.open(path, 'p').close();
    const db = new Database(path);
    db.prepare("UPDATE meta SET value = '6' WHERE key = 'schema_version'").run();
    db.close();
    expect(() => SqliteStateStore.open(path, 'p')).toThrow(/state schema version 6 is not supported \(expected 5\)/);
  });
});
