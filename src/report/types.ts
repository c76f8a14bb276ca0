/**
 * The reconciliation report of one run (shared/design.md decision 8). `report.json` is this object
 * verbatim; `report.md`, `report.html` and the console summary are renderings of it.
 */
import type { FilteredRow, RejectedRow } from '../mapping/types.js';
import type { FieldChange, GuardResult, PlanAction, RecordOutcome } from '../plan/types.js';
import type { Provenance } from '../sources/types.js';

// The plan owns its vocabulary; the report carries it.
export type { FieldChange, GuardResult, PlanAction, RecordOutcome };

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
  /** The record already existed in the group and was adopted: only managed fields were written. */
  adopted?: boolean;
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
  outcome: 'success' | 'warning' | 'partial' | 'refused' | 'failed' | 'interrupted' | 'dry_run';
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
  /** Rows a `skip_rows` filter of the mapping left out, with the reason (capped like rejected rows). */
  filteredRows?: FilteredRow[];
  /** Filtered rows beyond those listed. */
  filteredRowsOmitted?: number;
  notes: string[];
  /**
   * The drift check of a real run (sync/drift.ts): a random sample of owned records read back from
   * the service. `deleted` and `changed` are the sampled client_ids found gone or edited there; they
   * were repaired by this run as `--refresh` would.
   */
  drift?: { sampled: number; calls: number; deleted: string[]; changed: string[] };
}
