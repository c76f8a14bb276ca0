import { describe, expect, it } from 'vitest';
import { noticeLines, type RunNotice } from '../../src/notify/message.js';

function notice(drift: RunNotice['drift']): RunNotice {
  return {
    type: 'rostersync.run',
    version: 1,
    events: [],
    pipeline: 'reviewers',
    runId: 'r1',
    outcome: 'success',
    outcomeText: 'done',
    exitCode: 0,
    counts: { creates: 0, updates: 1, deletes: 0, unchanged: 4, failures: 0, rejects: 0 },
    ...(drift ? { drift } : {}),
    target: { baseUrl: 'http://127.0.0.1:1', groupId: 12 },
    startedAt: '2026-01-01T00:00:00Z',
    finishedAt: '2026-01-01T00:00:01Z',
    report: { path: '/reports/r1' },
  } as RunNotice;
}

describe('alert lines', () => {
  it.each([
    [1, 'of 5 records read back, 1 was deleted and 0 changed in the service'],
    [2, 'of 5 records read back, 2 were deleted and 0 changed in the service'],
  ])('the drift line agrees with %i deleted record(s)', (deleted, words) => {
    expect(noticeLines(notice({ sampled: 5, deleted, changed: 0 })).join('\n')).toContain(words);
  });
});
