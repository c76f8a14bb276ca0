/** The state store: inventory, journal, runs and the lock (real SQLite files in a temp dir). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STALE_LOCK_MS, StateError, StateStore } from '../../src/state/store.js';

const dbPath = () => join(mkdtempSync(join(tmpdir(), 'rostersync-state-')), 'p.sqlite');

describe('StateStore', () => {
  it('refuses a state file that belongs to another pipeline', () => {
    const path = dbPath();
    StateStore.open(path, 'reviewers').close();
    expect(() => StateStore.open(path, 'board')).toThrow(/belongs to pipeline "reviewers", not "board"/);
  });

  it('refuses a file that is not a state database, with a hint', () => {
    const path = dbPath();
    writeFileSync(path, 'not sqlite at all, just text that is long enough to be a header '.repeat(10));
    expect(() => StateStore.open(path, 'p')).toThrow(StateError);
  });

  it('journals outcomes and keeps the inventory and serial in step', () => {
    const store = StateStore.open(dbPath(), 'p');
    const j1 = store.journalPlanned('run1', 'a', 'create');
    store.journalSent(j1);
    expect(store.unfinishedOrFailed()).toEqual(new Map([['a', { action: 'create', state: 'sent', status: null }]]));
    store.recordApplied({ journalId: j1, clientId: 'a', fieldsJson: '{"name":"A"}', hash: 'h1', runId: 'run1', sourceRow: 2, status: 200, attempts: 1 });
    expect(store.ownedHashesOf(['a', 'b'])).toEqual(new Map([['a', 'h1']]));
    expect([...store.ownedIds()]).toEqual(['a']);
    expect(store.unfinishedOrFailed().size).toBe(0);
    const j2 = store.journalPlanned('run1', 'b', 'create');
    store.journalFailed(j2, 400, 'bad value', 1);
    expect(store.unfinishedOrFailed()).toEqual(new Map([['b', { action: 'create', state: 'failed', status: 400 }]]));
    expect(store.ownedCount()).toBe(1);
    const serial = store.serial();
    const j3 = store.journalPlanned('run2', 'a', 'delete');
    store.recordDeleted({ journalId: j3, clientId: 'a', status: 200, attempts: 1 });
    expect(store.ownedCount()).toBe(0);
    expect(store.serial()).toBe(serial + 1);
    store.close();
  });

  it('looks hashes up in batches across the batch boundary', () => {
    const store = StateStore.open(dbPath(), 'p');
    const ids = Array.from({ length: 1203 }, (_, i) => `id-${i}`);
    for (const id of ids.filter((_, i) => i % 2 === 0)) store.adopt({ clientId: id, fieldsJson: '{}', hash: `h-${id}`, runId: 'r' });
    const found = store.ownedHashesOf([...ids, 'missing']);
    expect(found.size).toBe(602);
    expect(found.get('id-1202')).toBe('h-id-1202');
    expect(found.has('id-1')).toBe(false);
    store.close();
  });

  it('refuses a second lock with the owner, takes over a stale one, and unlocks', () => {
    let now = Date.parse('2026-11-23T03:00:00Z');
    const path = dbPath();
    const first = StateStore.open(path, 'p', { now: () => now });
    first.acquireLock('run-1', 'alice');
    const second = StateStore.open(path, 'p', { now: () => now });
    expect(() => second.acquireLock('run-2', 'bob')).toThrow(/locked by run run-1: alice on .* pid \d+/);
    now += STALE_LOCK_MS + 1;
    expect(second.acquireLock('run-2', 'bob')).toMatchObject({ owner: 'bob', runId: 'run-2' });
    expect(second.forceUnlock()).toMatchObject({ runId: 'run-2' });
    expect(second.readLock()).toBeUndefined();
    first.close();
    second.close();
  });

  it('treats a lock held by a dead process on this host as stale', () => {
    const store = StateStore.open(dbPath(), 'p');
    store.acquireLock('run-1');
    const lock = { ...store.readLock()!, pid: 2 ** 22 + 12345 };
    expect(store.isStale(lock)).toBe(true);
    store.close();
  });

  it('remembers the last successful real run for the source-drop guard', () => {
    const store = StateStore.open(dbPath(), 'p');
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
    store.close();
  });
});
