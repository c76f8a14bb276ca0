/**
 * The pure revert planner (src/revert/plan.ts) on the cases the end-to-end tests cannot force at
 * will: writes never confirmed, definite refusals, adopted records, journal entries without undo
 * values, and the per-record choices.
 */
import { describe, expect, it } from 'vitest';
import { buildRevertPlan, type RevertInput } from '../../src/revert/plan.js';
import type { JournalEntry } from '../../src/state/backend.js';

const policy = { guards: { max_deletes: 50, max_delete_percent: 100, max_source_drop_percent: 50, max_identity_changes: 5, max_identity_change_percent: 5 }, max_rps: 10 } as unknown as RevertInput['policy'];

let nextId = 1;
function entry(clientId: string, action: string, state: JournalEntry['state'], undo: object | null, extra: Partial<JournalEntry> = {}): JournalEntry {
  return { id: nextId++, runId: 'r1', clientId, action, state, status: state === 'done' ? 200 : null, undoJson: undo === null ? null : JSON.stringify(undo), ...extra };
}

function plan(entries: JournalEntry[], remote: Record<string, Record<string, unknown> | null>, extra: Partial<RevertInput> = {}) {
  return buildRevertPlan({
    runId: 'r1',
    entries,
    history: entries,
    remote: new Map(Object.entries(remote)) as RevertInput['remote'],
    owned: new Map(),
    force: new Set(),
    skip: new Set(),
    fieldLabels: new Map([['name', 'Name']]),
    policy,
    ownedCount: 10,
    ...extra,
  });
}

describe('buildRevertPlan', () => {
  it('turns a create into a delete, an update into the earlier values, a delete into a create', () => {
    const result = plan(
      [
        entry('a', 'create', 'done', { before: null, after: { name: 'A' } }),
        entry('b', 'update', 'done', { before: { name: 'B' }, after: { name: 'B2' } }),
        entry('c', 'delete', 'done', { before: { name: 'C', emails: null }, after: null }),
      ],
      { a: { name: 'A' }, b: { name: 'B2' }, c: null },
    );
    expect(result.conflicts).toEqual([]);
    expect(result.plan.items.map((item) => [item.clientId, item.action, item.body ?? null])).toEqual([
      ['b', 'update', { name: 'B' }],
      ['c', 'create', { name: 'C' }],
      ['a', 'delete', null],
    ]);
    expect(result.notes.join(' ')).toMatch(/cannot be restored/);
  });

  it('judges unconfirmed writes by the read-back alone', () => {
    const result = plan(
      [
        // Sent, and the service holds what it would have written: undone.
        entry('a', 'update', 'sent', { before: { name: 'A' }, after: { name: 'A2' } }),
        // Sent, never reached the service: the earlier values again (no change there, the journal settled).
        entry('b', 'update', 'sent', { before: { name: 'B' }, after: { name: 'B2' } }),
        // A delete never performed: nothing to undo.
        entry('c', 'delete', 'planned', { before: { name: 'C' }, after: null }),
        // A definite refusal never wrote: not even read.
        entry('d', 'create', 'failed', { before: null, after: { name: 'D' } }, { status: 422 }),
        // Neither what was there before nor what the run would have written: a conflict.
        entry('e', 'update', 'sent', { before: { name: 'E' }, after: { name: 'E2' } }),
      ],
      { a: { name: 'A2' }, b: { name: 'B' }, c: { name: 'C' }, e: { name: 'E3' } },
    );
    expect(result.plan.items.map((item) => [item.clientId, item.body])).toEqual([
      ['a', { name: 'A' }],
      ['b', { name: 'B' }],
    ]);
    expect(result.notes.join(' ')).toMatch(/nothing to undo for c, d/);
    expect(result.conflicts).toEqual([{ clientId: 'e', forcible: true, message: 'e: changed in the service since the run (whose write was never confirmed): Name no longer holds what the run wrote' }]);
  });

  it('leaves adopted records, refuses entries without undo values for good, and honours force and skip', () => {
    const entries = [
      entry('a', 'create', 'done', { before: null, after: { name: 'A' }, adopted: true }),
      entry('b', 'update', 'done', { before: { name: 'B' }, after: { name: 'B2' } }),
      entry('c', 'update', 'done', null),
      entry('d', 'update', 'done', { before: { name: 'D' }, after: { name: 'D2' } }),
    ];
    const later = entry('b', 'update', 'done', { before: { name: 'B2' }, after: { name: 'B3' } }, { runId: 'r2' });
    const remote = { a: { name: 'A' }, b: { name: 'B3' }, c: { name: 'C' }, d: { name: 'edited' } };
    const refused = plan(entries, remote, { history: [...entries, later] });
    expect(refused.plan.items).toEqual([]);
    expect(refused.notes.join(' ')).toMatch(/not undone: a existed before run r1/);
    expect(refused.conflicts.map((c) => [c.clientId, c.forcible, c.message.slice(0, 40)])).toEqual([
      ['b', true, 'b: written again by the later run r2'],
      ['c', false, 'c: journaled by a rostersync that did no'],
      ['d', true, 'd: changed in the service since the run:'],
    ]);
    const decided = plan(entries, remote, { history: [...entries, later], force: new Set(['b']), skip: new Set(['c', 'd']) });
    expect(decided.conflicts).toEqual([]);
    expect(decided.plan.items.map((item) => [item.clientId, item.body])).toEqual([['b', { name: 'B' }]]);
  });
});
