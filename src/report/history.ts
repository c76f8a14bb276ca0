/**
 * The run history of a pipeline's report folder: every run, dry runs included, leaves a
 * one-line summary in `<root>/history/<run id>.json`, and `<root>/index.html` lists them with a
 * trend chart. One small file per run, never a shared file rewritten by each run, so two runs that
 * finish together (a dry run does not take the pipeline lock) cannot lose each other's line; the
 * index is rebuilt from the files every time.
 *
 * Summaries hold counts, times, the outcome and where the run happened — no roster data — so they
 * outlive the report folders that retention prunes (retention.ts) and keep the trend long.
 */
import { hostname } from 'node:os';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { pageShell } from './assets.js';
import { REPORT_DIR_MODE, writeFileAtomic } from './atomic-file.js';
import { formatCount, renderTrendChart, type TrendPoint } from './charts.js';
import { escapeHtml, outcomeBadgeHtml, relativeHref, timeHtml } from './escape.js';
import { actionTotal, countOf, formatDuration, OUTCOMES, outcomeWords, redactEmails } from './format.js';
import { describeKeep, type KeepPolicy } from './retention.js';
import { renderTable, text } from './table.js';
import type { RunReport } from './types.js';

/** Summaries kept per pipeline: beyond this the oldest lines go (years of nightly runs). */
export const HISTORY_LIMIT = 1000;
/** Runs drawn in a trend chart: the most recent ones. */
export const TREND_RUNS = 60;
export const HISTORY_DIR = 'history';
export const INDEX_FILE = 'index.html';

const RUN_OUTCOMES = ['success', 'warning', 'partial', 'refused', 'failed', 'interrupted', 'dry_run'] as const satisfies readonly RunReport['outcome'][];

export const runSummarySchema = z.object({
  version: z.literal(1),
  runId: z.string().min(1),
  pipeline: z.string(),
  outcome: z.enum(RUN_OUTCOMES),
  exitCode: z.number(),
  dryRun: z.boolean(),
  mode: z.string(),
  startedAt: z.string(),
  finishedAt: z.string(),
  durationMs: z.number(),
  counts: z.object({
    creates: z.number(),
    updates: z.number(),
    deletes: z.number(),
    unchanged: z.number(),
    failures: z.number(),
    rejects: z.number(),
  }),
  /** Host name, plus the CI job when the run happened in one. */
  where: z.string(),
  /** Service base URL and group. */
  target: z.string(),
  message: z.string().optional(),
  /** The drift check of a real run: records read back, and those found deleted or changed in the service. */
  drift: z.object({ sampled: z.number(), deleted: z.number(), changed: z.number() }).optional(),
  /** The report folder: relative to the history root when inside it, else absolute. */
  reportDir: z.string(),
});
export type RunSummary = z.infer<typeof runSummarySchema>;

/** Host name plus the CI job, from the environment the run saw: "where it ran" in the index. */
export function whereItRan(env: Readonly<Record<string, string | undefined>>, host: string = hostname()): string {
  if (env.GITHUB_ACTIONS === 'true') {
    return `${host} · GitHub Actions${env.GITHUB_REPOSITORY ? ` ${env.GITHUB_REPOSITORY}` : ''}${env.GITHUB_RUN_ID ? ` run ${env.GITHUB_RUN_ID}` : ''}`;
  }
  if (env.GITLAB_CI === 'true') return `${host} · GitLab CI${env.CI_JOB_ID ? ` job ${env.CI_JOB_ID}` : ''}`;
  if (env.CI === 'true') return `${host} · CI`;
  return host;
}

/** A run's counts as the history and the notifications give them. */
export function runCounts(report: RunReport): RunSummary['counts'] {
  const total = (outcome: (typeof OUTCOMES)[number]) =>
    countOf(report, 'create', outcome) + countOf(report, 'update', outcome) + countOf(report, 'delete', outcome);
  return {
    creates: actionTotal(report, 'create'),
    updates: actionTotal(report, 'update'),
    deletes: actionTotal(report, 'delete'),
    unchanged: actionTotal(report, 'noop'),
    failures: total('failed'),
    rejects: report.input.rejected,
  };
}

export function summarizeRun(report: RunReport, input: { root: string; reportDir: string; where: string }): RunSummary {
  const inside = relative(input.root, input.reportDir);
  return {
    version: 1,
    runId: report.runId,
    pipeline: report.pipeline,
    outcome: report.outcome,
    exitCode: report.exitCode,
    dryRun: report.dryRun,
    mode: report.mode,
    startedAt: report.startedAt,
    finishedAt: report.finishedAt,
    durationMs: report.durationMs,
    counts: runCounts(report),
    where: input.where,
    target: `${report.target.baseUrl}${report.target.groupId === null ? '' : ` group ${report.target.groupId}`}`,
    // Messages can quote a roster path or a service answer; the history must not keep an email.
    ...(report.message ? { message: redactEmails(report.message) } : {}),
    ...(report.drift ? { drift: { sampled: report.drift.sampled, deleted: report.drift.deleted.length, changed: report.drift.changed.length } } : {}),
    reportDir: inside !== '' && !inside.startsWith('..') && !isAbsolute(inside) ? inside : resolve(input.reportDir),
  };
}

