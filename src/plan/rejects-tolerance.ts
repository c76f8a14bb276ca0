/**
 * `policy.rejects`: how many rejected roster rows a run tolerates before it exits 2. A nightly
 * job with a few known-bad legacy rows stays green (exit 0, outcome `warning`) while its report
 * and rejected.csv still list every one; a flood of rejects still turns it red. The figures only:
 * report/run-notes.ts (`rejectsVerdict`) puts them in words.
 */
import type { RejectsPolicy } from '../config/pipeline.js';
import type { RosterCounts } from '../mapping/roster.js';

export interface RejectsJudgement {
  tolerated: boolean;
  rejected: number;
  /** Rows that could have been synced: read, less those filtered out on purpose. */
  considered: number;
  /** `rejected` as a percentage of `considered`. */
  percent: number;
  /** The tolerance judged against; none: no rejected row is tolerated. */
  policy: RejectsPolicy | undefined;
}

export function judgeRejects(counts: Pick<RosterCounts, 'rowsRead' | 'rejected' | 'filtered'>, policy: RejectsPolicy | undefined): RejectsJudgement {
  const rejected = counts.rejected;
  // Filtered rows were left out on purpose: they are not part of what could have been synced.
  const considered = Math.max(counts.rowsRead - counts.filtered, rejected);
  const percent = considered === 0 ? 0 : (rejected / considered) * 100;
  const tolerated =
    policy !== undefined && (policy.max_count === undefined || rejected <= policy.max_count) && (policy.max_percent === undefined || percent <= policy.max_percent);
  return { tolerated, rejected, considered, percent, policy };
}
