/**
 * Writes the reconciliation report of one run to its directory (docs/reading-plans-and-reports.md, docs/security-and-personal-data.md):
 * report.json, report.md, report.html and, when rows were rejected, rejected.csv; when the run has
 * records, records.jsonl with every one, and when they take more than one page, records/page-N.html.
 * Records are streamed to those files from the plan and its outcomes, never held all at once.
 * The directory is created 0700 and every file is 0600, because reports hold roster names and
 * emails. Each file is written to a temporary name and renamed, so a reader (or a crash) never
 * sees half a report. Then, when asked, the run joins the pipeline's run history (history.ts:
 * summary, index page, retention.ts pruning) and report.md is appended to GITHUB_STEP_SUMMARY.
 */
import { appendFile, chmod, mkdir } from 'node:fs/promises';
import { ignoreInGit } from '../personal-data/private-dir.js';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UserFacingError } from '../errors/user-facing-error.js';
import { REPORT_DIR_MODE, writeFileAtomic } from './atomic-file.js';
import { appendHistory, INDEX_FILE, summarizeRun, whereItRan, writeHistoryIndex } from './history.js';
import { RECORD_PAGES_DIR, RECORDS_PER_PAGE, REJECTED_CSV, recordPageFile, renderHtml, renderRecordPage, type RecordPage, type RenderHtmlOptions } from './html.js';
import { renderMarkdown } from './markdown.js';
import { encodeRejectedCsv, rejectedCsvRows, type RejectedCsvOptions } from './rejected-csv.js';
import { pruneReports, type KeepPolicy } from './retention.js';
import type { RecordEntry, RunReport } from './types.js';

export { REPORT_DIR_MODE, REPORT_FILE_MODE, writeFileAtomic } from './atomic-file.js';

export interface WriteReportOptions {
  /** Directory of this run's report; created (with parents) mode 0700 when missing. */
  dir: string;
  /**
   * Environment to read `GITHUB_STEP_SUMMARY` from (the CLI passes `ctx.io.env`). When that names a
   * file, report.md is appended to it so the summary shows on the GitHub Actions job page.
   */
  env: Readonly<Record<string, string | undefined>>;
  /**
   * Record the run in the pipeline's run history: a summary in `<root>/history/`, old
   * report folders pruned as `keep` says, and `<root>/index.html` rebuilt. `root` is the
   * pipeline's report folder, `<report_dir>/<pipeline>`; the run's `dir` may be inside it (the
   * default) or anywhere else (`--report-dir`, never pruned).
   */
  history?: { root: string; keep: KeepPolicy; now: number };
  /** How rejected.csv is written (the pipeline's CSV dialect, so it can be read back). */
  rejectedCsv?: RejectedCsvOptions;
  /**
   * Every record of the run, read afresh at each call, for records.jsonl and report.html's pages
   * when `report.records` lists only some (report/build.ts, `reportRecords`). Without it, the
   * records the report lists are all there are.
   */
  records?: () => Iterable<RecordEntry>;
}

export interface WrittenReport {
  /** Absolute path of the report directory. */
  dir: string;
  /**
   * Absolute paths of the files written. `rejectedCsv` only when there were rejected rows, `index`
   * (the pipeline's run-history page) only when `history` was given.
   */
  files: { json: string; md: string; html: string; records?: string; rejectedCsv?: string; index?: string };
  /** The step-summary file report.md was appended to, when `GITHUB_STEP_SUMMARY` was set and writable. */
  stepSummary?: string;
  /** Problems that did not stop the report from being written (e.g. an unwritable step summary). */
  warnings: string[];
  /** Report folders retention removed, oldest first. */
  pruned?: string[];
}

/** Relative href segments from a report folder to its pipeline's index page. */
function indexSegments(dir: string, root: string): string[] {
  return relative(dir, join(root, INDEX_FILE)).split(sep);
}

/** The system's code for a failed write (`EACCES`), else the error as text. */
function codeOf(error: unknown): string {
  return error instanceof Error && 'code' in error ? String(error.code) : String(error);
}

function cannotWrite(path: string, error: unknown): UserFacingError {
  return new UserFacingError(`Cannot write the report to ${path} (${codeOf(error)}).`, {
    hint: 'Check that the directory exists or can be created and is writable, or choose another one with --report-dir.',
    cause: error,
  });
}

