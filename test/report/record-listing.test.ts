/**
 * A large run's report lists a bounded number of records (report/build.ts): the first
 * RECORDS_LISTED in plan order, then the failed ones; every record is counted, and
 * `reportRecords` gives every one again for records.jsonl and the HTML pages.
 */
import { describe, expect, it } from 'vitest';
import type { ApplyResult, ItemOutcome } from '../../src/plan/outcomes.js';
import type { RosterSummary } from '../../src/mapping/roster.js';
import type { Plan, PlanItem } from '../../src/plan/types.js';
import { buildRunReport, FAILED_RECORDS_LISTED, RECORDS_FILE, RECORDS_LISTED, reportRecords, type ReportHeader } from '../../src/report/build.js';

const header: ReportHeader = {
  version: 1,
  runId: '20250101T020000Z-abc',
  pipeline: 'experts',
  pipelineFile: '/p/pipeline.yaml',
  source: { file: '/p/roster.csv', sha256: 'f'.repeat(64), format: 'csv' },
  target: { baseUrl: 'http://127.0.0.1:1', groupId: 7 },
  mode: 'upsert',
  update: 'partial',
  dryRun: false,
  startedAt: '2025-01-01T02:00:00.000Z',
  outcome: 'partial',
  exitCode: 2,
};

function create(i: number): PlanItem {
  return {
    clientId: `R${i}`,
    action: 'create',
    reason: 'new',
    body: { name: `Person ${i}` },
    desired: { fieldsJson: `{"name":"Person ${i}"}`, hash: 'h' },
    changes: [{ field: 'name', label: 'Name', after: `Person ${i}` }],
    provenance: { file: '/p/roster.csv', row: i + 2 },
  };
}

function roster(valid: number): RosterSummary {
  return {
    counts: { rowsRead: valid, valid, rejected: 0, filtered: 0, duplicatesIgnored: 0 },
    knownRows: 0,
    rejected: [],
    rejectedNotStored: 0,
    duplicateClientIds: new Set(),
    warnings: [],
    rejectedClientIds: new Set(),
    unidentifiedRejected: 0,
    firstRowById: new Map(),
  };
}

function planOf(items: PlanItem[], noop = 0): Plan {
  return {
    items,
    counts: { create: items.length, update: 0, replace: 0, delete: 0, noop },
    orphans: [],
    stateRepairs: [],
    guards: [],
    refused: false,
    estimate: { calls: items.length, rps: 0, seconds: 0 },
    notes: [],
  };
}

describe('the records a report lists', () => {
  it('lists every record of a run within RECORDS_LISTED, in plan order, and names records.jsonl', () => {
    const items = Array.from({ length: 3 }, (_, i) => create(i));
    const report = buildRunReport({ base: header, plan: planOf(items, 5), roster: roster(8), startedAt: 0, finishedAt: 1000, notes: [] });
    expect(report.records.map((r) => r.clientId)).toEqual(['R0', 'R1', 'R2']);
    expect(report.recordsOmitted).toBeUndefined();
    expect(report.recordsFile).toBe(RECORDS_FILE);
    expect(report.counts.create).toEqual({ planned: 3 });
    expect(report.counts.noop).toEqual({ planned: 5 });
  });

  it('beyond RECORDS_LISTED keeps the first ones and the failures after them, counts every record, and reportRecords gives them all', () => {
    const total = RECORDS_LISTED + 25;
    const items = Array.from({ length: total }, (_, i) => create(i));
    const outcomes = new Map<string, ItemOutcome>();
    const failedAt = new Set([3, RECORDS_LISTED + 4, RECORDS_LISTED + 20]);
    const adoptedAt = new Set([1, RECORDS_LISTED + 7]);
    for (let i = 0; i < total; i++) {
      outcomes.set(
        `R${i}`,
        failedAt.has(i) ? { outcome: 'failed', httpStatus: 400, attempts: 1, error: 'bad value' } : { outcome: 'done', httpStatus: 200, attempts: 1, ...(adoptedAt.has(i) ? { adopted: true } : {}) },
      );
    }
    const applied: ApplyResult = { outcomes, newRecordsReached: 0 };
    const report = buildRunReport({ base: header, plan: planOf(items), roster: roster(total), applied, startedAt: 0, finishedAt: 1000, notes: [] });

    expect(report.records).toHaveLength(RECORDS_LISTED + 2);
    expect(report.records.slice(-2).map((r) => [r.clientId, r.outcome])).toEqual([
      [`R${RECORDS_LISTED + 4}`, 'failed'],
      [`R${RECORDS_LISTED + 20}`, 'failed'],
    ]);
    expect(report.recordsOmitted).toBe(23);
    expect(report.counts.create).toEqual({ done: total - 3, failed: 3 });
    // The adoption note counts the adoptions of every record, listed or not.
    expect(report.notes.some((note) => note.startsWith('adopted 2 records') && note.includes(`R${RECORDS_LISTED + 7}`))).toBe(true);

    const every = [...reportRecords({ plan: planOf(items), applied })];
    expect(every).toHaveLength(total);
    expect(every[RECORDS_LISTED + 7]).toMatchObject({ clientId: `R${RECORDS_LISTED + 7}`, outcome: 'done', adopted: true });
    expect(every.filter((r) => r.outcome === 'failed').map((r) => r.clientId)).toEqual(['R3', `R${RECORDS_LISTED + 4}`, `R${RECORDS_LISTED + 20}`]);
  });

  it('lists at most FAILED_RECORDS_LISTED failures beyond the first records', () => {
    const total = RECORDS_LISTED + FAILED_RECORDS_LISTED + 10;
    const items = Array.from({ length: total }, (_, i) => create(i));
    const outcomes = new Map<string, ItemOutcome>(items.map((item) => [item.clientId, { outcome: 'failed', httpStatus: 503, attempts: 5, error: 'unavailable' }]));
    const report = buildRunReport({ base: header, plan: planOf(items), roster: roster(total), applied: { outcomes, newRecordsReached: 0 }, startedAt: 0, finishedAt: 1000, notes: [] });
    expect(report.records).toHaveLength(RECORDS_LISTED + FAILED_RECORDS_LISTED);
    expect(report.recordsOmitted).toBe(10);
    expect(report.counts.create).toEqual({ failed: total });
  });
});
