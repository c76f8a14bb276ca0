/**
 * The pure revert planner (src/revert/plan.ts) on the cases the end-to-end tests cannot force at
 * will: writes never confirmed, definite refusals, adoptions, who may delete, values the run could
 * not vouch for, an earlier revert of the same run, and the per-record choices.
 */
import { describe, expect, it } from 'vitest';
import { buildRevertPlan, type RevertInput } from '../../src/revert/plan.js';
import type { JournalEntry } from '../../src/state/backend.js';

const policy = { guards: { max_deletes: 50, max_delete_percent: 100, max_source_drop_percent: 50, max_identity_changes: 5, max_identity_change_percent: 5 }, max_rps: 10 } as unknown as RevertInput['policy'];
const target = { baseUrl: 'http://service', groupId: 7 };

let nextId = 1;
function entry(clientId: string, action: string, state: JournalEntry['state'], undo: object, extra: Partial<JournalEntry> = {}): JournalEntry {
  return { id: nextId++, runId: 'r1', clientId, action, state, status: state === 'done' ? 200 : null, undoJson: JSON.stringify({ v: 5, ...undo }), target, ...extra };
}

function plan(entries: JournalEntry[], remote: Record<string, Record<string, unknown> | null>, extra: Partial<RevertInput> = {}) {
  const ids = entries.map((e) => e.clientId);
  return buildRevertPlan({
    runId: 'r1',
    entries,
    history: entries,
    revertsOfRun: new Set(),
    remote: new Map(Object.entries(remote)),
    owned: new Map(ids.map((id) => [id, { name: id.toUpperCase() }])),
    claims: new Map(ids.map((id) => [id, 'p'])),
    pipeline: 'p',
    managedFields: ['name'],
    setFields: new Set(),
    force: new Set(),
    skip: new Set(),
    fieldLabels: new Map([['name', 'Name']]),
    policy,
    ownedCount: 10,
    ...extra,
  });
}

