/**
 * The reconciliation report of one run. `report.json` is this object
 * verbatim; `report.md`, `report.html` and the console summary are renderings of it.
 */
import type { DiscardedRow, FilteredRow, RejectedRow } from '../mapping/types.js';
import type { FieldChange, GuardCode, GuardResult, PlanAction, RecordChange, RecordOutcome } from '../plan/types.js';
import type { Provenance } from '../sources/types.js';
import type { DuplicatePair, DuplicatePeopleFound } from '../mapping/duplicate-people.js';

// The plan owns its vocabulary; the report carries it.
export type { FieldChange, PlanAction, RecordOutcome };

/**
 * The kinds of change the counts keep (and the state's run history with them): a replace is
 * counted as an update, the record it rewrites being one that exists.
 */
export type CountedAction = RecordChange | 'noop';

/** A guard's result as the report carries it: the finding's code (for tools) and its sentence (report/plan-text.ts). */
export interface ReportedGuard {
  guard: GuardResult['guard'];
  code: GuardCode;
  tripped: boolean;
  message: string;
  /** The exact flag or setting that would allow the run. */
  allowWith?: string;
}

export interface RecordEntry {
  clientId: string;
  /** The plan's action: `replace` is a full POST of the record (`policy.update: full`). */
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
  /** An adoption replaced these values the service held in managed fields (typed in its UI, say). */
  overwritten?: { field: string; label: string; before: FieldChange['before']; after: FieldChange['after'] }[];
}

/** The drift check's rotating window (sync/drift-window.ts) in the report: what it read, and how far its pass over the group has come. */
export interface DriftWindowReport {
  /** Records of the window read back (those the plan takes as unchanged); the others are written by this run. */
  read: number;
  /** Owned records the window walked this run: ceil(owned / cycle). */
  walked: number;
  owned: number;
  cycle: number;
  /** Owned records the current pass has walked since it began (`passStartedAt`), this run's included. */
  passWalked: number;
  passStartedAt: string;
  /** When the last full pass over the group ended (this run's time when it ended one); null before the first. */
  lastFullPassAt: string | null;
}

export interface RunReport {
  version: 1;
  runId: string;
  pipeline: string;
  pipelineFile: string;
  source: { file: string; sha256: string; format: string; sheet?: string };
  target: {
    baseUrl: string;
    groupId: number | null;
    /** From the pipeline's `target.group`, else from the state (kept when the group was created). */
    groupName?: string;
    /** The group does not exist yet and the run creates it (`--create-group`): planned, in a dry run or `plan`. */
    groupToCreate?: { ownerTeam: string; editorTeams: string[]; viewerTeams: string[] };
  };
  mode: 'upsert' | 'mirror';
  update: 'partial' | 'full';
  dryRun: boolean;
  /** This run undid the writes of that run (`rostersync revert`). */
  revertOf?: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** Final outcome and the process exit code it maps to. */
  outcome: 'success' | 'warning' | 'partial' | 'refused' | 'failed' | 'interrupted' | 'dry_run';
  exitCode: number;
  message?: string;
  input: { rowsRead: number; valid: number; rejected: number; filtered: number; duplicates: number };
  /** counts[action][outcome]; a replace is counted as an update. */
  counts: Record<CountedAction, Partial<Record<RecordOutcome, number>>>;
  /** The plan's estimate; `made`: the write calls the run made, to compare with `calls`; `driftReads`: the drift check's GETs before the writes. */
  estimate?: { calls: number; rps: number; seconds: number; ifAbsent?: number; ifEmpty?: number; undoReads?: number; driftReads?: number; made?: number; text: string };
  limiter?: { requests: number; retries: number; rateLimited: number; currentRate: number; [key: string]: number };
  guards: ReportedGuard[];
  /**
   * Records whose action is not noop, in plan order (noops are only counted): every one when the
   * run has at most 10,000, else the first 10,000 and then the failed ones (up to 10,000 more).
   * `recordsFile` (records.jsonl beside report.json) holds every one, a JSON object a line.
   */
  records: RecordEntry[];
  /** Records of the run not listed in `records` (they are in `recordsFile`). */
  recordsOmitted?: number;
  /** The JSON-lines file beside this report with every record (present when the run has any). */
  recordsFile?: string;
  /** Owned records gone from the roster that upsert mode keeps. */
  orphans: string[];
  /** The last-applied name of each orphan, where the inventory holds one. */
  orphanNames?: Record<string, string>;
  rejectedRows: RejectedRow[];
  /** Rejected rows beyond those listed (the report keeps at most a capped number). */
  rejectedRowsOmitted: number;
  /** Rows a `skip_rows` filter of the mapping left out, with the reason (capped like rejected rows). */
  filteredRows?: FilteredRow[];
  /** Filtered rows beyond those listed. */
  filteredRowsOmitted?: number;
  /**
   * Rows synced with warnings about their values, each warning naming its cell: a value skipped
   * under `on_invalid: skip_value` (the service keeps that field), a name `last_first` left as
   * written, a formula-like value. Capped like rejected rows; rejected.csv lists them too.
   */
  warnings?: RejectedRow[];
  /** Rows with warnings beyond those listed. */
  warningsOmitted?: number;
  /**
   * Files layered over the source (`source.overlays`): how many rows of earlier files their rows
   * replaced, and their rows whose client_id no earlier file has (new rows).
   */
  layers?: { files: string[]; replaced: number; added: Array<{ clientId: string; provenance: Provenance }>; addedOmitted: number };
  /** Pairs of client_ids that are probably one person, with the tier and the evidence (`policy.duplicate_people`). */
  duplicatePeople?: DuplicatePair[];
  /** Pairs found by tier, and how many `duplicatePeople` leaves out (it lists the strongest MAX_LISTED_PAIRS). */
  duplicatePeopleFound?: DuplicatePeopleFound;
  /** Rows `duplicate_client_ids: first`/`last` set aside, with what they carried that was not synced. */
  discardedRows?: DiscardedRow[];
  notes: string[];
  /**
   * The drift check of a real run (sync/drift.ts): a random sample of owned records, and the
   * rotating window's (`window`: what it read and how much of the group its pass has covered since when), read back from
   * the service. `deleted` and `changed` are the sampled client_ids found gone or edited there; they
   * were repaired by this run as `--refresh` would.
   */
  drift?: { sampled: number; calls: number; deleted: string[]; changed: string[]; window?: DriftWindowReport };
}
