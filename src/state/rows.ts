/**
 * Rows of the `records`, `runs` and lock tables as both backends return them (the column names are
 * the same; PostgreSQL's lock owner names its process start `proc_start` when read), turned into
 * the store's types. Only `runs.dry_run` differs: SQLite keeps 0/1, PostgreSQL a boolean.
 */
import type { JournalEntry, JournalState, LockInfo, OwnedRecord, RunRow } from './backend.js';

export interface RecordRow {
  client_id: string;
  fields_json: string;
  hash: string;
  run_id: string;
  source_row: number | null;
}

export interface RunDbRow {
  id: string;
  started_at: string;
  finished_at: string | null;
  outcome: string | null;
  dry_run: number | boolean;
  valid_records: number | null;
  source_sha256: string | null;
  counts_json: string | null;
}

export function toOwned(row: RecordRow): OwnedRecord {
  return { clientId: row.client_id, fieldsJson: row.fields_json, hash: row.hash, runId: row.run_id, sourceRow: row.source_row };
}

export function toRun(row: RunDbRow): RunRow {
  return {
    id: row.id,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    outcome: row.outcome,
    dryRun: row.dry_run === true || row.dry_run === 1,
    validRecords: row.valid_records,
    sourceSha256: row.source_sha256,
    countsJson: row.counts_json,
  };
}

export interface LockDbRow {
  owner: string;
  host: string;
  pid: number;
  proc_start: string | null;
  started_at: string;
  heartbeat_at: string;
  run_id: string;
}

export function toLock(row: LockDbRow): LockInfo {
  return { owner: row.owner, host: row.host, pid: row.pid, processStart: row.proc_start, startedAt: row.started_at, heartbeatAt: row.heartbeat_at, runId: row.run_id };
}

export interface JournalDbRow {
  id: number | string;
  run_id: string;
  client_id: string;
  action: string;
  state: JournalState;
  status: number | null;
  undo_json: string | null;
  service: string | null;
  group_id: number | string | null;
}

/** The journal columns a JournalEntry is read from (both backends). */
export const JOURNAL_COLUMNS = 'id, run_id, client_id, action, state, status, undo_json, service, group_id';

export function toJournalEntry(row: JournalDbRow): JournalEntry {
  const target = row.service !== null && row.group_id !== null ? { baseUrl: row.service, groupId: Number(row.group_id) } : null;
  return { id: Number(row.id), runId: row.run_id, clientId: row.client_id, action: row.action, state: row.state, status: row.status, undoJson: row.undo_json, target };
}
