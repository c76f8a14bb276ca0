/**
 * `policy.rejects`: how many rejected roster rows a run tolerates before it exits 2. A nightly
 * job with a few known-bad legacy rows stays green (exit 0, outcome `warning`) while its report
 * and rejected.csv still list every one; a flood of rejects still turns it red.
 */
import type { RejectsPolicy } from '../config/pipeline.js';
import type { RosterCounts } from '../mapping/roster.js';

export interface RejectsVerdict {
  tolerated: boolean;
  /** The sentence the report carries, e.g. `3 rows rejected (1.5% of 200), within policy.rejects (at most 5 rows, 2%)`. */
  text: string;
}

export function judgeRejects(counts: Pick<RosterCounts, 'rowsRead' | 'rejected' | 'filtered'>, policy: RejectsPolicy | undefined): RejectsVerdict {
  const rejected = counts.rejected;
  // Filtered rows were left out on purpose: they are not part of what could have been synced.
  const considered = Math.max(counts.rowsRead - counts.filtered, rejected);
  const percent = considered === 0 ? 0 : (rejected / considered) * 100;
  const rows = `${rejected} row${rejected === 1 ? '' : 's'} rejected`;
  if (!policy) return { tolerated: false, text: `${rows} and not synced` };
  const limits = [
    policy.max_count !== undefined ? `at most ${policy.max_count} row${policy.max_count === 1 ? '' : 's'}` : undefined,
    policy.max_percent !== undefined ? `${policy.max_percent}%` : undefined,
  ].filter(Boolean).join(', ');
  const tolerated = (policy.max_count === undefined || rejected <= policy.max_count) && (policy.max_percent === undefined || percent <= policy.max_percent);
  return {
    tolerated,
    text: `${rows} (${Number(percent.toFixed(2))}% of ${considered}), ${tolerated ? 'within' : 'over'} the tolerance of policy.rejects (${limits}), not synced`,
  };
}
