/**
 * The writer alone: writePlan against a fake record writer (the service's three record calls,
 * scripted per client_id) and a real SQLite state in a temporary directory. What the journal and
 * the inventory hold after each scenario is read back from the store.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writePlan, type RecordWriter, type WriteOptions } from '../../src/apply/apply.js';
import { errorFromStatus } from '../../src/client/errors.js';
import { EXIT } from '../../src/errors/user-facing-error.js';
import { canonicalJson, hashJson } from '../../src/plan/canonical.js';
import type { Fields, PlanItem } from '../../src/plan/types.js';
import { SqliteStateStore } from '../../src/state/sqlite/sqlite-store.js';

const GROUP = 501;
const RUN = 'run-1';

type Call = { method: 'put' | 'patch' | 'delete'; clientId: string };

/** Answers every call with success unless `fail` names the client_id: then it throws that error. */
function fakeWriter(fail: Record<string, () => Error> = {}): RecordWriter & { calls: Call[] } {
  const calls: Call[] = [];
  const answer = async (call: Call, options?: WriteOptions): Promise<unknown> => {
    calls.push(call);
    await Promise.resolve();
    const failure = fail[call.clientId];
    if (failure) throw failure();
    options?.onSucceeded?.(1);
    return { ok: true };
  };
  return {
    calls,
    putAuthor: (_group, clientId, _body, options) => answer({ method: 'put', clientId }, options),
    patchAuthor: (_group, clientId, _body, options) => answer({ method: 'patch', clientId }, options),
    deleteAuthor: (_group, clientId, options) => answer({ method: 'delete', clientId }, options),
  };
}

const statusError = (status: number) => () => errorFromStatus({ status, method: 'POST', path: `/api/external/authors-groups/${GROUP}/authors/x/` });

function desired(fields: Fields) {
  const fieldsJson = canonicalJson(fields);
  return { fieldsJson, hash: hashJson(fieldsJson) };
}

const create = (clientId: string, extra: Partial<PlanItem> = {}): PlanItem => ({
  clientId,
  action: 'create',
  reason: 'new',
  body: { name: clientId },
  desired: desired({ name: clientId }),
  changes: [],
  ...extra,
});
const update = (clientId: string): PlanItem => ({ clientId, action: 'update', reason: 'changed', body: { name: `${clientId}!` }, desired: desired({ name: `${clientId}!` }), changes: [] });
const remove = (clientId: string, extra: Partial<PlanItem> = {}): PlanItem => ({ clientId, action: 'delete', reason: 'gone_from_roster', changes: [], ...extra });

let store: SqliteStateStore;
beforeEach(() => {
  store = SqliteStateStore.open(join(mkdtempSync(join(tmpdir(), 'rostersync-apply-')), 'pipeline.sqlite'), 'pipeline');
  store.setGroupId(GROUP);
  store.startRun({ id: RUN, dryRun: false, sourceSha256: '' });
  // Records the plan updates or deletes are owned, as the planner would have found them.
  for (const clientId of ['u1', 'd1', 'd2', 'old-id']) store.adopt({ clientId, ...desired({ name: clientId }), runId: 'earlier' });
});
afterEach(() => store.close());

const apply = (items: PlanItem[], writer: RecordWriter, extra: { concurrency?: number; unavailableLimit?: number } = {}) =>
  writePlan({ plan: { items, stateRepairs: [] }, groupId: GROUP, writer, store, runId: RUN, concurrency: extra.concurrency ?? 1, ...(extra.unavailableLimit ? { unavailableLimit: extra.unavailableLimit } : {}) });

describe('writePlan', () => {
  it('writes creates and updates before any delete, whatever the order and the concurrency', async () => {
    const writer = fakeWriter();
    const result = await apply([remove('d1'), create('c1'), remove('d2'), update('u1'), create('c2')], writer, { concurrency: 4 });
    const firstDelete = writer.calls.findIndex((call) => call.method === 'delete');
    expect(firstDelete).toBe(3);
    expect(writer.calls.slice(0, 3).map((call) => call.clientId).sort()).toEqual(['c1', 'c2', 'u1']);
    expect(writer.calls.slice(3).map((call) => call.clientId).sort()).toEqual(['d1', 'd2']);
    expect([...result.outcomes.values()].every((o) => o.outcome === 'done')).toBe(true);
    expect(result.stopped).toBeUndefined();
    // The inventory follows the writes: creates owned, deletes gone, the update's new hash stored.
    expect(store.getOwned('c1')).toBeDefined();
    expect(store.getOwned('d1')).toBeUndefined();
    expect(store.ownedHashesOf(['u1']).get('u1')).toBe(desired({ name: 'u1!' }).hash);
  });

  it('sends a replace as a full POST, journaled as an update of the record', async () => {
    const writer = fakeWriter();
    const replace: PlanItem = { ...update('u1'), action: 'replace' };
    const result = await apply([replace], writer);
    expect(writer.calls).toEqual([{ method: 'put', clientId: 'u1' }]);
    expect(result.outcomes.get('u1')).toMatchObject({ outcome: 'done' });
    expect(store.runJournal(RUN).map((entry) => [entry.clientId, entry.action, entry.state])).toEqual([['u1', 'update', 'done']]);
    expect(store.ownedHashesOf(['u1']).get('u1')).toBe(desired({ name: 'u1!' }).hash);
  });

  it('takes a 404 on delete as done: the record is already gone', async () => {
    const result = await apply([remove('d1')], fakeWriter({ d1: statusError(404) }));
    expect(result.outcomes.get('d1')).toEqual({ outcome: 'done', httpStatus: 404, attempts: 1 });
    expect(store.getOwned('d1')).toBeUndefined();
    expect([...store.unfinishedOrFailed().keys()]).toEqual([]);
  });

  it('skips the delete paired with a create that failed, and journals the failure for the next run', async () => {
    const writer = fakeWriter({ 'new-id': statusError(422) });
    const result = await apply([create('new-id', { reason: 'client_id_changed', pairedWith: 'old-id' }), remove('old-id', { reason: 'client_id_changed', pairedWith: 'new-id' })], writer);
    expect(result.outcomes.get('new-id')).toMatchObject({ outcome: 'failed', httpStatus: 422 });
    expect(result.outcomes.get('old-id')).toEqual({ outcome: 'skipped', error: 'not deleted: the create of new-id that replaces it failed; retried on the next run' });
    expect(writer.calls.filter((call) => call.method === 'delete')).toEqual([]);
    expect(store.getOwned('old-id')).toBeDefined();
    expect(store.unfinishedOrFailed().get('new-id')).toMatchObject({ action: 'create' });
  });

  it('stops starting calls when the service stays unavailable, and writes no delete', async () => {
    const unavailable = statusError(503);
    const writer = fakeWriter({ c1: unavailable, c2: unavailable, c3: unavailable, c4: unavailable });
    const result = await apply([create('c1'), create('c2'), create('c3'), create('c4'), remove('d1')], writer, { unavailableLimit: 3 });
    expect(result.stopped).toMatchObject({ reason: 'unavailable', exitCode: EXIT.unavailable });
    expect(result.stopped?.message).toMatch(/^the service kept failing \(3 calls in a row past the retry budget\)/);
    expect(writer.calls.map((call) => call.clientId)).toEqual(['c1', 'c2', 'c3']);
    expect(result.outcomes.has('c4')).toBe(false);
    expect(result.outcomes.has('d1')).toBe(false);
    expect(store.getOwned('d1')).toBeDefined();
  });
});