/** A run id as a file name: run ids are `20261123T031500Z-4f2a`; anything else is made safe. */
function historyFileName(runId: string): string {
  return `${runId.replace(/[^A-Za-z0-9._-]/g, '_')}.json`;
}

/** The summaries under `root`, newest first. Unreadable or foreign files are skipped, not fatal. */
export async function readHistory(root: string): Promise<RunSummary[]> {
  const dir = join(root, HISTORY_DIR);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const runs: RunSummary[] = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    try {
      const parsed = runSummarySchema.safeParse(JSON.parse(await readFile(join(dir, name), 'utf8')));
      if (parsed.success) runs.push(parsed.data);
    } catch {
      // A half-written or hand-edited file must not stop the run that is recording itself.
    }
  }
  return runs.sort((a, b) => (a.startedAt === b.startedAt ? b.runId.localeCompare(a.runId) : b.startedAt.localeCompare(a.startedAt)));
}

/**
 * Writes one run's summary and drops the oldest beyond HISTORY_LIMIT. Returns the summaries kept,
 * newest first, so the index is built from this one read of the history folder.
 */
export async function appendHistory(root: string, summary: RunSummary): Promise<RunSummary[]> {
  const dir = join(root, HISTORY_DIR);
  await mkdir(dir, { recursive: true, mode: REPORT_DIR_MODE });
  await writeFileAtomic(join(dir, historyFileName(summary.runId)), `${JSON.stringify(summary, null, 2)}\n`);
  const runs = await readHistory(root);
  for (const old of runs.slice(HISTORY_LIMIT)) await rm(join(dir, historyFileName(old.runId)), { force: true });
  return runs.slice(0, HISTORY_LIMIT);
}

function absoluteReportDir(root: string, run: RunSummary): string {
  return isAbsolute(run.reportDir) ? run.reportDir : join(root, run.reportDir);
}

/** Path segments from `fromDir` to `target`, for a relative link that works from file://. */
function segmentsFrom(fromDir: string, target: string): string[] {
  return relative(fromDir, target).split(sep);
}

interface IndexRow {
  run: RunSummary;
  /** Escaped href of the run's report.html, or undefined when retention removed it. */
  reportHref?: string;
  /** Escaped href of the pipeline's own index (combined index only). */
  pipelineHref?: string;
}

function rowsFor(root: string, runs: readonly RunSummary[], pageDir: string, pipelineIndex?: string): IndexRow[] {
  return runs.map((run) => {
    const dir = absoluteReportDir(root, run);
    const html = join(dir, 'report.html');
    return {
      run,
      ...(existsSync(html) ? { reportHref: relativeHref(segmentsFrom(pageDir, html)) } : {}),
      ...(pipelineIndex ? { pipelineHref: relativeHref(segmentsFrom(pageDir, pipelineIndex)) } : {}),
    };
  });
}

function trendPoints(runs: readonly RunSummary[]): TrendPoint[] {
  return runs
    .slice(0, TREND_RUNS)
    .reverse()
    .map((run) => ({
      label: `${run.startedAt.slice(0, 16).replace('T', ' ')} UTC · ${outcomeWords({ outcome: run.outcome, rejects: run.counts.rejects, failures: run.counts.failures })}`,
      axis: `${run.startedAt.slice(0, 10)} (UTC)`,
      values: { creates: run.counts.creates, updates: run.counts.updates, deletes: run.counts.deletes, failures: run.counts.failures, rejects: run.counts.rejects },
    }));
}

/**
 * Real syncs are what an admin watches: plans and dry runs (a `plan` with a bad URL included) are
 * kept apart, out of the trend, the badge and the runs table, and listed in a section of their own.
 */
export function isRealSync(run: Pick<RunSummary, 'dryRun'>): boolean {
  return !run.dryRun;
}

/** The plans and dry runs, folded away: listed, never mixed with the real syncs. */
function trialRunsSection(rows: readonly IndexRow[], combined: boolean): string {
  if (rows.length === 0) return '';
  return `<details class="section" id="trials"><summary>Plans and dry runs <span class="n">(${formatCount(rows.length)})</span>, not counted in the trend, the badge or the retention of real syncs</summary>${runsTable(rows, combined)}</details>`;
}

