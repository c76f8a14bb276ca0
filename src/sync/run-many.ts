/**
 * Many pipelines in one process (`rostersync sync a.yaml b.yaml …` or a directory of them): each
 * runs as it would alone — its own state, lock, guards, report and exit code — and they run at
 * the same time, sharing one rate limiter per service budget (base URL + API key). Twenty
 * journals' nightly syncs against one organization then spend its rate limit together, fairly
 * (the limiter hands out turns first come, first served), and finish together instead of one
 * after the other. One pipeline's failure never stops the others; the command exits with the
 * worst outcome.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { RateLimiter } from '../rate-limit/rate-limiter.js';
import { sharedLimiter } from '../rate-limit/shared-budget.js';
import { loadPipeline } from '../config/load.js';
import { EXIT } from '../errors/user-facing-error.js';
import { reportRootFor } from '../report/location.js';
import type { RunOptions, RunResult } from './options.js';
import { runSync } from './run-sync.js';

const PIPELINE_EXTENSIONS = new Set(['.yaml', '.yml']);

/**
 * The pipeline files named: files as given, directories as the `.yaml`/`.yml` pipeline files in
 * them (not recursive, sorted; mapping files beside them are skipped). A directory holding none is
 * an error, as the run would silently do nothing.
 */
export function expandPipelinePaths(paths: readonly string[], cwd: string): string[] {
  const files: string[] = [];
  for (const path of paths) {
    const full = resolve(cwd, path);
    let isDirectory = false;
    try {
      isDirectory = statSync(full).isDirectory();
    } catch {
      // A missing file is the run's own error (config/load.ts says which file and how to fix it).
    }
    if (!isDirectory) {
      files.push(full);
      continue;
    }
    const inside = readdirSync(full)
      .filter((name) => PIPELINE_EXTENSIONS.has(extname(name).toLowerCase()))
      .sort()
      .map((name) => join(full, name))
      .filter(looksLikePipeline);
    if (inside.length === 0) throw new Error(`${full} holds no pipeline file (.yaml or .yml)`);
    files.push(...inside);
  }
  return [...new Set(files)];
}

/**
 * A pipeline file has `source` and `target` at the top; a mapping file beside it has neither.
 * A file that does not parse is kept, so its run says what is wrong with it.
 */
function looksLikePipeline(file: string): boolean {
  try {
    const doc: unknown = parseYaml(readFileSync(file, 'utf8'));
    return typeof doc !== 'object' || doc === null || ('source' in doc && 'target' in doc);
  } catch {
    return true;
  }
}

/** The pipeline's name, or undefined when its file does not load (its run says why). */
function pipelineNameOf(path: string): string | undefined {
  try {
    return loadPipeline(path).name;
  } catch {
    return undefined;
  }
}

/**
 * Exit codes from least to most severe, for "the worst of them": a rejected row (2) is less
 * severe than a refused guard (3), a configuration error (1), or the service failing (4, 5...).
 */
const SEVERITY: readonly number[] = [EXIT.ok, EXIT.partial, EXIT.guard, EXIT.usage, EXIT.auth, EXIT.unavailable, EXIT.stateUnavailable, EXIT.failedAfterWrites, EXIT.interrupted];

export function worstExitCode(codes: readonly number[]): number {
  const rank = (code: number) => (SEVERITY.includes(code) ? SEVERITY.indexOf(code) : SEVERITY.length);
  return codes.reduce((worst, code) => (rank(code) > rank(worst) ? code : worst), EXIT.ok);
}

export interface PipelineOutcome {
  pipelinePath: string;
  /** The pipeline's name when its file could be read. */
  name: string | undefined;
  exitCode: number;
  /** The run's result when it got as far as a report. */
  result?: RunResult;
  /** Why it stopped without a report (unreadable file, lock taken, ...). */
  error?: { message: string; hint?: string | undefined };
  /** Where this pipeline's run history lives (for the combined index). */
  historyRoot?: string;
}

export interface ManyRunResult {
  outcomes: PipelineOutcome[];
  exitCode: number;
}

/**
 * Limiters by service budget. The key is the base URL and a hash of the API key (never the key
 * itself): two keys are two budgets, as the service counts per key.
 */
export class SharedLimiters {
  private readonly limiters = new Map<string, RateLimiter>();

  constructor(private readonly create: (baseUrl: string, apiKey: string) => RateLimiter) {}

  for(baseUrl: string, apiKey: string): RateLimiter {
    const key = `${baseUrl.replace(/\/+$/, '')}\n${createHash('sha256').update(apiKey).digest('hex')}`;
    let limiter = this.limiters.get(key);
    if (!limiter) {
      limiter = this.create(baseUrl, apiKey);
      this.limiters.set(key, limiter);
    }
    return limiter;
  }
}

