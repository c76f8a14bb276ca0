/**
 * Safety guards. They run in dry runs exactly as in real runs, and
 * a tripped guard refuses the whole run, saying which flag would allow it.
 */
import type { PolicyConfig, RejectsPolicy } from '../config/pipeline.js';
import type { RosterCounts } from '../mapping/roster.js';
import { judgeRejects } from './rejects-tolerance.js';
import type { IdentityChange } from './identity-changes.js';
import type { GuardResult } from './types.js';
import { personal } from '../personal-data/personal-text.js';

export interface GuardInput {
  guards: PolicyConfig['guards'];
  deletes: number;
  ownedCount: number;
  validCount: number;
  /** Valid records of the last successful real run, when there is one. */
  previousValidCount: number | null;
  /** The target group is known but the inventory is empty: deletions cannot be computed. */
  inventoryMissing: boolean;
  /** Rejected rows whose client_id could not be read: any of them may be an owned record. */
  unidentifiedRejected?: number;
  /** Owned records whose roster row now describes someone else (plan/identity-changes.ts). */
  identityChanges?: readonly IdentityChange[];
  /**
   * Owned records that reappear under another client_id (same ORCID or email: a changed prefix,
   * say), in upsert mode, where the old record stays: the group would hold each person twice.
   */
  upsertClientIdChanges?: readonly { from: string; to: string }[];
  /** The roster's counts, for `policy.rejects`: a ceiling checked before anything is written. */
  rosterCounts?: Pick<RosterCounts, 'rowsRead' | 'rejected' | 'filtered'>;
  rejects?: RejectsPolicy;
  allow: { deletes?: number; sourceDrop?: boolean; emptySource?: boolean; identityChanges?: number; rejects?: number };
}

/** What the run was told to let through (`--allow-deletes N`, `--allow-source-drop`, ...). */
export type GuardAllowances = GuardInput['allow'];

/**
 * The guards' facts about a run, all but the deletes (which the plan counts). An inventory is
 * missing when the group is known but nothing is owned: deletions cannot be computed.
 */
export function guardInputOf(facts: {
  ownedCount: number;
  validCount: number;
  previousValidCount: number | null;
  groupKnown: boolean;
  unidentifiedRejected: number;
  identityChanges: readonly IdentityChange[];
  rosterCounts: Pick<RosterCounts, 'rowsRead' | 'rejected' | 'filtered'>;
  allow: GuardAllowances;
}): Omit<GuardInput, 'deletes' | 'guards'> {
  return {
    ownedCount: facts.ownedCount,
    validCount: facts.validCount,
    previousValidCount: facts.previousValidCount,
    inventoryMissing: facts.groupKnown && facts.ownedCount === 0,
    unidentifiedRejected: facts.unidentifiedRejected,
    identityChanges: facts.identityChanges,
    rosterCounts: { rowsRead: facts.rosterCounts.rowsRead, rejected: facts.rosterCounts.rejected, filtered: facts.rosterCounts.filtered },
    allow: facts.allow,
  };
}

/**
 * The delete limit is the lower of the count and the percentage of owned records, but never
 * below one, so a small group can still lose a single member without a flag.
 */
export function deleteLimit(guards: PolicyConfig['guards'], ownedCount: number): number {
  const byPercent = Math.max(1, Math.floor((ownedCount * guards.max_delete_percent) / 100));
  return Math.min(guards.max_deletes, byPercent);
}

