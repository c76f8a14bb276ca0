/**
 * What one run was asked, resolved once from RunOptions when the run starts (`withRun`,
 * sync/run-context.ts): what to plan, how to write, where to report. Nothing below the commands
 * takes RunOptions.
 */
import type { Logger } from 'pino';
import type { DeliveryOptions } from '../notify/deliver.js';
import type { GuardAllowances } from '../plan/guards.js';
import type { RunOptions } from './options.js';

/** What the plan is asked to consider (read by gather.ts). */
export interface PlanRequest {
  baseUrl: string;
  refresh: false | 'planned' | 'all';
  fastPath: boolean;
  createGroup: boolean;
  allow: GuardAllowances;
  maxRps?: number | undefined;
  fieldsFile?: string | undefined;
  cwd: string;
  workerReadMinBytes?: number | undefined;
  random: () => number;
  /** Clock of the drift check's window (when a pass began and ended). */
  now: () => number;
  signal?: AbortSignal | undefined;
}

/** How the plan's writes are made (run-plan.ts). */
export interface WriteRequest {
  dryRun: boolean;
  baseUrl: string;
  createGroup: boolean;
  concurrency?: number | undefined;
  maxDurationMs?: number | undefined;
  now: () => number;
  signal?: AbortSignal | undefined;
  logger?: Logger | undefined;
  onProgress?: ((done: number, total: number) => void) | undefined;
}

/** Where and how the report is written, and who is told (record.ts). */
export interface ReportRequest {
  reportDir?: string | undefined;
  cwd?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  logger?: Logger | undefined;
  notify?: DeliveryOptions | undefined;
  mask?: boolean | undefined;
  /** `--metrics-file` (src/metrics/target.ts). */
  metricsFile?: string | undefined;
  /** The run's stop signal: ends its alerts at once when it fires while they are sent. */
  signal?: AbortSignal | undefined;
}

export interface RunRequest {
  plan: PlanRequest;
  write: WriteRequest;
  report: ReportRequest;
}

/** `run`: what the run worked out once (its folder, clock and signal); the options' own outside a run. */
export function runRequestOf(
  options: RunOptions,
  run: { cwd: string; now: () => number; signal: AbortSignal | undefined } = { cwd: options.cwd ?? process.cwd(), now: options.now ?? Date.now, signal: options.signal },
): RunRequest {
  const baseUrl = options.service.baseUrl;
  const createGroup = options.createGroup === true;
  return {
    plan: {
      baseUrl,
      refresh: options.refresh ?? false,
      fastPath: options.fastPath !== false,
      createGroup,
      allow: {
        ...(options.allowIdentityChanges !== undefined ? { identityChanges: options.allowIdentityChanges } : {}),
        ...(options.allowDeletes !== undefined ? { deletes: options.allowDeletes } : {}),
        ...(options.allowSourceDrop ? { sourceDrop: true } : {}),
        ...(options.allowEmptySource ? { emptySource: true } : {}),
        ...(options.allowRejects !== undefined ? { rejects: options.allowRejects } : {}),
      },
      maxRps: options.maxRps,
      fieldsFile: options.fieldsFile,
      cwd: run.cwd,
      workerReadMinBytes: options.workerReadMinBytes,
      random: options.random ?? Math.random,
      now: run.now,
      signal: run.signal,
    },
    write: {
      dryRun: options.dryRun === true,
      baseUrl,
      createGroup,
      concurrency: options.concurrency,
      maxDurationMs: options.maxDurationMs,
      now: run.now,
      signal: run.signal,
      logger: options.logger,
      onProgress: options.onProgress,
    },
    report: { reportDir: options.reportDir, cwd: run.cwd, env: options.env, logger: options.logger, notify: options.notify, mask: options.mask, metricsFile: options.metricsFile, signal: run.signal },
  };
}
