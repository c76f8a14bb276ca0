/**
 * What a run's journal must hold before `rostersync revert` plans anything (src/revert/journal.ts):
 * the refusals (exit 1, nothing written) of a journal missing, incomplete, written before state
 * schema 5, or of a run that wrote to another group than the state's now.
 */
import { describe, expect, it } from 'vitest';
import { revertTarget } from '../../src/revert/journal.js';
import type { JournalEntry, RunRow } from '../../src/state/backend.js';

const target = { baseUrl: 'http://service', groupId: 502 };
const run = (counts: object | null): RunRow => ({ id: 'r1', startedAt: '', finishedAt: counts ? 'x' : null, outcome: counts ? 'success' : null, dryRun: false, validRecords: 3, sourceSha256: 'x', countsJson: counts ? JSON.stringify(counts) : null });
const entry = (clientId: string, extra: Partial<JournalEntry> = {}): JournalEntry => ({ id: 1, runId: 'r1', clientId, action: 'create', state: 'done', status: 200, undoJson: '{"v":5,"before":null,"after":{}}', target, ...extra });
const wrote = (done: number) => ({ create: { done }, update: {}, delete: {}, noop: {} });

describe('revertTarget', () => {
  it('is where every write went, when the state is bound there', () => {
    expect(revertTarget(run(wrote(2)), [entry('a'), entry('b')], target)).toEqual(target);
  });

  it.each([
    ['no journal of a run that wrote (a moved state)', run(wrote(2)), [], /report counts 2 writes done, but the state holds no journal of them/],
    ['no journal of a run that never finished', run(null), [], /holds no journal of its writes/],
    ['a run that wrote nothing', run(wrote(0)), [], /it wrote nothing/],
    ['fewer confirmed writes than reported', run(wrote(3)), [entry('a')], /journal is incomplete/],
    ['entries from before schema 5 (no target)', run(wrote(1)), [entry('a', { target: null })], /older than state schema 5/],
    ['entries from before schema 5 (old undo values)', run(wrote(1)), [entry('a', { undoJson: '{"before":null,"after":{}}' })], /older than state schema 5/],
    ['writes to two groups', run(wrote(2)), [entry('a'), entry('b', { target: { ...target, groupId: 503 } })], /more than one group/],
  ])('refuses %s with exit 1', (_case, row, entries, message) => {
    expect(() => revertTarget(row, entries, target)).toThrow(message);
    try {
      revertTarget(row, entries, target);
    } catch (error) {
      expect((error as { exitCode: number }).exitCode).toBe(1);
    }
  });

  it('refuses a run that wrote to another group than the one the state is bound to now', () => {
    expect(() => revertTarget(run(wrote(1)), [entry('a')], { ...target, groupId: 503 })).toThrow(/it wrote to group 502 of http:\/\/service, but the state is bound to group 503/);
  });
});
