/**
 * The reconciliation report of one run (shared/design.md decision 8). `report.json` is this object
 * verbatim; `report.md`, `report.html` and the console summary are renderings of it.
 */
import type { FieldValue, RejectedRow } from '../mapping/types.js';
import type { Provenance } from '../sources/types.js';

export type PlanAction = 'create' | 'update' | 'delete' | 'noop';
export type RecordOutcome = 'done' | 'failed' | 'skipped' | 'planned';

/** One managed field that changes: roster value, last applied value and (with --refresh) remote value. */
export interface FieldChange {
  field: string;
  /** Human name of the field (custom fields: the name shown in the service's UI). */
  label: string;
  before: FieldValue | undefined;
  after: FieldValue | undefined;
  /** Present when the remote record was fetched (--refresh). `undefined` means not fetched. */
  remote?: FieldValue | undefined;
}

export interface RecordEntry {
  clientId: string;
  action: PlanAction;
  /** Why the plan chose this action, e.g. `new`, `changed`, `drift`, `remote_deleted`, `gone_from_roster`, `client_id_changed`. */
  reason: string;
  provenance?: Provenance;
  changes: FieldChange[];
  outcome: RecordOutcome;
  httpStatus?: number;
  attempts?: number;
  error?: string;
  /** For a client_id change: the other client_id of the delete + create pair. */
  pairedWith?: string;
}

export interface GuardResult {
  guard: 'max_deletes' | 'source_drop' | 'empty_source' | 'unreadable_rows' | 'inventory_missing';
  tripped: boolean;
  message: string;
  /** The exact flag or setting that would allow the run. */
  allowWith?: string;
}

export interface RunReport {
  version: 1;
  runId: string;
  pipeline: string;
  pipelineFile: string;
  source: { file: string; sha256: string; format: string; sheet?: string };
  target: { baseUrl: string; groupId: number | null; groupName?: string };
  mode: 'upsert' | 'mirror';
  update: 'partial' | 'full';
  dryRun: boolean;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** Final outcome and the process exit code it maps to. */
  outcome: 'success' | 'partial' | 'refused' | 'failed' | 'interrupted' | 'dry_run';
  exitCode: number;
  message?: string;
  input: { rowsRead: number; valid: number; rejected: number; filtered: number; duplicates: number };
  /** counts[action][outcome] */
  counts: Record<PlanAction, Partial<Record<RecordOutcome, number>>>;
  estimate?: { calls: number; rps: number; seconds: number; text: string };
  limiter?: { requests: number; retries: number; rateLimited: number; currentRate: number; [key: string]: number };
  guards: GuardResult[];
  /** Every record whose action is not noop. Noops are only counted. */
  records: RecordEntry[];
  /** Owned records gone from the roster that upsert mode keeps. */
  orphans: string[];
  rejectedRows: RejectedRow[];
  /** Rejected rows beyond those listed (the report keeps at most a capped number). */
  rejectedRowsOmitted: number;
  notes: string[];
}