/**
 * The shared limiter's settings: `--max-rps` / `--concurrency` when given; else the lowest
 * `max_rps` any of the pipelines sets (a ceiling one pipeline asks for is kept for all, as they
 * spend one budget), or none (the limit is found); and the highest `concurrency`.
 */
function sharedLimiterSettings(paths: readonly string[], options: Pick<RunOptions, 'maxRps' | 'concurrency'>): { rps?: number; maxInFlight: number } {
  const ceilings: number[] = [];
  const inFlight: number[] = [];
  for (const path of paths) {
    try {
      const policy = loadPipeline(path).config.policy;
      if (policy.max_rps !== undefined) ceilings.push(policy.max_rps);
      inFlight.push(policy.concurrency);
    } catch {
      // Unreadable: that pipeline's own run reports it.
    }
  }
  const rps = options.maxRps ?? (ceilings.length > 0 ? Math.min(...ceilings) : undefined);
  return { ...(rps !== undefined ? { rps } : {}), maxInFlight: options.concurrency ?? Math.max(4, ...inFlight) };
}

export interface ManyRunOptions extends Omit<RunOptions, 'pipelinePath' | 'onProgress' | 'savePlanTo'> {
  /** Called as each pipeline finishes (the CLI prints its line then). */
  onFinished?: (outcome: PipelineOutcome) => void;
  /** The run of one pipeline (tests may wrap it). @default runSync */
  runOne?: (options: RunOptions) => Promise<RunResult>;
}

export async function runMany(pipelinePaths: readonly string[], options: ManyRunOptions): Promise<ManyRunResult> {
  const { onFinished, runOne = runSync, ...runOptions } = options;
  const settings = sharedLimiterSettings(pipelinePaths, runOptions);
  const now = runOptions.client?.now ?? performance.now.bind(performance);
  const sleep = runOptions.client?.sleep ?? ((ms: number, signal?: AbortSignal) => new Promise<void>((done, fail) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), fail(signal.reason)), { once: true });
  }));
  // Shared with the other processes of this host on the same key too, unless a clock is injected.
  const injected = runOptions.client?.now ?? runOptions.client?.sleep;
  const limiters = new SharedLimiters(
    (baseUrl, apiKey) =>
      (injected
        ? undefined
        : sharedLimiter({ baseUrl, apiKey, env: runOptions.env ?? process.env, rateLimit: settings, onAlone: (reason) => runOptions.logger?.warn(reason) })) ??
      new RateLimiter({ ...settings, now, sleep }),
  );
  const limiter = limiters.for(runOptions.service.baseUrl, runOptions.service.apiKey);

  const names = new Map<string, string | undefined>(pipelinePaths.map((path) => [path, pipelineNameOf(path)]));
  const outcomes = await Promise.all(
    pipelinePaths.map(async (pipelinePath): Promise<PipelineOutcome> => {
      let name: string | undefined;
      let historyRoot: string | undefined;
      try {
        const pipeline = loadPipeline(pipelinePath);
        name = pipeline.name;
        historyRoot = reportRootFor(pipeline, runOptions.env ?? {});
      } catch {
        // The run below fails on the same file and says why.
      }
      let outcome: PipelineOutcome;
      // Two files naming one pipeline would share its state and lock: the second would be refused
      // by the first's lock, in this very process. Neither runs; the message names both files.
      const sameName = pipelinePaths.filter((other) => name !== undefined && names.get(other) === name);
      if (sameName.length > 1) {
        outcome = {
          pipelinePath,
          name,
          exitCode: EXIT.usage,
          error: {
            message: `${sameName.length} pipeline files name the pipeline "${name}": ${sameName.join(' and ')}; none of them was run.`,
            hint: 'Each pipeline needs a name of its own (its state and lock are keyed by it): set `name:` in one of the files, or rename it.',
          },
          ...(historyRoot ? { historyRoot } : {}),
        };
        onFinished?.(outcome);
        return outcome;
      }
      try {
        const result = await runOne({ ...runOptions, pipelinePath, client: { ...runOptions.client, limiter } });
        outcome = { pipelinePath, name: name ?? result.report.pipeline, exitCode: result.exitCode, result, ...(historyRoot ? { historyRoot } : {}) };
      } catch (error) {
        const exitCode = typeof (error as { exitCode?: unknown }).exitCode === 'number' ? (error as { exitCode: number }).exitCode : EXIT.usage;
        const hint = (error as { hint?: unknown }).hint;
        outcome = {
          pipelinePath,
          name,
          exitCode,
          error: { message: error instanceof Error ? error.message : String(error), ...(typeof hint === 'string' ? { hint } : {}) },
          ...(historyRoot ? { historyRoot } : {}),
        };
      }
      onFinished?.(outcome);
      return outcome;
    }),
  );
  return { outcomes, exitCode: worstExitCode(outcomes.map((o) => o.exitCode)) };
}
