/**
 * The writer's side of ownership, against a fake record writer: create-if-absent (a GET first, a
 * full POST only on 404, else a partial POST that reports the values it replaced), a client_id another pipeline claimed since planning is not
 * written, and a run whose lock was taken says so instead of reporting a signal.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writePlan, LockLostError, type RecordWriter } from '../../src/apply/apply.js';
import { errorFromStatus } from '../../src/client/errors.js';
import { EXIT } from '../../src/errors/user-facing-error.js';
import { canonicalJson, hashJson } from '../../src/plan/canonical.js';
import type { Fields, PlanItem } from '../../src/plan/types.js';
import { SqliteStateStore } from '../../src/state/sqlite/sqlite-store.js';

type Call = [string, string, Fields | undefined];

/** A service holding `existing` records: a GET or partial POST of another id answers 404, as docs/service-contract.md, call 3 says. */
function service(existing: Record<string, Fields>): RecordWriter & { calls: Call[] } {
  const records = new Map(Object.entries(existing));
  const calls: Call[] = [];
  const notFound = (clientId: string) => errorFromStatus({ status: 404, method: 'GET', path: `/api/external/author-from-group/7/${clientId}/` });
  return {
    calls,
    async getAuthor(_g, clientId) {
      calls.push(['get', clientId, undefined]);
      const record = records.get(clientId);
      if (!record) throw notFound(clientId);
      return { client_id: clientId, ...record };
    },
    async putAuthor(_g, clientId, body) {
      calls.push(['full', clientId, body]);
      records.set(clientId, body);
    },
    async patchAuthor(_g, clientId, body) {
      calls.push(['partial', clientId, body]);
      if (!records.has(clientId)) throw notFound(clientId);
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
  it('adopts an existing record with a GET and one partial POST of every managed field, and creates a missing one after a 404', async () => {
    const writer = service({ old: { name: 'Typed in the UI', emails: [], notes: 'kept' } });
    const state = store();
    const result = await run([create('old', true), create('new', true), create('plain', false)], writer, state);
    expect(writer.calls).toEqual([
      ['get', 'old', undefined],
      ['partial', 'old', { name: 'Name old', emails: null }],
      ['get', 'new', undefined],
      ['full', 'new', { name: 'Name new' }],
      ['full', 'plain', { name: 'Name plain' }],
    ]);
    // The name held in the service is reported as overwritten; the empty e-mail list is not.
    expect(result.outcomes.get('old')).toMatchObject({ outcome: 'done', adopted: true, overwritten: [{ field: 'name', before: 'Typed in the UI', after: 'Name old' }] });
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
    const writer = service({});
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
    const result = await run([create('a', false)], service({}), state, controller.signal);
    expect(result.stopped).toMatchObject({ reason: 'lock_lost', exitCode: EXIT.partial });
    expect(result.stopped!.message).toMatch(/^this run lost the pipeline lock: run r2 \(bob on h, pid 7\) took it/);
    expect(result.stopped!.message).not.toContain('signal');
    state.close();
  });
});
