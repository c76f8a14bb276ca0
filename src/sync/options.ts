/** The options of one run (`rostersync sync|plan|apply`), as the CLI and tests pass them. */
import type { Logger } from 'pino';
import type { ClientOptions } from '../client/client.js';
import type { RunReport } from '../report/types.js';
import type { WrittenReport } from '../report/write.js';
import type { DeliveryOptions } from '../notify/deliver.js';

export interface RunOptions {
  /** The pipeline file, resolved against `cwd`. Required. */
  pipelinePath: string;
  /** Where the service is; the key never reaches logs or reports. Required. */
  service: { baseUrl: string; apiKey: string };
  /** Plan and report without writing to the service or the inventory (`sync --dry-run`, `plan`). @default false */
  dryRun?: boolean;
  /** `planned`: GET every planned key; `all`: every owned key too. @default false (trust the inventory) */
  refresh?: false | 'planned' | 'all';
  /**
   * false (`--no-fast-path`): map every row, even those the inventory knows unchanged by their row
   * key. The fast path is also off with `refresh`. @default true
   */
  fastPath?: boolean;
  /**
   * Rosters of at least this many bytes are read in a worker thread while the main thread plans
   * (src/sources/read-in-worker.ts). @default WORKER_READ_MIN_BYTES (8 MB); tests set it to 0.
   */
  workerReadMinBytes?: number;
  /** Allow this many deletes past the deletion guard (`--allow-deletes N`). @default undefined (the guard applies) */
  allowDeletes?: number;
  /** Run although the valid-record count dropped past `guards.max_source_drop_percent`. @default false */
  allowSourceDrop?: boolean;
  /** Run although the roster has no valid record (a mirror run would delete every owned record). @default false */
  allowEmptySource?: boolean;
  /** Allow up to this many owned records to become other people (the identity-change guard). @default undefined (the guard applies) */
  allowIdentityChanges?: number;
  /** Write although more rows were rejected than `policy.rejects` tolerates, up to this many (`--allow-rejects N`). @default undefined (the guard applies) */
  allowRejects?: number;
  /**
   * An explicit first run (`--create-group`): create the group the pipeline names when the state
   * knows none. Without it such a run refuses, as a lost state must never create a second group.
   * @default false
   */
  createGroup?: boolean;
  /** Ceiling on calls per second (`--max-rps`). @default the pipeline's `policy.max_rps`, else none: the limiter finds the service's limit */
  maxRps?: number;
  /** Calls in flight at once. @default the pipeline's `policy.concurrency` (4) */
  concurrency?: number;
  /** Stop starting new calls after this many milliseconds. @default undefined (no deadline) */
  maxDurationMs?: number;
  /** The run's report folder. @default `<report_dir>/<pipeline>/<run id>` beside the pipeline file (src/report/location.ts) */
  reportDir?: string;
  /** The folder of the SQLite state. @default the pipeline's `state_dir`, else `.rostersync` beside the pipeline file */
  stateDir?: string;
  /** A saved custom-fields listing instead of asking the service. @default undefined (the service's listing) */
  fieldsFile?: string;
  /** Aborting it stops the run between calls: no new call is started, the journal and report are written. @default none */
  signal?: AbortSignal;
  /** The environment read for ROSTERSYNC_* settings and secrets. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** The folder relative paths are resolved against. @default process.cwd() */
  cwd?: string;
  /** Where the run logs. @default none (nothing is logged) */
  logger?: Logger;
  /** The clock, in epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Extra client options for tests and benchmarks (dispatcher, sleep, retry policy). @default none */
  client?: Partial<ClientOptions>;
  /** Called after each write with the writes done and planned (the CLI's progress line). @default none */
  onProgress?: (done: number, total: number) => void;
  /** Randomness of the drift check's sample (sync/drift.ts). @default Math.random */
  random?: () => number;
  /** How alerts are delivered (attempts, waits, timeout, sleep, dispatcher): tests shorten them. @default src/notify/deliver.ts's defaults */
  notify?: DeliveryOptions;
  /** `--mask`: the report files (report.md/html/json, the job summary, rejected.csv) carry no roster values or names. @default false */
  mask?: boolean;
  /** `rostersync plan --out`: save the plan (a dry run) for a later `rostersync apply`. @default undefined (not saved) */
  savePlanTo?: string;
  /** `--metrics-file`: the Prometheus text file this run's figures replace (src/metrics/). @default the pipeline's `metrics.file` for a real run, else none */
  metricsFile?: string;
}

export interface RunResult {
  report: RunReport;
  exitCode: number;
  written: WrittenReport;
}
