/**
 * Writes the reconciliation report of one run to its directory (issue 4, design § 8 and § 9):
 * report.json, report.md, report.html and, when rows were rejected, rejected.csv.
 * The directory is created 0700 and every file is 0600, because reports hold roster names and
 * emails. Each file is written to a temporary name and renamed, so a reader (or a crash) never
 * sees half a report.
 */
import { randomBytes } from 'node:crypto';
import { appendFile, chmod, mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { UserFacingError } from '../errors.js';
import { renderHtml } from './html.js';
import { renderMarkdown } from './markdown.js';
import { writeRejectedCsv } from './rejected-csv.js';
import type { RunReport } from './types.js';

export interface WriteReportOptions {
  /** Directory of this run's report; created (with parents) mode 0700 when missing. */
  dir: string;
  /**
   * Environment to read `GITHUB_STEP_SUMMARY` from (the CLI passes `ctx.io.env`). When that names a
   * file, report.md is appended to it so the summary shows on the GitHub Actions job page.
   */
  env: Readonly<Record<string, string | undefined>>;
}

export interface WrittenReport {
  /** Absolute path of the report directory. */
  dir: string;
  /** Absolute paths of the files written. `rejectedCsv` only when there were rejected rows. */
  files: { json: string; md: string; html: string; rejectedCsv?: string };
  /** The step-summary file report.md was appended to, when `GITHUB_STEP_SUMMARY` was set and writable. */
  stepSummary?: string;
  /** Problems that did not stop the report from being written (e.g. an unwritable step summary). */
  warnings: string[];
}

/** File mode of every report file: owner read/write only (design § 9). */
export const REPORT_FILE_MODE = 0o600;
/** Mode of a report directory this module creates. */
export const REPORT_DIR_MODE = 0o700;

/** A sibling temporary name for an atomic write of `path`. */
function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/**
 * Writes `content` to `path` atomically with mode 0600: a sibling temporary file, fsync, rename.
 * An existing file is replaced, and ends up 0600 whatever its previous mode.
 */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const temp = tempPathFor(path);
  const handle = await open(temp, 'wx', REPORT_FILE_MODE);
  try {
    await handle.writeFile(content, 'utf8');
    // open()'s mode is filtered by the umask; set it explicitly so it is exactly 0600.
    await handle.chmod(REPORT_FILE_MODE);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

function cannotWrite(path: string, error: unknown): UserFacingError {
  const reason = error instanceof Error && 'code' in error ? String(error.code) : String(error);
  return new UserFacingError(`Cannot write the report to ${path} (${reason}).`, {
    hint: 'Check that the directory exists or can be created and is writable, or choose another one with --report-dir.',
    cause: error,
  });
}

/** rejected.csv through `writeRejectedCsv` (formula escaping, BOM, 0600), made atomic by a rename. */
async function writeRejectedCsvAtomic(path: string, rows: RunReport['rejectedRows']): Promise<void> {
  const temp = tempPathFor(path);
  try {
    await writeRejectedCsv(temp, rows);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

export async function writeReport(report: RunReport, options: WriteReportOptions): Promise<WrittenReport> {
  const dir = resolve(options.dir);
  try {
    const created = await mkdir(dir, { recursive: true, mode: REPORT_DIR_MODE });
    // Only tighten a directory this call created; an existing directory keeps the mode its owner chose.
    if (created !== undefined) await chmod(dir, REPORT_DIR_MODE);
  } catch (error) {
    throw cannotWrite(dir, error);
  }

  const markdown = renderMarkdown(report);
  const files: WrittenReport['files'] = {
    json: join(dir, 'report.json'),
    md: join(dir, 'report.md'),
    html: join(dir, 'report.html'),
  };
  const writes: [string, string][] = [
    [files.json, `${JSON.stringify(report, null, 2)}\n`],
    [files.md, markdown],
    [files.html, renderHtml(report)],
  ];
  for (const [path, content] of writes) {
    try {
      await writeFileAtomic(path, content);
    } catch (error) {
      throw cannotWrite(path, error);
    }
  }
  if (report.rejectedRows.length > 0) {
    const path = join(dir, 'rejected.csv');
    try {
      await writeRejectedCsvAtomic(path, report.rejectedRows);
      files.rejectedCsv = path;
    } catch (error) {
      throw cannotWrite(path, error);
    }
  }

  const written: WrittenReport = { dir, files, warnings: [] };
  const stepSummary = options.env.GITHUB_STEP_SUMMARY;
  if (stepSummary) {
    // The runner owns this file (it exists, shared by every step): append, never replace or chmod it.
    try {
      await appendFile(stepSummary, `${markdown}\n`, 'utf8');
      written.stepSummary = stepSummary;
    } catch (error) {
      const reason = error instanceof Error && 'code' in error ? String(error.code) : String(error);
      written.warnings.push(`Could not append the summary to GITHUB_STEP_SUMMARY (${stepSummary}): ${reason}.`);
    }
  }
  return written;
}
