/**
 * `--mask` for the files a run writes: the report a CI job uploads or shows (report.md,
 * report.html, report.json, the job summary, rejected.csv) leaves the machine, so it carries the
 * same masking as the console's plan diff: every roster or service value becomes `(masked)`
 * (lists keep their length, so a reader still sees how many), names are masked, and free text
 * (messages, notes, errors) loses the roster values its builder marked personal and e-mail-shaped
 * strings (maskText). client_ids, field names, counts and outcomes stay: they are
 * what a drift check is read for.
 */
import { replacePersonal } from '../personal-data/personal-text.js';
import type { CellValue } from '../sources/types.js';
import { redactEmails } from './format.js';
import type { RejectedRow } from '../mapping/types.js';
import type { FieldChange, RecordEntry, RunReport } from './types.js';

export const MASKED = '(masked)';

/**
 * Free text (a message, a note, an error) as masked outputs and alerts show it: the roster values
 * its builder marked personal (../personal-data/personal-text.ts) become `(masked)`, and e-mail-shaped text is redacted.
 */
export function maskText(text: string): string {
  return redactEmails(replacePersonal(text, MASKED));
}

type Value = FieldChange['after'];

function maskValue<T extends Value>(value: T): T {
  if (value === undefined || value === null) return value;
  return (Array.isArray(value) ? value.map(() => MASKED) : MASKED) as T;
}

function maskCell(value: CellValue): CellValue {
  return value === null || value === '' ? value : MASKED;
}

function maskChange(change: FieldChange): FieldChange {
  return {
    ...change,
    ...('before' in change ? { before: maskValue(change.before) } : {}),
    ...('after' in change ? { after: maskValue(change.after) } : {}),
    ...('remote' in change ? { remote: maskValue(change.remote) } : {}),
  };
}

const maskName = <T extends { name?: string }>(entry: T): T => (entry.name === undefined ? entry : { ...entry, name: MASKED });

export function maskRecord(record: RecordEntry): RecordEntry {
  return {
    ...record,
    changes: record.changes.map(maskChange),
    ...(record.overwritten ? { overwritten: record.overwritten.map((value) => ({ ...value, before: maskValue(value.before), after: maskValue(value.after) })) } : {}),
    ...(record.error !== undefined ? { error: maskText(record.error) } : {}),
  };
}

function maskRow(row: RejectedRow): RejectedRow {
  return {
    ...maskName(row),
    values: Object.fromEntries(Object.entries(row.values).map(([column, value]) => [column, maskCell(value)])),
    problems: row.problems.map((problem) => ({
      ...problem,
      // A row's message quotes its cell text ("Prof" is not one of the allowed labels): masked too.
      message: problem.value !== undefined ? maskText(problem.message).replace(/"[^"]*"/g, `"${MASKED}"`) : maskText(problem.message),
      ...(problem.value !== undefined ? { value: MASKED } : {}),
      ...(problem.hint !== undefined ? { hint: maskText(problem.hint) } : {}),
    })),
  };
}

export function maskReport(report: RunReport): RunReport {
  return {
    ...report,
    ...(report.message !== undefined ? { message: maskText(report.message) } : {}),
    // A guard's message quotes examples (the identity-change guard's names).
    guards: report.guards.map((guard) => ({ ...guard, message: maskText(guard.message) })),
    records: report.records.map(maskRecord),
    rejectedRows: report.rejectedRows.map(maskRow),
    ...(report.warnings ? { warnings: report.warnings.map(maskRow) } : {}),
    ...(report.orphanNames ? { orphanNames: Object.fromEntries(Object.keys(report.orphanNames).map((clientId) => [clientId, MASKED])) } : {}),
    // The evidence quotes names, e-mails and ORCID iDs; the tier and the client_ids say enough.
    ...(report.duplicatePeople ? { duplicatePeople: report.duplicatePeople.map((pair) => ({ ...pair, evidence: MASKED })) } : {}),
    ...(report.filteredRows ? { filteredRows: report.filteredRows.map(maskName) } : {}),
    ...(report.discardedRows
      ? { discardedRows: report.discardedRows.map((row) => ({ ...row, notSynced: Object.fromEntries(Object.keys(row.notSynced).map((column) => [column, MASKED])) })) }
      : {}),
    notes: report.notes.map(maskText),
  };
}
