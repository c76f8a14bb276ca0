/** Which events a finished run raises (pure): rejects within policy.rejects never raise `rejects`. */
import { describe, expect, it } from 'vitest';
import { runEvents } from '../../src/notify/events.js';
import type { RunReport } from '../../src/report/types.js';

function report(outcome: RunReport['outcome'], rejected: number, failed = 0): RunReport {
  return {
    outcome,
    input: { rowsRead: 100, valid: 100 - rejected, rejected, filtered: 0, duplicates: 0 },
    counts: { create: { done: 10, ...(failed ? { failed } : {}) }, update: {}, delete: {}, noop: {} },
    records: Array.from({ length: failed }, (_, i) => ({ clientId: `f${i}`, action: 'create', reason: 'new', changes: [], outcome: 'failed' })),
  } as unknown as RunReport;
}

describe('runEvents', () => {
  it('a run partial for failed records, its rejects within the tolerance: failure, not rejects', () => {
    const events = runEvents(report('partial', 3, 2), { max_count: 5 });
    expect(events).toContain('failure');
    expect(events).not.toContain('rejects');
  });

  it('rejects over the tolerance raise rejects', () => {
    expect(runEvents(report('partial', 9), { max_count: 5 })).toContain('rejects');
  });

  it('without policy.rejects every rejected row is over the tolerance', () => {
    expect(runEvents(report('partial', 1))).toContain('rejects');
  });

  it('tolerated rejects on an otherwise clean run: success', () => {
    expect(runEvents(report('warning', 3), { max_percent: 5 })).toEqual(['success']);
  });
});
