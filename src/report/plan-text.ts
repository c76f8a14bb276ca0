/**
 * The sentences of what the plan found: its guards' findings and its notes carry codes and
 * figures (plan/types.ts), put in words here for every rendering alike (console, report.md,
 * report.html, report.json, alerts, review comments).
 */
import { personal } from '../personal-data/personal-text.js';
import type { RejectsJudgement } from '../plan/rejects-tolerance.js';
import type { GuardFinding, GuardResult, PlanNote } from '../plan/types.js';
import type { ReportedGuard } from './types.js';

export function reportedGuard(result: GuardResult): ReportedGuard {
  return { guard: result.guard, code: result.found.code, tripped: result.tripped, message: guardMessage(result.found), ...(result.allowWith !== undefined ? { allowWith: result.allowWith } : {}) };
}

/** The message of a run the guards refused: each tripped guard, what it found and the flag that allows it. */
export function refusalMessage(guards: readonly GuardResult[]): string {
  return guards
    .filter((g) => g.tripped)
    .map((g) => `${g.guard}: ${guardMessage(g.found)} Allow with ${g.allowWith}.`)
    .join(' ');
}

const plural = (count: number, one: string, many: string): string => (count === 1 ? one : many);

export function guardMessage(found: GuardFinding): string {
  switch (found.code) {
    case 'empty_source':
      return `the source has no valid records while the pipeline owns ${found.owned}; an empty or unreadable source never deletes anything.`;
    case 'max_deletes':
      return `${found.deletes} deletes planned, above the limit of ${found.limit} (max_deletes ${found.maxDeletes} or ${found.maxDeletePercent}% of ${found.owned} owned records, whichever is lower).`;
    case 'unreadable_rows':
      return `${found.unidentified} rejected ${plural(found.unidentified, 'row has', 'rows have')} no readable client_id, so ${found.deletes} planned ${plural(found.deletes, 'delete', 'deletes')} may hit people still in the roster. Fix those rows first (see rejected.csv).`;
    case 'source_drop':
      return `the source has ${found.valid} valid records, ${found.dropPercent.toFixed(1)}% fewer than the ${found.previousValid} of the last successful run (limit ${found.maxDropPercent}%). Is the file truncated?`;
    case 'identity_changes': {
      // Names are personal: marked, so --mask and the alerts take them out (report/mask.ts).
      const examples = found.examples.map((c) => `${c.clientId}: "${personal(c.before)}" → "${personal(c.after)}"`).join('; ');
      return `${found.changes} owned records would become other people (name changed, no email or ORCID kept), above the limit of ${found.limit} (max_identity_changes ${found.maxChanges} or ${found.maxChangePercent}% of ${found.owned} owned records, whichever is lower). Is this roster from another system that reuses the ids? For example ${examples}.`;
    }
    case 'client_ids_changed': {
      const examples = found.examples.map((c) => `${c.from} → ${c.to}`).join('; ');
      return `${found.changes} owned records reappear under new client_ids (same ORCID or email), above the limit of ${found.limit}: in upsert mode the old records stay, so the group would hold each of these people twice. Did the client_id (its prefix, say) change? For example ${examples}. To rename the records, run in mode: mirror with --allow-deletes, which deletes the old ones.`;
    }
    case 'rejects':
      return `${rejectedFigures(found.rejected, found.considered, found.percent)}, over the tolerance of policy.rejects (${rejectsLimits(found.maxCount, found.maxPercent)}); nothing is written over it. Fix the rows listed in rejected.csv, or raise policy.rejects.`;
    case 'inventory_missing':
      return 'the target group is known but this pipeline owns no records in its state: deletions cannot be computed. Records of the roster that already exist in the group are adopted (create-if-absent, managed fields only); adopt others by id with `rostersync state import`.';
  }
}

export function planNoteText(note: PlanNote): string {
  switch (note.code) {
    case 'client_id_changed':
      return `client_id changed: ${note.from} → ${note.to} (same ${note.sameBy}); planned as ${note.deleted ? 'a delete plus a create' : 'a create, the old record stays as an orphan'}.`;
  }
}

/** Rejected rows judged against policy.rejects, in words, e.g. `3 rows rejected (1.5% of 200), within the tolerance of policy.rejects (at most 5 rows, 2%), not synced`. */
export interface RejectsVerdict {
  tolerated: boolean;
  text: string;
}

export function rejectsVerdict(judged: RejectsJudgement): RejectsVerdict {
  const { policy } = judged;
  if (!policy) return { tolerated: false, text: `${rejectedRows(judged.rejected)} and not synced` };
  const figures = rejectedFigures(judged.rejected, judged.considered, judged.percent);
  return { tolerated: judged.tolerated, text: `${figures}, ${judged.tolerated ? 'within' : 'over'} the tolerance of policy.rejects (${rejectsLimits(policy.max_count, policy.max_percent)}), not synced` };
}

const rejectedRows = (rejected: number): string => `${rejected} ${plural(rejected, 'row', 'rows')} rejected`;

function rejectedFigures(rejected: number, considered: number, percent: number): string {
  return `${rejectedRows(rejected)} (${Number(percent.toFixed(2))}% of ${considered})`;
}

function rejectsLimits(maxCount: number | undefined, maxPercent: number | undefined): string {
  return [maxCount !== undefined ? `at most ${maxCount} ${plural(maxCount, 'row', 'rows')}` : undefined, maxPercent !== undefined ? `${maxPercent}%` : undefined].filter(Boolean).join(', ');
}
