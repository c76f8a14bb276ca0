/**
 * A run's report must reach someone even when its directory cannot be written (a read-only mount,
 * a permission, a full disk): the writes it made are already in the service, so exiting with
 * "cannot write the report" would hide them. The report then goes to a fallback directory under
 * the system's temporary directory, and the run names it (`warnings`) on the console.
 */
import { tmpdir, userInfo } from 'node:os';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';
import { fileSystemProblem } from '../errors/file-system-problem.js';
import { ownFolderInSharedPlace } from '../personal-data/private-dir.js';
import { ACTIONS, countOf } from './format.js';
import type { RunReport } from './types.js';
import { writeReport, type WriteReportOptions, type WrittenReport } from './write.js';

export interface FallbackOptions {
  /** Where the fallback report goes: `<root>/<pipeline>/<run id>`. @default `<os tmpdir>/rostersync-reports-<uid>` */
  fallbackRoot?: string;
}

/**
 * One fallback folder per user (`rostersync-reports-<uid>`): a single shared path would belong to
 * whoever created it first (mode 0700), and every other user's fallback would then fail.
 */
export function defaultFallbackRoot(): string {
  const uid = process.getuid?.();
  const user = uid !== undefined ? String(uid) : segment(userInfo().username);
  return join(tmpdir(), `rostersync-reports-${user}`);
}

/** Why a write failed, in words when it is a file-system problem. */
function reason(error: unknown): string {
  const problem = fileSystemProblem(error);
  if (problem) return `${problem.words} (${problem.code})`;
  return error instanceof Error ? error.message : String(error);
}

/** One folder name from free text (a pipeline name), never a path. */
function segment(text: string): string {
  return text.replace(/[^\w.-]+/g, '_').replace(/^\.+/, '_').slice(0, 100) || '_';
}

/** "3 created, 1 updated, 0 deleted": what the run did, for a message that must stand on its own. */
export function writesDone(report: RunReport): string {
  const done = (action: (typeof ACTIONS)[number]) => countOf(report, action, 'done');
  return `${done('create')} created, ${done('update')} updated, ${done('delete')} deleted`;
}

/** The fallback folder of a run's report. */
function fallbackDir(report: RunReport, options: FallbackOptions): { root: string; dir: string } {
  const root = options.fallbackRoot ?? defaultFallbackRoot();
  return { root, dir: join(root, segment(report.pipeline), segment(report.runId)) };
}

/**
 * Where the report will go, told before it is written: the run's alerts are sent first (so their
 * outcome is in the report) and must name the folder the report really lands in. `dir` when its
 * nearest existing folder is a directory this process may write, else the fallback folder, with
 * the reason; pass the answer on to writeReportOrFallback, which then goes straight there.
 */
export async function reportDestination(report: RunReport, options: Pick<WriteReportOptions, 'dir'> & FallbackOptions): Promise<{ dir: string; unwritable?: string }> {
  const wanted = resolve(options.dir);
  try {
    // The nearest folder that exists: the report's folder (and any parents) is created in it.
    let path = wanted;
    while (!(await exists(path))) path = dirname(path);
    if (!(await stat(path)).isDirectory()) throw Object.assign(new Error(`${path} is not a directory`), { code: 'ENOTDIR' });
    await access(path, constants.W_OK | constants.X_OK);
    return { dir: wanted };
  } catch (error) {
    return { dir: fallbackDir(report, options).dir, unwritable: reason(error) };
  }
}

/** false when absent; any other problem (a file in the path, a permission) is thrown. */
async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

export async function writeReportOrFallback(report: RunReport, options: WriteReportOptions & FallbackOptions & { unwritable?: string }): Promise<WrittenReport> {
  // Known unwritable beforehand (reportDestination): the alerts already named the fallback folder.
  let primaryReason = options.unwritable;
  if (primaryReason === undefined) {
    try {
      return await writeReport(report, options);
    } catch (primary) {
      primaryReason = reason(primary);
    }
  }
  const { root, dir } = fallbackDir(report, options);
  try {
    // The default root is in the shared temporary folder: used only if it is a folder of this user
    // that no one else can open, so roster names never land in a folder another user prepared.
    if (options.fallbackRoot === undefined) await ownFolderInSharedPlace(root, { closed: true });
    // No run history in the fallback place: it is not the pipeline's report folder.
    const written = await writeReport(report, { dir, env: options.env, ...(options.rejectedCsv ? { rejectedCsv: options.rejectedCsv } : {}), ...(options.records ? { records: options.records } : {}) });
    written.warnings.unshift(`Could not write the report to ${options.dir}: ${primaryReason}. It was written to ${written.dir} instead.`);
    return written;
  } catch (fallback) {
    const anyWrites = ACTIONS.some((action) => action !== 'noop' && countOf(report, action, 'done') > 0);
    throw new UserFacingError(
      `The run finished (${report.outcome}, ${writesDone(report)}) but its report could not be written: ` +
        `${options.dir}: ${primaryReason}; fallback ${dir}: ${reason(fallback)}.`,
      {
        hint: 'Free some disk space or make a report directory writable (--report-dir DIR); the next run reports the state again. Nothing is lost: the state journal holds every write.',
        exitCode: anyWrites ? EXIT.failedAfterWrites : EXIT.usage,
        cause: fallback,
      },
    );
  }
}
