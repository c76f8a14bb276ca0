/**
 * Writes the metrics file at the end of every run (`--metrics-file`, `metrics.file`): the run's
 * series replace the pipeline's previous ones, other pipelines' series in the same file are kept,
 * and the file is replaced atomically (a scrape never sees half of it). Two values are carried from
 * run to run: the last successful run's end and the runs counter. A metrics file that cannot be
 * written never changes the run's outcome: the problem comes back as a warning for the report.
 */
import { readFile } from 'node:fs/promises';
import { fileSystemProblem } from '../errors/file-system-problem.js';
import { writeFileAtomic } from '../report/atomic-file.js';
import type { RunReport } from '../report/types.js';
import { FAMILIES, LAST_SUCCESS, RUNS_TOTAL, runSeries, type Sample } from './series.js';
import { readSamples, renderFamilies } from './text-format.js';

/** Readable by node_exporter's user: the file holds counts and pipeline names, no personal data. */
export const METRICS_FILE_MODE = 0o644;
/** A metrics file larger than this is not one rostersync wrote (a few KB per pipeline). */
const MAX_PREVIOUS_BYTES = 4 * 1024 * 1024;

export interface MetricsTarget {
  /** Absolute path of the metrics file. */
  path: string;
  /** The last successful run's end (epoch ms) when the file has none (from the state's run history). */
  lastSuccessFallback?: (() => number | undefined) | undefined;
}

// Pipelines of one `sync a.yaml b.yaml` may share a file: their writes take turns.
const queues = new Map<string, Promise<unknown>>();

/** Writes the run's series; resolves to the warnings (empty when written). */
export function writeRunMetrics(target: MetricsTarget, report: RunReport): Promise<string[]> {
  const previous = queues.get(target.path) ?? Promise.resolve();
  const turn = previous.then(() => writeNow(target, report));
  const settled = turn.catch(() => undefined);
  queues.set(target.path, settled);
  void settled.then(() => {
    if (queues.get(target.path) === settled) queues.delete(target.path);
  });
  return turn;
}

async function writeNow(target: MetricsTarget, report: RunReport): Promise<string[]> {
  const read = await readPrevious(target.path);
  if ('refusal' in read) return [read.refusal];
  const mine = (s: Sample) => s.labels['pipeline'] === report.pipeline;
  const own = read.samples.filter(mine);
  const lastSuccess = own.find((s) => s.name === LAST_SUCCESS)?.value ?? fallbackSeconds(target);
  const runsBefore = new Map(own.filter((s) => s.name === RUNS_TOTAL).map((s) => [s.labels['outcome'] ?? '', s.value]));
  const series = runSeries(report, { ...(lastSuccess !== undefined ? { lastSuccessSeconds: lastSuccess } : {}), runsBefore });
  const kept = read.samples.filter((s) => !mine(s) && FAMILIES.some((f) => f.name === s.name));
  try {
    await writeFileAtomic(target.path, renderFamilies(FAMILIES, [...kept, ...series]), METRICS_FILE_MODE);
    return [];
  } catch (error) {
    const problem = fileSystemProblem(error);
    if (!problem) throw error;
    return [`The metrics file ${target.path} could not be written: ${problem.words} (${problem.code}). Create its folder or give --metrics-file a writable path; the run itself is unaffected.`];
  }
}

function fallbackSeconds(target: MetricsTarget): number | undefined {
  const ms = target.lastSuccessFallback?.();
  return ms === undefined || Number.isNaN(ms) ? undefined : ms / 1000;
}

/**
 * The previous file's samples. A file rostersync cannot read back (edited by hand, another
 * program's) is left as it is, with the reason: replacing it would drop what it holds.
 */
async function readPrevious(path: string): Promise<{ samples: Sample[] } | { refusal: string }> {
  let text: string;
  try {
    const bytes = await readFile(path);
    if (bytes.length > MAX_PREVIOUS_BYTES) return { refusal: notReplaced(path, `it is ${bytes.length} bytes, more than a metrics file rostersync writes`) };
    text = bytes.toString('utf8');
  } catch (error) {
    const problem = fileSystemProblem(error);
    if (problem?.code === 'ENOENT') return { samples: [] };
    if (!problem) throw error;
    return { refusal: `The metrics file ${path} could not be read: ${problem.words} (${problem.code}); it was not replaced. Fix its permissions or give --metrics-file another path.` };
  }
  const { samples, unreadable } = readSamples(text);
  if (unreadable > 0) return { refusal: notReplaced(path, `${unreadable} of its lines are not samples rostersync wrote`) };
  return { samples };
}

function notReplaced(path: string, why: string): string {
  return `The metrics file ${path} was not replaced: ${why}. Give each program its own file in the textfile collector's folder (e.g. rostersync.prom), or move this one away.`;
}