export async function writeReport(report: RunReport, options: WriteReportOptions): Promise<WrittenReport> {
  const dir = resolve(options.dir);
  try {
    const created = await mkdir(dir, { recursive: true, mode: REPORT_DIR_MODE });
    // Only tighten a directory this call created; an existing directory keeps the mode its owner chose.
    if (created !== undefined) await chmod(dir, REPORT_DIR_MODE);
    // The folder above the runs (`reports/` on a first run), not each run's folder.
    if (created !== undefined && created !== dir) await ignoreInGit(created);
  } catch (error) {
    throw cannotWrite(dir, error);
  }

  const markdown = renderMarkdown(report);
  const files: WrittenReport['files'] = {
    json: join(dir, 'report.json'),
    md: join(dir, 'report.md'),
    html: join(dir, 'report.html'),
  };
  const allRecords = options.records ?? (() => report.records);
  const htmlOptions = options.history ? { indexHref: indexSegments(dir, resolve(options.history.root)) } : {};
  const writes: [string, string | Uint8Array | Iterable<string>][] = [[files.json, reportJson(report)], [files.md, markdown]];
  if (report.recordsFile !== undefined) {
    files.records = join(dir, report.recordsFile);
    writes.push([files.records, jsonLines(allRecords())]);
  }
  // report.html holds the first page of records; the others are pages of their own beside it.
  const firstPage = await writeRecordPages(report, dir, allRecords, htmlOptions);
  writes.push([files.html, renderHtml(report, { ...htmlOptions, ...(firstPage ? { page: firstPage } : {}) })]);
  if (report.rejectedRows.length > 0 || report.warnings?.length) {
    // Formula escaping and the pipeline's CSV settings (rejected-csv.ts), written like the others.
    files.rejectedCsv = join(dir, REJECTED_CSV);
    writes.push([files.rejectedCsv, encodeRejectedCsv(rejectedCsvRows(report), options.rejectedCsv)]);
  }
  for (const [path, content] of writes) {
    try {
      await writeFileAtomic(path, content);
    } catch (error) {
      throw cannotWrite(path, error);
    }
  }

  const written: WrittenReport = { dir, files, warnings: [] };
  if (options.history) await recordHistory(report, dir, options, written);
  const stepSummary = options.env.GITHUB_STEP_SUMMARY;
  if (stepSummary) {
    // The runner owns this file (it exists, shared by every step): append, never replace or chmod it.
    try {
      await appendFile(stepSummary, `${markdown}\n`, 'utf8');
      written.stepSummary = stepSummary;
    } catch (error) {
      written.warnings.push(`Could not append the summary to GITHUB_STEP_SUMMARY (${stepSummary}): ${codeOf(error)}.`);
    }
  }
  return written;
}

/**
 * Writes report.json, report.md and report.html again over a report already written, for what the
 * run learnt after writing it (its alerts' outcomes, sync/record.ts): the report exists before an
 * alert can stall, and says how each went once they are done. records.jsonl, the record pages,
 * rejected.csv, the run history and the step summary hold nothing that changes, and are left.
 */
export async function rewriteReportSummary(report: RunReport, written: WrittenReport, options: Pick<WriteReportOptions, 'history' | 'records'>): Promise<void> {
  const htmlOptions = options.history ? { indexHref: indexSegments(written.dir, resolve(options.history.root)) } : {};
  const firstPage = recordPageOne(report, options.records ?? (() => report.records));
  const writes: [string, string | Iterable<string>][] = [
    [written.files.json, reportJson(report)],
    [written.files.md, renderMarkdown(report)],
    [written.files.html, renderHtml(report, { ...htmlOptions, ...(firstPage ? { page: firstPage } : {}) })],
  ];
  for (const [path, content] of writes) {
    try {
      await writeFileAtomic(path, content);
    } catch (error) {
      throw cannotWrite(path, error);
    }
  }
}

/** report.html's page of records when they take more than one (writeRecordPages wrote the others). */
function recordPageOne(report: RunReport, records: () => Iterable<RecordEntry>): RecordPage | undefined {
  const total = report.records.length + (report.recordsOmitted ?? 0);
  const pages = Math.ceil(total / RECORDS_PER_PAGE);
  if (pages <= 1) return undefined;
  const first: RecordEntry[] = [];
  for (const record of records()) {
    first.push(record);
    if (first.length === RECORDS_PER_PAGE) break;
  }
  return { number: 1, pages, total, records: first };
}