describe('buildRevertPlan', () => {
  it('turns a create into a delete, an update into the values held before, a delete into a create', () => {
    const result = plan(
      [
        entry('a', 'create', 'done', { before: null, after: { name: 'A' }, whole: true }),
        entry('b', 'update', 'done', { before: { name: 'B' }, after: { name: 'B2' }, from: 'applied' }),
        entry('c', 'delete', 'done', { before: { name: 'C', emails: null }, after: null, from: 'applied' }),
      ],
      { a: { name: 'A', author: null }, b: { name: 'B2', notes: 'kept' }, c: null },
    );
    expect(result.conflicts).toEqual([]);
    expect(result.plan.items.map((item) => [item.clientId, item.action, item.body ?? null])).toEqual([
      ['b', 'update', { name: 'B' }],
      ['c', 'create', { name: 'C' }],
      ['a', 'delete', null],
    ]);
    expect(result.notes.join(' ')).toMatch(/cannot be restored/);
  });

  it('judges a created record whole: a field set since (managed or not) is a conflict', () => {
    const result = plan([entry('a', 'create', 'done', { before: null, after: { name: 'A' }, whole: true })], { a: { name: 'A', coi: 'yes' } });
    expect(result.conflicts).toEqual([{ clientId: 'a', forcible: true, message: 'a: changed in the service since the run: coi no longer holds what the run wrote' }]);
  });

  it('judges unconfirmed writes by the read-back: undone, as before (settled), or a conflict', () => {
    const result = plan(
      [
        entry('a', 'update', 'sent', { before: { name: 'A' }, after: { name: 'A2' }, from: 'applied' }),
        entry('b', 'update', 'sent', { before: { name: 'B' }, after: { name: 'B2' }, from: 'applied' }),
        entry('c', 'delete', 'failed', { before: { name: 'C' }, after: null, from: 'applied' }, { status: 422 }),
        entry('e', 'update', 'sent', { before: { name: 'E' }, after: { name: 'E2' }, from: 'applied' }),
      ],
      { a: { name: 'A2' }, b: { name: 'B' }, c: { name: 'C' }, e: { name: 'E3' } },
    );
    // b never reached the service: its earlier values again settle the journal (no change there).
    expect(result.plan.items.map((item) => [item.clientId, item.action])).toEqual([
      ['a', 'update'],
      ['b', 'update'],
    ]);
    expect(result.plan.items[1]!.body).toEqual({ name: 'B' });
    expect(result.conflicts.map((c) => c.clientId)).toEqual(['e']);
  });

  it('restores an adoption to the values it replaced and never deletes it', () => {
    const result = plan([entry('a', 'create', 'done', { before: { name: 'Hand made', coi: 'yes' }, after: { name: 'A', coi: 'yes' }, from: 'read', whole: true, adopted: true })], { a: { name: 'A', coi: 'yes' } });
    expect(result.plan.items.map((item) => [item.clientId, item.action, item.body])).toEqual([['a', 'update', { name: 'Hand made' }]]);
  });

  it('deletes only what the pipeline still owns and claims, whatever the flags', () => {
    const created = (id: string, state: JournalEntry['state'] = 'done') => entry(id, 'create', state, { before: null, after: { name: id }, whole: true });
    const entries = [created('a'), created('b'), created('c'), created('d', 'sent')];
    const remote = { a: { name: 'a' }, b: { name: 'b' }, c: { name: 'c' }, d: { name: 'd' } };
    const options = {
      owned: new Map([['b', { name: 'b' }], ['c', { name: 'c' }]]),
      claims: new Map([['a', 'p'], ['b', 'other'], ['d', 'p']]),
      force: new Set(['a', 'b', 'c', 'd']),
    };
    const result = plan(entries, remote, options);
    expect(result.conflicts.map((c) => [c.clientId, c.forcible, c.message])).toEqual([
      ['a', false, 'a: no longer in the inventory (`state forget`), so revert never deletes it'],
      ['b', false, 'b: pipeline "other" claims this record now, so revert does not delete it'],
      ['c', false, 'c: no longer claimed by this pipeline (`state forget`, or the state moved with --release-owned), so revert never deletes it'],
    ]);
    // A create never confirmed, claimed by this pipeline, holding what the run would have written: the run made it.
    expect(result.plan.items.map((item) => [item.clientId, item.action])).toEqual([['d', 'delete']]);
  });

  it('refuses values the run could not vouch for unless forced', () => {
    const entries = [entry('a', 'update', 'done', { before: { name: 'A' }, after: { name: 'A2' }, from: 'unknown' })];
    expect(plan(entries, { a: { name: 'A2' } }).conflicts[0]!.message).toMatch(/^a: the run did not read a before writing it/);
    expect(plan(entries, { a: { name: 'A2' } }, { force: new Set(['a']) }).plan.items.map((item) => item.body)).toEqual([{ name: 'A' }]);
  });

  it('counts what an earlier revert of the run restored as done, not as a later write; a later sync is one', () => {
    const entries = [entry('a', 'update', 'done', { before: { name: 'A' }, after: { name: 'A2' }, from: 'applied' }), entry('b', 'update', 'done', { before: { name: 'B' }, after: { name: 'B2' }, from: 'applied' })];
    const undoneBefore = entry('a', 'update', 'done', { before: { name: 'A2' }, after: { name: 'A' }, from: 'read' }, { runId: 'undo1' });
    const killedUndo = entry('b', 'update', 'sent', { before: { name: 'B2' }, after: { name: 'B' }, from: 'read' }, { runId: 'undo1' });
    const again = plan(entries, { a: { name: 'A' }, b: { name: 'B' } }, { history: [...entries, undoneBefore, killedUndo], revertsOfRun: new Set(['undo1']) });
    expect(again.conflicts).toEqual([]);
    // a is done; b's write was never confirmed: sent again to settle the journal.
    expect(again.plan.items.map((item) => item.clientId)).toEqual(['b']);
    expect(again.notes.join(' ')).toMatch(/already as before run r1, nothing to write: a/);
    const later = plan(entries, { a: { name: 'A' }, b: { name: 'B' } }, { history: [...entries, undoneBefore] });
    expect(later.conflicts.map((c) => c.message)).toEqual(['a: written again by the later run undo1']);
  });

  it('honours --skip-record', () => {
    const entries = [entry('a', 'update', 'done', { before: { name: 'A' }, after: { name: 'A2' }, from: 'applied' })];
    const result = plan(entries, {}, { skip: new Set(['a']) });
    expect(result.plan.items).toEqual([]);
    expect(result.notes.join(' ')).toMatch(/left as it is \(--skip-record\): a/);
  });
});