export function evaluateGuards(input: GuardInput): GuardResult[] {
  const results: GuardResult[] = [];
  const { guards, deletes, validCount, previousValidCount, allow } = input;

  if (validCount === 0 && (input.ownedCount > 0 || (previousValidCount ?? 0) > 0)) {
    const allowed = allow.emptySource === true && (allow.deletes ?? 0) >= deletes;
    results.push({
      guard: 'empty_source',
      tripped: !allowed,
      message: `the source has no valid records while the pipeline owns ${input.ownedCount}; an empty or unreadable source never deletes anything.`,
      allowWith: `--allow-empty-source --allow-deletes ${deletes}`,
    });
  }

  const limit = deleteLimit(guards, input.ownedCount);
  if (deletes > limit) {
    const allowed = (allow.deletes ?? 0) >= deletes;
    results.push({
      guard: 'max_deletes',
      tripped: !allowed,
      message: `${deletes} deletes planned, above the limit of ${limit} (max_deletes ${guards.max_deletes} or ${guards.max_delete_percent}% of ${input.ownedCount} owned records, whichever is lower).`,
      allowWith: `--allow-deletes ${deletes}`,
    });
  }

  // A row whose id cannot be read (an unreadable line, a missing or invalid id) may belong to an
  // owned record, which would then look gone from the roster. Deleting on such a roster needs a flag.
  const unidentified = input.unidentifiedRejected ?? 0;
  if (unidentified > 0 && deletes > 0) {
    results.push({
      guard: 'unreadable_rows',
      tripped: (allow.deletes ?? 0) < deletes,
      message: `${unidentified} rejected row${unidentified === 1 ? ' has' : 's have'} no readable client_id, so ${deletes} planned delete${deletes === 1 ? '' : 's'} may hit people still in the roster. Fix those rows first (see rejected.csv).`,
      allowWith: `--allow-deletes ${deletes}`,
    });
  }

  if (previousValidCount !== null && previousValidCount > 0 && validCount > 0) {
    const dropPercent = ((previousValidCount - validCount) / previousValidCount) * 100;
    if (dropPercent > guards.max_source_drop_percent) {
      results.push({
        guard: 'source_drop',
        tripped: allow.sourceDrop !== true,
        message: `the source has ${validCount} valid records, ${dropPercent.toFixed(1)}% fewer than the ${previousValidCount} of the last successful run (limit ${guards.max_source_drop_percent}%). Is the file truncated?`,
        allowWith: '--allow-source-drop',
      });
    }
  }

  // A roster that reuses the ids for other people would rewrite records as someone else, leaving
  // editor-set fields (a conflict of interest) on the wrong person.
  const identityChanges = input.identityChanges ?? [];
  const identityLimit = Math.min(guards.max_identity_changes, Math.max(1, Math.floor((input.ownedCount * guards.max_identity_change_percent) / 100)));
  if (identityChanges.length > identityLimit) {
    const examples = identityChanges.slice(0, 5).map((c) => `${c.clientId}: "${personal(c.before)}" → "${personal(c.after)}"`).join('; ');
    results.push({
      guard: 'identity_changes',
      tripped: (allow.identityChanges ?? 0) < identityChanges.length,
      message: `${identityChanges.length} owned records would become other people (name changed, no email or ORCID kept), above the limit of ${identityLimit} (max_identity_changes ${guards.max_identity_changes} or ${guards.max_identity_change_percent}% of ${input.ownedCount} owned records, whichever is lower). Is this roster from another system that reuses the ids? For example ${examples}.`,
      allowWith: `--allow-identity-changes ${identityChanges.length}`,
    });
  }

  // The same people under new ids: in mirror mode the old records are deleted (and the delete
  // guard counts them); in upsert mode they stay, so every such person would be in the group twice.
  const renamed = input.upsertClientIdChanges ?? [];
  if (renamed.length > identityLimit) {
    const examples = renamed.slice(0, 5).map((c) => `${c.from} → ${c.to}`).join('; ');
    results.push({
      guard: 'identity_changes',
      tripped: (allow.identityChanges ?? 0) < renamed.length,
      message: `${renamed.length} owned records reappear under new client_ids (same ORCID or email), above the limit of ${identityLimit}: in upsert mode the old records stay, so the group would hold each of these people twice. Did the client_id (its prefix, say) change? For example ${examples}. To rename the records, run in mode: mirror with --allow-deletes, which deletes the old ones.`,
      allowWith: `--allow-identity-changes ${renamed.length}`,
    });
  }

  // policy.rejects is a ceiling: a roster that broken writes nothing (Data Loader's and Census's
  // error limits stop the job too), unless --allow-rejects N lets this many through.
  const rejected = input.rosterCounts?.rejected ?? 0;
  if (input.rejects !== undefined && rejected > 0) {
    const judged = judgeRejects(input.rosterCounts!, input.rejects);
    if (!judged.tolerated) {
      results.push({
        guard: 'rejects',
        tripped: (allow.rejects ?? 0) < rejected,
        message: `${judged.text.replace(/, not synced$/, '')}; nothing is written over it. Fix the rows listed in rejected.csv, or raise policy.rejects.`,
        allowWith: `--allow-rejects ${rejected}`,
      });
    }
  }

  if (input.inventoryMissing) {
    results.push({
      guard: 'inventory_missing',
      tripped: false,
      message: 'the target group is known but this pipeline owns no records in its state: deletions cannot be computed. Records of the roster that already exist in the group are adopted (create-if-absent, managed fields only); adopt others by id with `rostersync state import`.',
    });
  }
  return results;
}
