/**
 * Builders for report test data: a plausible default for every field, overridden per test.
 * `aReport` derives `counts` from the records (plus `noops`) so the counts always agree with them.
 */
import type { RejectedRow } from '../../src/mapping/types.js';
import type { CountedAction, FieldChange, RecordEntry, RecordOutcome, ReportedGuard, RunReport } from '../../src/report/types.js';
import { countedAs } from '../../src/report/format.js';

export function aChange(overrides: Partial<FieldChange> = {}): FieldChange {
  return { field: 'name', label: 'Name', before: 'Ada Lovelace', after: 'Ada King', ...overrides };
}

let rowCounter = 1;

export function aRecord(overrides: Partial<RecordEntry> = {}): RecordEntry {
  rowCounter += 1;
  return {
    clientId: `EXP-${String(rowCounter).padStart(4, '0')}`,
    action: 'update',
    reason: 'changed',
    provenance: { file: '/data/rosters/experts.csv', row: rowCounter },
    changes: [aChange()],
    outcome: 'done',
    httpStatus: 200,
    attempts: 1,
    ...overrides,
  };
}

export function aGuard(overrides: Partial<ReportedGuard> = {}): ReportedGuard {
  return {
    guard: 'max_deletes',
    code: overrides.guard ?? 'max_deletes',
    tripped: false,
    message: '2 deletes planned; the limit is 10 (10 % of 120 owned records).',
    ...overrides,
  };
}

export function aRejectedRow(overrides: Partial<RejectedRow> = {}): RejectedRow {
  const provenance = overrides.provenance ?? { file: '/data/rosters/experts.csv', row: 7 };
  return {
    provenance,
    values: { 'Client ID': 'EXP-0099', Name: 'Grace Hopper', Email: 'grace@navy.example', ORCID: '0000-0002-1825-009X' },
    problems: [
      {
        provenance,
        column: 'ORCID',
        value: '0000-0002-1825-009X',
        code: 'invalid_orcid',
        message: 'ORCID checksum does not match.',
        hint: 'Copy the ORCID from orcid.org.',
      },
    ],
    ...overrides,
  };
}

/** counts[action][outcome] computed from the records, with `noops` done noops added. */
export function countsOf(records: RecordEntry[], noops = 0): RunReport['counts'] {
  const counts: RunReport['counts'] = { create: {}, update: {}, delete: {}, noop: {} };
  const bump = (action: CountedAction, outcome: RecordOutcome, by = 1) => {
    counts[action][outcome] = (counts[action][outcome] ?? 0) + by;
  };
  for (const record of records) bump(countedAs(record.action), record.outcome);
  if (noops > 0) bump('noop', 'done', noops);
  return counts;
}

export interface ReportOverrides extends Partial<RunReport> {
  /** Noop records to count (noops are counted, never listed). */
  noops?: number;
}

export function aReport(overrides: ReportOverrides = {}): RunReport {
  const { noops = 100, ...rest } = overrides;
  const records = rest.records ?? [
    aRecord({ clientId: 'EXP-0001', action: 'create', reason: 'new', changes: [aChange({ before: undefined })] }),
    aRecord({ clientId: 'EXP-0002' }),
  ];
  const rejectedRows = rest.rejectedRows ?? [];
  return {
    version: 1,
    runId: 'run-2024-05-01T02-00-00Z-ab12',
    pipeline: 'demo',
    pipelineFile: 'pipelines/demo.yaml',
    source: { file: '/data/rosters/experts.csv', sha256: 'a'.repeat(12) + 'b'.repeat(52), format: 'csv' },
    target: { baseUrl: 'http://127.0.0.1:4010', groupId: 42, groupName: 'Expert board' },
    mode: 'mirror',
    update: 'partial',
    dryRun: false,
    startedAt: '2024-05-01T02:00:00.000Z',
    finishedAt: '2024-05-01T02:00:03.250Z',
    durationMs: 3250,
    outcome: 'success',
    exitCode: 0,
    input: { rowsRead: 103, valid: 102, rejected: rejectedRows.length, filtered: 0, duplicates: 0 },
    counts: countsOf(records, noops),
    estimate: { calls: records.length, rps: 10, seconds: records.length / 10, text: `${records.length} calls at 10/s ≈ 1 s` },
    limiter: { requests: records.length, retries: 0, rateLimited: 0, currentRate: 10 },
    guards: [aGuard(), aGuard({ guard: 'source_drop', message: 'Valid records 102, last successful run 101.' })],
    orphans: [],
    rejectedRowsOmitted: 0,
    notes: [],
    ...rest,
    records,
    rejectedRows,
  };
}

export const EVIL = '<script>window.__pwned = 1</script>';
export const CLOSE = '</script><img src=x onerror="window.__pwned = 2">';
export const JS_URL = 'javascript:window.__pwned=3';

/** A report whose every free-text field (from the roster, the service or the operator) is hostile. */
export function hostileReport(): RunReport {
  return aReport({
    pipeline: `demo${EVIL}`,
    pipelineFile: `pipelines/${CLOSE}.yaml`,
    source: { file: `/data/${EVIL}.csv`, sha256: 'c'.repeat(64), format: 'csv', sheet: CLOSE },
    target: { baseUrl: 'https://api.example', groupId: 7, groupName: `Board ${EVIL}` },
    message: `stopped ${CLOSE}`,
    outcome: 'partial',
    exitCode: 2,
    records: [
      aRecord({
        clientId: `X-1${EVIL}`,
        provenance: { file: 'C:\\rosters\\<img onerror=alert(3)>.xlsx', sheet: 'Experts', row: 12 },
        changes: [aChange({ before: CLOSE, after: EVIL, remote: '<!-- comment' }), aChange({ field: 'website', label: `Web <b onmouseover="window.__pwned=4">`, before: undefined, after: JS_URL })],
      }),
      aRecord({ clientId: `X-2${CLOSE}`, outcome: 'failed', httpStatus: 500, attempts: 5, error: `boom ${EVIL}` }),
    ],
    guards: [aGuard({ tripped: true, message: `limit ${EVIL}`, allowWith: `--allow-deletes ${CLOSE}` })],
    orphans: [`O-1${EVIL}`],
    mode: 'upsert',
    rejectedRows: [aRejectedRow({ clientId: `R-1${CLOSE}`, name: `<svg onload="window.__pwned=5">`, values: { Name: EVIL } })],
    filteredRows: [{ provenance: { file: '/data/x.csv', row: 3 }, reason: `Active equals "${EVIL}"`, clientId: JS_URL, name: CLOSE }],
    notes: [`note ${CLOSE}`],
  });
}
