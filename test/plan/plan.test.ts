/** The pure planner: table tests of guards, limits and diffs (no I/O anywhere). */
import { describe, expect, it } from 'vitest';
import { buildPlan, type BuildPlanInput } from '../../src/plan/build.js';
import { canonicalJson, hashJson, sameValue } from '../../src/plan/canonical.js';
import { RosterClassifier } from '../../src/plan/classify.js';
import { deleteLimit, evaluateGuards } from '../../src/plan/guards.js';
import type { DesiredRecord } from '../../src/mapping/types.js';
import { materialized, type Fields } from '../../src/plan/types.js';
import { estimateText } from '../../src/report/build.js';

const GUARDS = { max_deletes: 50, max_delete_percent: 10, max_source_drop_percent: 50, max_identity_changes: 10, max_identity_change_percent: 5 };

function record(clientId: string, fields: Fields, row = 2): DesiredRecord {
  return { clientId, fields, provenance: { file: 'roster.csv', row } };
}
const hashOf = (fields: Fields) => hashJson(canonicalJson(fields));

function plan(input: { desired: DesiredRecord[]; owned?: Record<string, Fields>; mode?: 'upsert' | 'mirror'; update?: 'partial' | 'full'; remote?: Map<string, Fields | null>; failed?: Record<string, 'create' | 'update' | 'delete'>; drop?: string[] }) {
  const owned = input.owned ?? {};
  const failed = new Map(Object.entries(input.failed ?? {}));
  const classifier = new RosterClassifier({ keepUnchanged: input.remote !== undefined, rewrite: new Set(failed.keys()) });
  for (const r of input.desired) classifier.add(r, owned[r.clientId] ? hashOf(owned[r.clientId]!) : undefined);
  const args: BuildPlanInput = {
    classification: classifier.finish(new Map(input.desired.map((r) => [r.clientId, r.provenance.row])), { count: Object.keys(owned).length, ids: () => Object.keys(owned) }, new Set(input.drop ?? [])),
    lastApplied: new Map(Object.entries(owned)),
    ...(input.remote ? { remote: input.remote } : {}),
    previouslyFailed: failed,
    policy: { mode: input.mode ?? 'mirror', update: input.update ?? 'partial', max_rps: 10, guards: GUARDS },
    fieldLabels: new Map([['cf-1', 'Reviews completed']]),
    guardInput: { ownedCount: Object.keys(owned).length, validCount: input.desired.length, previousValidCount: null, inventoryMissing: false, allow: {} },
  };
  // Every item in `items`, the new records too, as a saved plan holds them.
  return materialized(buildPlan(args));
}

describe('deleteLimit', () => {
  it.each([
    [0, 1],
    [5, 1],
    [40, 4],
    [499, 49],
    [10_000, 50],
  ])('with %i owned records allows %i deletes', (owned, limit) => {
    expect(deleteLimit(GUARDS, owned)).toBe(limit);
  });
});

const swaps = (count: number) => Array.from({ length: count }, (_, i) => ({ clientId: `p${i}`, before: `Person ${i}`, after: `Other ${i}` }));

describe('evaluateGuards', () => {
  const base = { guards: GUARDS, deletes: 0, ownedCount: 100, validCount: 100, previousValidCount: 100, inventoryMissing: false, allow: {} };
  it.each([
    ['nothing to refuse', {}, []],
    ['too many deletes', { deletes: 11 }, ['max_deletes']],
    ['deletes allowed by the flag', { deletes: 11, allow: { deletes: 11 } }, []],
    ['flag below the planned deletes', { deletes: 11, allow: { deletes: 10 } }, ['max_deletes']],
    ['source dropped by more than half', { validCount: 49 }, ['source_drop']],
    ['source drop allowed', { validCount: 49, allow: { sourceDrop: true } }, []],
    ['exactly half is fine', { validCount: 50 }, []],
    ['empty source never deletes', { validCount: 0, deletes: 100 }, ['empty_source', 'max_deletes']],
    ['empty source allowed only with both flags', { validCount: 0, deletes: 100, allow: { emptySource: true, deletes: 100 } }, []],
    ['empty source on a first run is fine', { validCount: 0, ownedCount: 0, previousValidCount: null }, []],
    ['deletes with rows whose id is unreadable', { deletes: 2, unidentifiedRejected: 1 }, ['unreadable_rows']],
    ['unreadable rows allowed by the flag', { deletes: 2, unidentifiedRejected: 1, allow: { deletes: 2 } }, []],
    ['unreadable rows without deletes are fine', { unidentifiedRejected: 3 }, []],
    ['5 of 100 owned records become other people: at the limit', { identityChanges: swaps(5) }, []],
    ['6 of 100 owned records become other people', { identityChanges: swaps(6) }, ['identity_changes']],
    ['identity changes allowed by the flag', { identityChanges: swaps(6), allow: { identityChanges: 6 } }, []],
    ['one identity change in a small group is fine', { ownedCount: 4, identityChanges: swaps(1) }, []],
  ])('%s', (_name, overrides, tripped) => {
    const results = evaluateGuards({ ...base, ...overrides });
    expect(results.filter((r) => r.tripped).map((r) => r.guard)).toEqual(tripped);
    for (const result of results.filter((r) => r.tripped)) expect(result.allowWith).toMatch(/^--allow-/);
  });
});

