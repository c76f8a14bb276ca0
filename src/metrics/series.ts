/**
 * The figures of one run as Prometheus series (pure): what an operator's monitoring reads from the
 * metrics file (`--metrics-file`, `metrics.file`; docs/review-and-metrics.md). One series set per
 * pipeline, labelled `pipeline` only: names of pipelines, actions, outcomes and guards, never a
 * roster value. Counts are the report's own (`report.counts`, `report.input`, `report.limiter`,
 * `report.drift`), so the file and the report cannot disagree.
 */
import { guardResultSchema, recordOutcomeSchema } from '../plan/types.js';
import { ACTIONS } from '../report/format.js';
import type { RunReport } from '../report/types.js';

export type MetricType = 'gauge' | 'counter';

export interface MetricFamily {
  /** The name samples carry (a counter's ends in `_total`). */
  name: string;
  type: MetricType;
  help: string;
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const OUTCOMES: ReadonlyArray<RunReport['outcome']> = ['success', 'warning', 'partial', 'refused', 'failed', 'interrupted', 'dry_run'];
const ROW_KINDS = ['read', 'valid', 'rejected', 'filtered', 'duplicates'] as const;
const ROW_KEY: Record<(typeof ROW_KINDS)[number], keyof RunReport['input']> = { read: 'rowsRead', valid: 'valid', rejected: 'rejected', filtered: 'filtered', duplicates: 'duplicates' };

/** Every family rostersync writes, in the order of the file. */
export const FAMILIES: readonly MetricFamily[] = [
  { name: 'rostersync_last_run_outcome', type: 'gauge', help: "Outcome of the pipeline's last run: 1 for the outcome it had, 0 for the others." },
  { name: 'rostersync_last_run_exit_code', type: 'gauge', help: "Exit code of the pipeline's last run (0 done, 2 rows or records failed, 3 a guard refused; README, Exit codes)." },
  { name: 'rostersync_last_run_dry_run', type: 'gauge', help: '1 when the last run was a dry run or a plan, which writes nothing.' },
  { name: 'rostersync_last_run_timestamp_seconds', type: 'gauge', help: 'When the last run finished, in seconds since the epoch.' },
  { name: 'rostersync_last_run_duration_seconds', type: 'gauge', help: 'How long the last run took.' },
  { name: 'rostersync_last_success_timestamp_seconds', type: 'gauge', help: 'When the last real run that ended success or warning finished, in seconds since the epoch.' },
  { name: 'rostersync_last_run_records', type: 'gauge', help: 'Records of the last run by action (create, update, delete, noop = kept) and outcome (done, failed, skipped, planned).' },
  { name: 'rostersync_last_run_rows', type: 'gauge', help: 'Roster rows of the last run: read, valid, rejected, filtered, duplicates.' },
  { name: 'rostersync_last_run_guard_tripped', type: 'gauge', help: '1 when the guard refused the last run, 0 when it passed or did not apply.' },
  { name: 'rostersync_last_run_calls', type: 'gauge', help: 'Service calls the last run made.' },
  { name: 'rostersync_last_run_http_requests', type: 'gauge', help: 'HTTP requests the last run sent, retries included.' },
  { name: 'rostersync_last_run_retries', type: 'gauge', help: 'Requests of the last run that were retries.' },
  { name: 'rostersync_last_run_rate_limited_responses', type: 'gauge', help: 'Answers 429 (too many requests) the last run received.' },
  { name: 'rostersync_last_run_achieved_requests_per_second', type: 'gauge', help: 'HTTP requests of the last run divided by its duration.' },
  { name: 'rostersync_last_run_pace_requests_per_second', type: 'gauge', help: "The client's pace when the last run ended." },
  { name: 'rostersync_last_run_limit_found_requests_per_second', type: 'gauge', help: 'The rate limit the service was found to enforce in the last run (0: no 429, none found).' },
  { name: 'rostersync_last_run_max_rps_requests_per_second', type: 'gauge', help: 'The configured ceiling (policy.max_rps or --max-rps; 0: none).' },
  { name: 'rostersync_last_run_drift_sampled_records', type: 'gauge', help: 'Owned records the drift check of the last run read back.' },
  { name: 'rostersync_last_run_drift_records', type: 'gauge', help: 'Sampled records the drift check found deleted or changed in the service (repaired by that run).' },
  { name: 'rostersync_runs_total', type: 'counter', help: 'Runs of the pipeline that wrote this file, by outcome.' },
];

export const LAST_SUCCESS = 'rostersync_last_success_timestamp_seconds';
export const RUNS_TOTAL = 'rostersync_runs_total';

/** A real run that did its job: the event "no successful sync in 26 hours" waits for. */
export function isSuccess(report: RunReport): boolean {
  return !report.dryRun && (report.outcome === 'success' || report.outcome === 'warning');
}

/**
 * The series of one run. `lastSuccessSeconds`: the previous successful run's end (from the file
 * or the state), kept when this run did not succeed; `runsBefore`: the counter's values so far.
 */
export function runSeries(report: RunReport, previous: { lastSuccessSeconds?: number; runsBefore: ReadonlyMap<string, number> }): Sample[] {
  const pipeline = report.pipeline;
  const out: Sample[] = [];
  const add = (name: string, value: number, labels: Record<string, string> = {}) => out.push({ name, labels: { pipeline, ...labels }, value });

  for (const outcome of OUTCOMES) add('rostersync_last_run_outcome', outcome === report.outcome ? 1 : 0, { outcome });
  add('rostersync_last_run_exit_code', report.exitCode);
  add('rostersync_last_run_dry_run', report.dryRun ? 1 : 0);
  const finished = Date.parse(report.finishedAt) / 1000;
  add('rostersync_last_run_timestamp_seconds', finished);
  add('rostersync_last_run_duration_seconds', report.durationMs / 1000);
  const lastSuccess = isSuccess(report) ? finished : previous.lastSuccessSeconds;
  if (lastSuccess !== undefined) add(LAST_SUCCESS, lastSuccess);
  // By the report's counts: a replace is counted as an update.
  for (const action of ACTIONS) {
    for (const outcome of recordOutcomeSchema.options) add('rostersync_last_run_records', report.counts[action]?.[outcome] ?? 0, { action, outcome });
  }
  for (const kind of ROW_KINDS) add('rostersync_last_run_rows', report.input[ROW_KEY[kind]], { kind });
  // Every guard, tripped or not (one that did not apply passed), so a query never meets a missing series.
  for (const guard of guardResultSchema.shape.guard.options) add('rostersync_last_run_guard_tripped', report.guards.some((g) => g.guard === guard && g.tripped) ? 1 : 0, { guard });
  const limiter = report.limiter;
  if (limiter) {
    add('rostersync_last_run_calls', limiter.calls ?? 0);
    add('rostersync_last_run_http_requests', limiter.requests);
    add('rostersync_last_run_retries', limiter.retries);
    add('rostersync_last_run_rate_limited_responses', limiter.rateLimited);
    add('rostersync_last_run_achieved_requests_per_second', report.durationMs > 0 ? limiter.requests / (report.durationMs / 1000) : 0);
    add('rostersync_last_run_pace_requests_per_second', limiter.currentRate);
    add('rostersync_last_run_limit_found_requests_per_second', limiter.limitFound ?? 0);
    add('rostersync_last_run_max_rps_requests_per_second', limiter.configuredRate ?? 0);
  }
  if (report.drift) {
    add('rostersync_last_run_drift_sampled_records', report.drift.sampled);
    add('rostersync_last_run_drift_records', report.drift.deleted.length, { kind: 'deleted' });
    add('rostersync_last_run_drift_records', report.drift.changed.length, { kind: 'changed' });
  }
  for (const outcome of OUTCOMES) add(RUNS_TOTAL, (previous.runsBefore.get(outcome) ?? 0) + (outcome === report.outcome ? 1 : 0), { outcome });
  return out;
}
