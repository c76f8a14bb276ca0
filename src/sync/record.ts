/**
 * Record: the last phase of a run. The run's end is journaled in the state (its outcome and the
 * valid count the source-drop guard compares with next time) and the report is written, mode 0600,
 * and joins the pipeline's run history. Neither a state that cannot record the end nor a report
 * directory that cannot be written hides what the run did: the report still goes out (to a
 * fallback directory if need be, report/fallback.ts) with the problem as a warning.
 * `recordEarlyFailure` leaves the same trace for a run that failed before its plan existed.
 */
import { resolve } from 'node:path';
import type { ResolvedPipeline } from '../config/load.js';
import { reportDirFor, reportRootFor } from '../report/location.js';
import { parseKeep } from '../report/retention.js';
import type { RecordEntry, RunReport } from '../report/types.js';
import { reportDestination, writeReportOrFallback } from '../report/fallback.js';
import { maskRecord, maskReport } from '../report/mask.js';
import { dialectFor } from '../report/rejected-csv.js';
import { rewriteReportSummary, type WrittenReport } from '../report/write.js';
import { notifyRun } from '../notify/index.js';
import { fileSystemHint, fileSystemProblem } from '../errors/file-system-problem.js';
import type { StateBackend } from '../state/backend.js';
import { LockTakenError, StateUnavailableError } from '../state/backend.js';
import type { ReportRequest } from './run-request.js';
import { recordMetrics } from '../metrics/target.js';

export interface RecordInput {
  pipeline: ResolvedPipeline;
  store: StateBackend;
  report: RunReport;
  /** Valid records of the roster (0 when the run stopped before reading it). */
  validRecords: number;
  /** Every record of the run, when the report lists only some (report/build.ts, `reportRecords`). */
  records?: () => Iterable<RecordEntry>;
  options: ReportRequest;
}

export async function recordRun(input: RecordInput): Promise<WrittenReport> {
  const { pipeline, store, report, options } = input;
  // A state that cannot record the run's end (a full disk) must not hide what the run did: the
  // report still says it, with the problem as a warning.
  let stateProblem: string | undefined;
  try {
    store.finishRun({ id: report.runId, outcome: report.outcome, validRecords: input.validRecords, counts: report.counts });
  } catch (error) {
    if (error instanceof StateUnavailableError || error instanceof LockTakenError) {
      // The database went away mid-run (exit 6), or `unlock` ended the session (exit 2): the report still says what was done.
      stateProblem = `The state could not record the end of this run: ${error.message}. Writes in flight were journaled as sent and are written again by the next run.`;
    } else {
      const problem = fileSystemProblem(error);
      if (!problem) throw error;
      stateProblem = `The state could not record the end of this run: ${problem.words} (${problem.code}). ${fileSystemHint(problem, '--state-dir')}`;
    }
  }
  options.logger?.info(
    { runId: report.runId, pipeline: pipeline.name, outcome: report.outcome, exitCode: report.exitCode, counts: report.counts, durationMs: report.durationMs },
    'run finished',
  );
  if (report.rejectedRows.length > 0 && report.source.format === 'xlsx') {
    report.notes.push(
      'rejected.csv is a CSV file while this pipeline reads a workbook: copy the fixed rows back into the sheet, or read rejected.csv with a copy of the pipeline whose source is `{ file: rejected.csv, format: csv }`.',
    );
  }
  // The files may leave the machine (CI artifacts, the job summary): masked as the console is.
  const records = input.records && options.mask ? () => mapIterable(input.records!(), maskRecord) : input.records;
  const where = reportOptions(pipeline, report, options);
  const written = await writeReportOrFallback(options.mask ? maskReport(report) : report, { ...where, ...(records ? { records } : {}) });
  if (stateProblem) written.warnings.push(stateProblem);
  written.warnings.push(...(await metricsFor(pipeline, store, report, options)));
  await alertAfterReport(input, written, records);
  return written;
}