function outcomeBadge(run: RunSummary): string {
  return outcomeBadgeHtml(run.outcome, outcomeWords({ outcome: run.outcome, rejects: run.counts.rejects, failures: run.counts.failures }));
}

function runsTable(rows: readonly IndexRow[], combined: boolean): string {
  const count = (value: number) => text(formatCount(value), value === 0 ? 'zero' : undefined);
  return renderTable({
    columns: [
      ...(combined ? [{ label: 'pipeline' }] : []),
      { label: 'started' },
      { label: 'outcome' },
      { label: 'creates', num: true },
      { label: 'updates', num: true },
      { label: 'deletes', num: true },
      { label: 'unchanged', num: true },
      { label: 'failures', num: true },
      { label: 'rejects', num: true },
      { label: 'duration', num: true },
      { label: 'where' },
      { label: 'report' },
    ],
    rows,
    keys: combined ? ['outcome', 'pipeline'] : ['outcome'],
    data: ({ run }) => ({ outcome: run.outcome, pipeline: run.pipeline }),
    elsewhere: 'open the history folder',
    cells: ({ run, reportHref, pipelineHref }) => [
      ...(combined ? [pipelineHref ? { html: `<a href="${pipelineHref}">${escapeHtml(run.pipeline)}</a>` } : text(run.pipeline)] : []),
      { html: timeHtml(run.startedAt) },
      { html: `${outcomeBadge(run)} <span class="exit">exit ${run.exitCode}</span>${run.message ? `<div class="empty">${escapeHtml(run.message)}</div>` : ''}${driftHtml(run)}`, className: 'outcome' },
      count(run.counts.creates),
      count(run.counts.updates),
      count(run.counts.deletes),
      count(run.counts.unchanged),
      count(run.counts.failures),
      count(run.counts.rejects),
      text(formatDuration(run.durationMs)),
      { text: run.where, title: `target: ${run.target}` },
      reportHref ? { html: `<a href="${reportHref}">${escapeHtml(run.runId)}</a>` } : { text: `${run.runId} (pruned)`, className: 'empty' },
    ],
  });
}

/** Drift found by the run's check, said under its outcome; a clean check is not worth a line. */
function driftHtml(run: RunSummary): string {
  const drift = run.drift;
  if (!drift || drift.deleted + drift.changed === 0) return '';
  return `<div class="drift">drift: ${drift.deleted} deleted, ${drift.changed} changed of ${drift.sampled} read back (repaired)</div>`;
}

function filtersBar(runs: readonly RunSummary[], pipelines?: readonly string[]): string {
  const outcomes = RUN_OUTCOMES.filter((outcome) => runs.some((run) => run.outcome === outcome));
  const pipelineSelect = pipelines
    ? `<select data-filter="pipeline" aria-label="Pipeline"><option value="">every pipeline</option>${pipelines.map((p) => `<option value="${escapeHtml(p)}">${escapeHtml(p)}</option>`).join('')}</select>`
    : '';
  return `<div class="filters" hidden>
<input data-filter="text" type="search" placeholder="Search: run id, host, message…" aria-label="Search">
<select data-filter="outcome" aria-label="Outcome"><option value="">every outcome</option>${outcomes.map((o) => `<option value="${o}">${o.replace('_', ' ')}</option>`).join('')}</select>
${pipelineSelect}</div>`;
}

/** The index of one pipeline's runs, as a page living in `root`. */
export function renderHistoryIndex(input: { pipeline: string; root: string; runs: readonly RunSummary[]; keep?: KeepPolicy }): string {
  const { pipeline, root } = input;
  const runs = input.runs.filter(isRealSync);
  const trials = input.runs.filter((run) => !isRealSync(run));
  const retention = input.keep ? ` Retention (<code>policy.reports.keep</code>): ${describeKeep(input.keep)}, counting real syncs and plans apart; pruned runs keep their line here.` : '';
  const latest = runs[0];
  const body = `<header>
<h1>rostersync · <code>${escapeHtml(pipeline)}</code> · run history${latest ? ` ${outcomeBadge(latest)}` : ''}</h1>
<p class="message">${formatCount(runs.length)} real sync(s), newest first${latest ? `; the latest started ${timeHtml(latest.startedAt)}` : ''}; ${formatCount(trials.length)} plan(s) and dry run(s) apart.${retention}</p>
</header>
<main>
<section id="trend"><h2>Trend <span class="n">(last ${Math.min(runs.length, TREND_RUNS)} real syncs)</span></h2>${renderTrendChart(trendPoints(runs))}</section>
${filtersBar(input.runs)}
<section id="runs"><h2>Real syncs <span class="n">(${formatCount(runs.length)})</span></h2>${runsTable(rowsFor(root, runs, root), false)}</section>
${trialRunsSection(rowsFor(root, trials, root), false)}
</main>`;
  return pageShell({ title: escapeHtml(`rostersync · ${pipeline} · run history`), body });
}

