/**
 * Retention of report folders (docs/security-and-personal-data.md): report folders hold roster names and emails,
 * so old ones are deleted after each run, as `policy.reports.keep` says — a number of runs
 * (`30`), a number of days (`"90d"`), or `"all"` to keep everything.
 *
 * Only folders this tool made are ever deleted: direct children of the pipeline's report root whose
 * name is a run id and that hold a report.json. A folder chosen with `--report-dir` outside that
 * root is never touched, and the newest run is always kept.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

export type KeepPolicy = { runs: number } | { days: number } | 'all';

/** Run ids (sync/run-id.ts) start with the UTC start time: `20261123T031500Z-4f2a`. */
const RUN_ID = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-[0-9a-f]{4,}$/;

/** The start time a run id encodes, or undefined when the name is not a run id. */
export function runIdTime(name: string): number | undefined {
  const match = RUN_ID.exec(name);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
}

/**
 * `30` → 30 runs, `"90d"` → 90 days, `"all"` → never prune. The config schema accepts exactly
 * these shapes, so a bad value is reported there with its path; this throws only on misuse.
 */
export function parseKeep(value: number | string): KeepPolicy {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1) return { runs: value };
  if (value === 'all') return 'all';
  const days = typeof value === 'string' ? /^(\d+)d$/.exec(value.trim()) : null;
  if (days && Number(days[1]) >= 1) return { days: Number(days[1]) };
  throw new RangeError(`policy.reports.keep must be a number of runs (e.g. 30), a number of days (e.g. "90d") or "all", got ${JSON.stringify(value)}`);
}

export function describeKeep(keep: KeepPolicy): string {
  if (keep === 'all') return 'every report is kept';
  return 'runs' in keep ? `the reports of the last ${keep.runs} run(s) are kept` : `reports of the last ${keep.days} day(s) are kept`;
}

export interface PruneInput {
  /** The pipeline's report root, `<report_dir>/<pipeline>`. */
  root: string;
  keep: KeepPolicy;
  now: number;
  /** The run being recorded: never pruned, whatever its age. */
  current?: string;
  /**
   * Whether a run (by folder name) was a plan or a dry run, from the run history: those are pruned
   * apart, so a day of plans never pushes a real sync's report out (nor the reverse).
   */
  isTrial?: (name: string) => boolean;
}

/** Deletes the report folders past the policy; returns the names removed, oldest first. */
export async function pruneReports(input: PruneInput): Promise<string[]> {
  if (input.keep === 'all') return [];
  let names: string[];
  try {
    names = await readdir(input.root);
  } catch {
    return [];
  }
  const runs: { name: string; time: number; written: number }[] = [];
  for (const name of names) {
    const time = runIdTime(name);
    if (time === undefined) continue;
    const report = await stat(join(input.root, name, 'report.json')).catch(() => undefined);
    if (report?.isFile()) runs.push({ name, time, written: report.mtimeMs });
  }
  // Newest first. A run id holds its start time to the second and then a random suffix, so runs
  // started in the same second (a dry run, then the real one) go by when their report was written.
  runs.sort((a, b) => b.time - a.time || b.written - a.written || b.name.localeCompare(a.name));
  const keep = input.keep;
  const isTrial = input.isTrial ?? (() => false);
  const doomed = [runs.filter((run) => !isTrial(run.name)), runs.filter((run) => isTrial(run.name))].flatMap((group) =>
    group.filter((run, index) => {
      if (index === 0 || run.name === input.current) return false;
      return 'runs' in keep ? index >= keep.runs : run.time < input.now - keep.days * 86_400_000;
    }),
  );
  doomed.sort((a, b) => b.time - a.time || b.written - a.written);
  const removed: string[] = [];
  for (const run of doomed.reverse()) {
    await rm(join(input.root, run.name), { recursive: true, force: true });
    removed.push(run.name);
  }
  return removed;
}