describe('sameValue', () => {
  it.each([
    [null, undefined, true],
    [null, [], true],
    [['a'], ['a'], true],
    [['a', 'b'], ['b', 'a'], false],
    [1, 1, true],
    [1, '1', false],
    ['x', null, false],
  ])('%j vs %j → %s', (a, b, same) => {
    expect(sameValue(a as never, b as never)).toBe(same);
  });
});

describe('buildPlan', () => {
  const marie = { name: 'Marie Curie', emails: ['m@x.org'], orcids: ['0000-0002-1825-0097'], 'cf-1': 3 };

  it('creates new records with a full body without nulls', () => {
    const result = plan({ desired: [record('a', { ...marie, emails: null })] });
    expect(result.items).toEqual([expect.objectContaining({ clientId: 'a', action: 'create', reason: 'new', body: { name: 'Marie Curie', orcids: ['0000-0002-1825-0097'], 'cf-1': 3 } })]);
    expect(result.counts).toEqual({ create: 1, update: 0, replace: 0, delete: 0, noop: 0 });
  });

  it('updates only the changed fields, sending a cleared field as null', () => {
    const result = plan({ desired: [record('a', { ...marie, emails: null, 'cf-1': 4 })], owned: { a: marie } });
    expect(result.items[0]).toMatchObject({ action: 'update', reason: 'changed', body: { emails: null, 'cf-1': 4 } });
    expect(result.items[0]!.changes).toEqual([
      { field: 'emails', label: 'emails', before: ['m@x.org'], after: null },
      { field: 'cf-1', label: 'Reviews completed', before: 3, after: 4 },
    ]);
  });

  it('replaces the whole record with update: full', () => {
    const result = plan({ desired: [record('a', { ...marie, 'cf-1': 4 })], owned: { a: marie }, update: 'full' });
    expect(result.items[0]).toMatchObject({ action: 'replace', reason: 'changed', body: { ...marie, 'cf-1': 4 } });
    expect(result.counts).toEqual({ create: 0, update: 0, replace: 1, delete: 0, noop: 0 });
  });

  it('counts unchanged records as noops without keeping them', () => {
    const result = plan({ desired: [record('a', marie)], owned: { a: marie } });
    expect(result.items).toEqual([]);
    expect(result.counts.noop).toBe(1);
  });

  it.each([
    ['mirror', 1, []],
    ['upsert', 0, ['gone']],
  ] as const)('in %s mode an owned record gone from the roster gives %i deletes', (mode, deletes, orphans) => {
    const result = plan({ desired: [record('a', marie)], owned: { a: marie, gone: { name: 'Gone' } }, mode });
    expect(result.counts.delete).toBe(deletes);
    expect(result.orphans).toEqual(orphans);
  });

  it('puts creates and updates before deletes', () => {
    const result = plan({ desired: [record('new', { name: 'N' }), record('a', { ...marie, 'cf-1': 9 })], owned: { a: marie, gone: { name: 'G' } } });
    expect(result.items.map((i) => i.action)).toEqual(['create', 'update', 'delete']);
  });

  it('marks records that failed last time as retried', () => {
    const result = plan({ desired: [record('a', marie)], failed: { a: 'create' } });
    expect(result.items[0]).toMatchObject({ action: 'create', reason: 'retry_failed' });
  });

  it('writes a record again whole when its last update was never confirmed, even if the roster matches the inventory', () => {
    const result = plan({ desired: [record('a', marie)], owned: { a: marie }, failed: { a: 'update' } });
    expect(result.items).toEqual([expect.objectContaining({ clientId: 'a', action: 'update', reason: 'retry_failed', body: marie })]);
  });

  it('recreates a record whose delete was never confirmed when the roster brings it back', () => {
    const result = plan({ desired: [record('a', marie)], owned: { a: marie }, failed: { a: 'delete' } });
    expect(result.items).toEqual([expect.objectContaining({ clientId: 'a', action: 'create', reason: 'retry_failed', body: marie })]);
  });

  it('trusts the remote copy over an unconfirmed write when refreshing', () => {
    const result = plan({ desired: [record('a', marie)], owned: { a: marie }, failed: { a: 'update' }, remote: new Map([['a', marie]]) });
    expect(result.items).toEqual([]);
    expect(result.counts.noop).toBe(1);
  });

  it('never deletes ids of rows rejected for their values: the person is still in the roster', () => {
    const result = plan({ desired: [record('a', marie)], owned: { a: marie, rejected: { name: 'R' } }, drop: ['rejected'] });
    expect(result.items).toEqual([]);
    expect(result.orphans).toEqual([]);
  });

  it('never deletes ids dropped as duplicates: they are still in the roster', () => {
    const result = plan({ desired: [record('a', marie), record('a', { name: 'Other' })], owned: { a: marie }, drop: ['a'] });
    expect(result.items).toEqual([]);
    expect(result.counts).toEqual({ create: 0, update: 0, replace: 0, delete: 0, noop: 0 });
  });

  it('repairs drift found by refresh and recreates records deleted remotely', () => {
    const remote = new Map<string, Fields | null>([
      ['a', { ...marie, 'cf-1': 99 }],
      ['b', null],
    ]);
    const result = plan({ desired: [record('a', marie), record('b', { name: 'B' })], owned: { a: marie, b: { name: 'B' } }, remote });
    expect(result.items.map((i) => [i.clientId, i.action, i.reason])).toEqual([
      ['a', 'update', 'drift'],
      ['b', 'create', 'remote_deleted'],
    ]);
    expect(result.items[0]!.changes).toEqual([{ field: 'cf-1', label: 'Reviews completed', before: 3, after: 3, remote: 99 }]);
  });

  it('adopts without a call when the remote already matches the roster', () => {
    const remote = new Map<string, Fields | null>([['a', { ...marie, 'cf-1': 4 }]]);
    const result = plan({ desired: [record('a', { ...marie, 'cf-1': 4 })], owned: { a: marie }, remote });
    expect(result.items).toEqual([]);
    expect(result.stateRepairs.map((r) => r.clientId)).toEqual(['a']);
    expect(result.counts.noop).toBe(1);
  });

  it('pairs a changed client_id by ORCID and calls it out', () => {
    const result = plan({ desired: [record('new-id', marie)], owned: { 'old-id': marie } });
    expect(result.items.map((i) => [i.clientId, i.action, i.reason, i.pairedWith])).toEqual([
      ['new-id', 'create', 'client_id_changed', 'old-id'],
      ['old-id', 'delete', 'client_id_changed', 'new-id'],
    ]);
    // A code and its data: report/ writes the sentence.
    expect(result.notes).toEqual([{ code: 'client_id_changed', from: 'old-id', to: 'new-id', sameBy: 'orcid', deleted: true }]);
  });

  it('in upsert mode notes a changed client_id whose old record stays', () => {
    const result = plan({ desired: [record('new-id', { name: 'Marie', emails: ['M@x.org'] })], owned: { 'old-id': { name: 'Marie', emails: ['m@x.org'] } }, mode: 'upsert' });
    expect(result.orphans).toEqual(['old-id']);
    expect(result.notes).toEqual([{ code: 'client_id_changed', from: 'old-id', to: 'new-id', sameBy: 'email', deleted: false }]);
  });

  it('estimates calls and time at the configured rate', () => {
    const result = plan({ desired: Array.from({ length: 25 }, (_, i) => record(`r${i}`, { name: `R ${i}` })) });
    expect(result.estimate).toEqual({ calls: 25, rps: 10, seconds: 2.5 });
    // The plan holds the numbers; report/ puts them in words.
    expect(estimateText(result.estimate)).toBe('25 calls at 10/s ≈ 2.5 s');
  });
});