/** The metrics file (src/metrics/), after the report: the figures are the report's own. It never changes the run's outcome. */
async function metricsFor(pipeline: ResolvedPipeline, store: StateBackend, report: RunReport, options: ReportRequest): Promise<string[]> {
  const warnings = await recordMetrics(pipeline, store, report, options).catch((error: unknown) => [`The metrics file could not be written: ${error instanceof Error ? error.message : String(error)}`]);
  for (const warning of warnings) options.logger?.warn({ runId: report.runId, pipeline: pipeline.name }, warning);
  return warnings;
}

function* mapIterable<T, U>(items: Iterable<T>, map: (item: T) => U): Generator<U> {
  for (const item of items) yield map(item);
}

/**
 * The run's alerts (notify/), sent once the report is written, so an alert that stalls never
 * costs the report (nor holds the run: notify/index.ts bounds them). Their outcome then joins the
 * report's notes: in memory for the caller, and in report.json, report.md and report.html.
 */
async function alertAfterReport(input: Omit<RecordInput, 'validRecords'>, written: WrittenReport, records: RecordInput['records']): Promise<void> {
  const { pipeline, report, options } = input;
  const where = reportOptions(pipeline, report, options);
  const notes = await notifyFor(pipeline, report, options, { dir: written.dir, fellBack: written.dir !== resolve(where.dir) });
  if (notes.length === 0) return;
  report.notes.push(...notes);
  try {
    await rewriteReportSummary(options.mask ? maskReport(report) : report, written, { ...(where.history ? { history: where.history } : {}), ...(records ? { records } : {}) });
  } catch (error) {
    written.warnings.push(`The report was written, but not the outcome of its alerts: ${error instanceof Error ? error.message : String(error)} (see the log).`);
  }
}

function notifyFor(pipeline: ResolvedPipeline, report: RunReport, options: RecordInput['options'], destination: { dir: string; fellBack: boolean }): Promise<string[]> {
  return notifyRun(pipeline.config.notify, report, {
    env: options.env ?? process.env,
    reportDir: destination.dir,
    fellBack: destination.fellBack,
    rejects: pipeline.config.policy.rejects,
    logger: options.logger,
    delivery: options.notify,
    signal: options.signal,
  });
}

/** Where the report goes, and the run history it joins (every run, dry runs and early failures too). */
function reportOptions(pipeline: ResolvedPipeline, report: RunReport, options: RecordInput['options']) {
  return {
    dir: reportDirFor(pipeline, report.runId, options),
    env: options.env ?? process.env,
    history: { root: reportRootFor(pipeline, options.env), keep: parseKeep(pipeline.config.policy.reports.keep), now: Date.parse(report.finishedAt) },
    // rejected.csv in the pipeline's own CSV settings, so the fixed rows can be fed back as they are.
    rejectedCsv: { dialect: dialectFor(pipeline.config.source) },
  };
}

/**
 * A run that failed before its plan existed still leaves a trace: a row in the run history and a
 * report saying what stopped it, so a 3 a.m. failure is explained in the morning.
 */
export async function recordEarlyFailure(input: Omit<RecordInput, 'validRecords'>): Promise<void> {
  const { pipeline, store, report, options } = input;
  let written: WrittenReport | undefined;
  try {
    store.startRun({ id: report.runId, dryRun: report.dryRun, sourceSha256: '' });
    store.finishRun({ id: report.runId, outcome: 'failed', validRecords: 0, counts: report.counts });
    written = await writeReportOrFallback(options.mask ? maskReport(report) : report, reportOptions(pipeline, report, options));
    options.logger?.error({ runId: report.runId, pipeline: pipeline.name, exitCode: report.exitCode, report: written.files.json }, 'run failed before planning');
  } catch {
    // The original error is what the operator needs; a report that cannot be written must not hide it.
  }
  await metricsFor(pipeline, store, report, options);
  if (written) {
    await alertAfterReport(input, written, undefined);
    return;
  }
  // No report: a state or report folder that cannot be written must not also silence the alert.
  const destination = await reportDestination(report, reportOptions(pipeline, report, options));
  report.notes.push(...(await notifyFor(pipeline, report, options, { dir: destination.dir, fellBack: destination.unwritable !== undefined })));
}
