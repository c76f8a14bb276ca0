/** The options of one run (`rostersync sync|plan|apply`), as the CLI and tests pass them. */
import type { Logger } from 'pino';
import type { ClientOptions } from '../client/client.js';
import type { RunReport } from '../report/types.js';
import type { WrittenReport } from '../report/write.js';
import type { DeliveryOptions } from '../notify/deliver.js';

export interface RunOptions {
  pipelinePath: string;
  /** Where the service is; the key never reaches logs or reports. */
  service: { baseUrl: string; apiKey: string };
  dryRun?: boolean;
  /** `planned`: GET every planned key; `all`: every owned key too. */
  refresh?: false | 'planned' | 'all';
  /**
   * false (`--no-fast-path`): map every row, even those the inventory knows unchanged by their row
   * key. The fast path is also off with `refresh`.
   */
  fastPath?: boolean;
  /**
   * Rosters of at least this many bytes are read in a worker thread while the main thread plans
   * (src/sources/read-in-worker.ts). @default WORKER_READ_MIN_BYTES (8 MB); tests set it to 0.
   */
  workerReadMinBytes?: number;
  allowDeletes?: number;
  allowSourceDrop?: boolean;
  allowEmptySource?: boolean;
  /** Allow up to this many owned records to become other people (the identity-change guard). */
  allowIdentityChanges?: number;
  /**
   * An explicit first run (`--create-group`): create the group the pipeline names when the state
   * knows none. Without it such a run refuses, as a lost state must never create a second group.
   */
  createGroup?: boolean;
  maxRps?: number;
  concurrency?: number;
  /** Stop starting new calls after this many milliseconds. */
  maxDurationMs?: number;
  reportDir?: string;
  stateDir?: string;
  /** A saved custom-fields listing instead of asking the service. */
  fieldsFile?: string;
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logger?: Logger;
  now?: () => number;
  /** Extra client options for tests and benchmarks (dispatcher, sleep, retry policy). */
  client?: Partial<ClientOptions>;
  onProgress?: (done: number, total: number) => void;
  /** Randomness of the drift check's sample (sync/drift.ts). @default Math.random */
  random?: () => number;
  /** How alerts are delivered (attempts, waits, timeout, sleep, dispatcher): tests shorten them. */
  notify?: DeliveryOptions;
  /** `--mask`: the report files (report.md/html/json, the job summary, rejected.csv) carry no roster values or names. */
  mask?: boolean;
  /** `rostersync plan --out`: save the plan (a dry run) for a later `rostersync apply`. */
  savePlanTo?: string;
}

export interface RunResult {
  report: RunReport;
  exitCode: number;
  written: WrittenReport;
}