/**
 * Rebuilds `<root>/index.html` from the history's summaries (appendHistory's answer, so the folder
 * is read once per run); returns its path.
 */
export async function writeHistoryIndex(root: string, pipeline: string, runs: readonly RunSummary[], keep?: KeepPolicy): Promise<string> {
  const path = join(root, INDEX_FILE);
  await writeFileAtomic(path, renderHistoryIndex({ pipeline, root, runs, ...(keep ? { keep } : {}) }));
  return path;
}

export interface CombinedIndexInput {
  /** The page to write; by default `index.html` in the folder that holds every root (e.g. `reports/`). */
  file?: string;
  /** The history root of each pipeline (`reports/<pipeline>`), as passed to `writeReport`'s `history.root`. */
  roots: readonly string[];
}

/**
 * The combined index across pipelines that ran together (`sync a.yaml b.yaml`): the latest run of
 * each, a trend chart per pipeline and every run in one table filterable by pipeline and outcome.
 * Links are relative to the page, so the folder can be copied or opened from file://.
 */
export function renderCombinedIndex(input: { file: string; histories: readonly { root: string; runs: readonly RunSummary[] }[] }): string {
  const pageDir = dirname(resolve(input.file));
  const named = input.histories.map((history) => ({
    ...history,
    runs: history.runs.filter(isRealSync),
    trials: history.runs.filter((run) => !isRealSync(run)),
    pipeline: history.runs[0]?.pipeline ?? history.root.split(sep).pop() ?? history.root,
    index: join(history.root, INDEX_FILE),
  }));
  const rows = named
    .flatMap((history) => rowsFor(history.root, history.runs, pageDir, history.index))
    .sort((a, b) => b.run.startedAt.localeCompare(a.run.startedAt));
  const latest = renderTable({
    columns: [{ label: 'pipeline' }, { label: 'latest run' }, { label: 'outcome' }, { label: 'runs', num: true }],
    rows: named,
    cells: (history) => {
      const run = history.runs[0];
      return [
        { html: `<a href="${relativeHref(segmentsFrom(pageDir, history.index))}">${escapeHtml(history.pipeline)}</a>` },
        run ? { html: timeHtml(run.startedAt) } : text('no run yet', 'empty'),
        run ? { html: outcomeBadge(run) } : text(''),
        text(formatCount(history.runs.length)),
      ];
    },
  });
  const trends = named
    .map((history) => `<h3><code>${escapeHtml(history.pipeline)}</code></h3>${renderTrendChart(trendPoints(history.runs))}`)
    .join('');
  const allRuns = named.flatMap((history) => [...history.runs, ...history.trials]);
  const trialRows = named
    .flatMap((history) => rowsFor(history.root, history.trials, pageDir, history.index))
    .sort((a, b) => b.run.startedAt.localeCompare(a.run.startedAt));
  const body = `<header>
<h1>rostersync · run history of ${formatCount(named.length)} pipeline(s)</h1>
</header>
<main>
<section id="latest"><h2>Latest runs</h2>${latest}</section>
<section id="trend"><h2>Trend <span class="n">(last ${TREND_RUNS} runs of each pipeline)</span></h2>${trends}</section>
${filtersBar(allRuns, named.map((history) => history.pipeline))}
<section id="runs"><h2>Real syncs <span class="n">(${formatCount(rows.length)})</span></h2>${runsTable(rows, true)}</section>
${trialRunsSection(trialRows, true)}
</main>`;
  return pageShell({ title: 'rostersync · run history', body });
}

/**
 * `index.html` in the deepest folder that holds every root: `reports/a` and `reports/b` give
 * `reports/index.html`, so the page sits beside the pipelines' own folders.
 */
export function combinedIndexPath(roots: readonly string[]): string {
  const parents = roots.map((root) => dirname(resolve(root)).split(sep));
  const common: string[] = [];
  for (let i = 0; parents.every((parts) => i < parts.length && parts[i] === parents[0]![i]); i++) common.push(parents[0]![i]!);
  return join(common.join(sep) || sep, INDEX_FILE);
}

/**
 * Writes the combined index of several pipelines' histories (for `sync a.yaml b.yaml`), each root
 * being the history root its runs were recorded in. Returns the page's path.
 */
export async function writeCombinedIndex(input: CombinedIndexInput): Promise<string> {
  const histories = [];
  for (const root of input.roots) histories.push({ root: resolve(root), runs: await readHistory(resolve(root)) });
  const file = resolve(input.file ?? combinedIndexPath(input.roots));
  await mkdir(dirname(file), { recursive: true, mode: REPORT_DIR_MODE });
  await writeFileAtomic(file, renderCombinedIndex({ file, histories }));
  return file;
}
