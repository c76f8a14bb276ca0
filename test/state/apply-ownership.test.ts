/**
 * The writer's side of ownership, against a fake record writer: create-if-absent (a partial POST
 * first, a full POST only on 404), a client_id another pipeline claimed since planning is not
 * written, and a run whose lock was taken says so instead of reporting a signal.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writePlan, LockLostError, type RecordWriter } from '../../src/apply/apply.js';
import { errorFromStatus } from '../../src/client/errors.js';
import { EXIT } from '../../src/errors.js';
import { canonicalJson, hashJson } from '../../src/plan/canonical.js';
import type { Fields, PlanItem } from '../../src/plan/types.js';
import { SqliteStateStore } from '../../src/state/sqlite/sqlite-store.js';

type Call = [string, string, Fields | undefined];

/** A service holding `existing` client_ids: a partial POST of another id answers 404, as docs/service-contract.md, call 3 says. */
function service(existing: string[]): RecordWriter & { calls: Call[] } {
  const records = new Set(existing);
  const calls: Call[] = [];
  return {
    calls,
    async putAuthor(_g, clientId, body) {
      calls.push(['full', clientId, body]);
      records.add(clientId);
    },
    async patchAuthor(_g, clientId, body) {
      calls.push(['partial', clientId, body]);
      if (!records.has(clientId)) throw errorFromStatus({ status: 404, method: 'POST', path: `/api/external/author-from-group/7/${clientId}/partial/` });
    },
    async deleteAuthor(_g, clientId) {
      calls.push(['delete', clientId, undefined]);
    },
  };
}

function create(clientId: string, ifAbsent: boolean): PlanItem {
  const fields: Fields = { name: `Name ${clientId}`, emails: null };
  const fieldsJson = canonicalJson(fields);
  return { clientId, action: 'create', reason: 'new', body: { name: `Name ${clientId}` }, desired: { fieldsJson, hash: hashJson(fieldsJson) }, changes: [], ...(ifAbsent ? { ifAbsent: true } : {}) };
}

function store(name = 'p', dir = mkdtempSync(join(tmpdir(), 'rostersync-apply-'))): SqliteStateStore {
  const opened = SqliteStateStore.open(join(dir, `${name}.sqlite`), name);
  opened.bindService('http://127.0.0.1:1');
  opened.setGroupId(7);
  return opened;
}

const run = (items: PlanItem[], writer: RecordWriter, state: SqliteStateStore, signal?: AbortSignal) =>
  writePlan({ plan: { items, stateRepairs: [] }, groupId: 7, writer, store: state, runId: 'r', concurrency: 1, ...(signal ? { signal } : {}) });

describe('apply: ownership', () => {
  it('adopts an existing record with one partial POST of every managed field, and creates a missing one after a 404', async () => {
    const writer = service(['old']);
    const state = store();
    const result = await run([create('old', true), create('new', true), create('plain', false)], writer, state);
    expect(writer.calls).toEqual([
      ['partial', 'old', { name: 'Name old', emails: null }],
      ['partial', 'new', { name: 'Name new', emails: null }],
      ['full', 'new', { name: 'Name new' }],
      ['full', 'plain', { name: 'Name plain' }],
    ]);
    expect(result.outcomes.get('old')).toMatchObject({ outcome: 'done', adopted: true });
    expect(result.outcomes.get('new')).toMatchObject({ outcome: 'done' });
    expect(result.outcomes.get('new')!.adopted).toBeUndefined();
    expect(state.ownedCount()).toBe(3);
    expect(state.claimOwners({ baseUrl: 'http://127.0.0.1:1', groupId: 7 }, ['old', 'new', 'plain']).size).toBe(3);
    state.close();
  });

  it('does not write a client_id another pipeline sharing the state claimed since planning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rostersync-apply-'));
    const other = store('other', dir);
    other.claim({ baseUrl: 'http://127.0.0.1:1', groupId: 7 }, ['taken']);
    const mine = store('mine', dir);
    const writer = service([]);
    const result = await run([create('taken', true), create('free', true)], writer, mine);
    expect(writer.calls.map(([, id]) => id)).toEqual(['free', 'free']);
    expect(result.outcomes.get('taken')).toMatchObject({ outcome: 'failed', error: expect.stringContaining('pipeline "other" owns this record') });
    expect(mine.getOwned('taken')).toBeUndefined();
    other.close();
    mine.close();
  });

  it('says that the run lost its lock (exit 2), not that a signal stopped it', async () => {
    const controller = new AbortController();
    controller.abort(new LockLostError('this run lost the pipeline lock: run r2 (bob on h, pid 7) took it at 2026-11-23T03:00:00Z'));
    const state = store();
    const result = await run([create('a', false)], service([]), state, controller.signal);
    expect(result.stopped).toMatchObject({ reason: 'lock_lost', exitCode: EXIT.partial });
    expect(result.stopped!.message).toMatch(/^this run lost the pipeline lock: run r2 \(bob on h, pid 7\) took it/);
    expect(result.stopped!.message).not.toContain('signal');
    state.close();
  });
});