/**
 * report.json: exactly `JSON.stringify(report, null, 2)` and a newline, but made a record at a
 * time. A million planned records come to more text than one JavaScript string may hold (about
 * 512 MB), so the whole text is never built.
 */
export function* reportJson(report: RunReport): Generator<string> {
  const marker = '\n  "records": []';
  const outline = JSON.stringify({ ...report, records: [] }, null, 2);
  const at = outline.indexOf(marker);
  if (report.records.length === 0 || at === -1) {
    yield `${JSON.stringify(report, null, 2)}\n`;
    return;
  }
  yield `${outline.slice(0, at)}\n  "records": [`;
  for (let i = 0; i < report.records.length; i++) {
    yield `${i === 0 ? '' : ','}\n    ${JSON.stringify(report.records[i], null, 2).replaceAll('\n', '\n    ')}`;
  }
  yield `\n  ]${outline.slice(at + marker.length)}\n`;
}

/** One JSON object a line: a million records never become one string. */
function* jsonLines(records: Iterable<RecordEntry>): Generator<string> {
  let lines: string[] = [];
  for (const record of records) {
    lines.push(JSON.stringify(record));
    // A few hundred lines a write: fewer system calls than one a line.
    if (lines.length === 500) {
      yield `${lines.join('\n')}\n`;
      lines = [];
    }
  }
  if (lines.length > 0) yield `${lines.join('\n')}\n`;
}

/**
 * Writes records/page-2.html and on when the run has more records than one page holds, each
 * built from its own slice as the records are read, and returns report.html's page (the first).
 * Undefined when every record fits on report.html, as before pages existed.
 */
async function writeRecordPages(report: RunReport, dir: string, records: () => Iterable<RecordEntry>, options: RenderHtmlOptions): Promise<RecordPage | undefined> {
  const total = report.records.length + (report.recordsOmitted ?? 0);
  const pages = Math.ceil(total / RECORDS_PER_PAGE);
  if (pages <= 1) return undefined;
  const pagesDir = join(dir, RECORD_PAGES_DIR);
  try {
    await mkdir(pagesDir, { recursive: true, mode: REPORT_DIR_MODE });
    await chmod(pagesDir, REPORT_DIR_MODE);
  } catch (error) {
    throw cannotWrite(pagesDir, error);
  }
  let first: RecordPage | undefined;
  let slice: RecordEntry[] = [];
  let number = 0;
  const flush = async () => {
    number += 1;
    const page: RecordPage = { number, pages, total, records: slice };
    slice = [];
    if (number === 1) {
      first = page;
      return;
    }
    const path = join(pagesDir, recordPageFile(number));
    try {
      await writeFileAtomic(path, renderRecordPage(report, page, options));
    } catch (error) {
      throw cannotWrite(path, error);
    }
  };
  for (const record of records()) {
    slice.push(record);
    if (slice.length === RECORDS_PER_PAGE) await flush();
  }
  if (slice.length > 0) await flush();
  return first;
}

/**
 * The history is a convenience beside the report: failing to update it (a read-only parent, a full
 * disk) is a warning, never a reason to fail a run whose report is written.
 */
async function recordHistory(report: RunReport, dir: string, options: WriteReportOptions, written: WrittenReport): Promise<void> {
  const history = options.history!;
  const root = resolve(history.root);
  try {
    await mkdir(root, { recursive: true, mode: REPORT_DIR_MODE });
    const runs = await appendHistory(root, summarizeRun(report, { root, reportDir: dir, where: whereItRan(options.env) }));
    const inside = relative(root, dir);
    const current = inside && !inside.startsWith('..') && !isAbsolute(inside) ? basename(dir) : undefined;
    const trials = new Set(runs.filter((run) => run.dryRun).map((run) => basename(run.reportDir)));
    written.pruned = await pruneReports({ root, keep: history.keep, now: history.now, ...(current ? { current } : {}), isTrial: (name) => trials.has(name) });
    written.files.index = await writeHistoryIndex(root, report.pipeline, runs, history.keep);
  } catch (error) {
    written.warnings.push(`Could not update the run history in ${root}: ${codeOf(error)}.`);
  }
}
