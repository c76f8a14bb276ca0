/**
 * Safety guards. They run in dry runs exactly as in real runs, and
 * a tripped guard refuses the whole run, saying which flag would allow it.
 */
import type { PolicyConfig, RejectsPolicy } from '../config/pipeline.js';
import type { RosterCounts } from '../mapping/roster.js';
import { judgeRejects } from './rejects-tolerance.js';
import type { IdentityChange } from './identity-changes.js';
import type { GuardResult } from './types.js';

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
  const owned = input.ownedCount;

  if (validCount === 0 && (owned > 0 || (previousValidCount ?? 0) > 0)) {
    const allowed = allow.emptySource === true && (allow.deletes ?? 0) >= deletes;
    results.push({ guard: 'empty_source', tripped: !allowed, found: { code: 'empty_source', owned }, allowWith: `--allow-empty-source --allow-deletes ${deletes}` });
  }

  const limit = deleteLimit(guards, owned);
  if (deletes > limit) {
    results.push({
      guard: 'max_deletes',
      tripped: (allow.deletes ?? 0) < deletes,
      found: { code: 'max_deletes', deletes, limit, maxDeletes: guards.max_deletes, maxDeletePercent: guards.max_delete_percent, owned },
      allowWith: `--allow-deletes ${deletes}`,
    });
  }

  // A row whose id cannot be read (an unreadable line, a missing or invalid id) may belong to an
  // owned record, which would then look gone from the roster. Deleting on such a roster needs a flag.
  const unidentified = input.unidentifiedRejected ?? 0;
  if (unidentified > 0 && deletes > 0) {
    results.push({ guard: 'unreadable_rows', tripped: (allow.deletes ?? 0) < deletes, found: { code: 'unreadable_rows', unidentified, deletes }, allowWith: `--allow-deletes ${deletes}` });
  }

  if (previousValidCount !== null && previousValidCount > 0 && validCount > 0) {
    const dropPercent = ((previousValidCount - validCount) / previousValidCount) * 100;
    if (dropPercent > guards.max_source_drop_percent) {
      results.push({
        guard: 'source_drop',
        tripped: allow.sourceDrop !== true,
        found: { code: 'source_drop', valid: validCount, previousValid: previousValidCount, dropPercent, maxDropPercent: guards.max_source_drop_percent },
        allowWith: '--allow-source-drop',
      });
    }
  }

  // A roster that reuses the ids for other people would rewrite records as someone else, leaving
  // editor-set fields (a conflict of interest) on the wrong person.
  const identityChanges = input.identityChanges ?? [];
  const identityLimit = Math.min(guards.max_identity_changes, Math.max(1, Math.floor((owned * guards.max_identity_change_percent) / 100)));
  if (identityChanges.length > identityLimit) {
    results.push({
      guard: 'identity_changes',
      tripped: (allow.identityChanges ?? 0) < identityChanges.length,
      found: {
        code: 'identity_changes',
        changes: identityChanges.length,
        limit: identityLimit,
        maxChanges: guards.max_identity_changes,
        maxChangePercent: guards.max_identity_change_percent,
        owned,
        examples: identityChanges.slice(0, GUARD_EXAMPLES).map(({ clientId, before, after }) => ({ clientId, before, after })),
      },
      allowWith: `--allow-identity-changes ${identityChanges.length}`,
    });
  }

  // The same people under new ids: in mirror mode the old records are deleted (and the delete
  // guard counts them); in upsert mode they stay, so every such person would be in the group twice.
  const renamed = input.upsertClientIdChanges ?? [];
  if (renamed.length > identityLimit) {
    results.push({
      guard: 'identity_changes',
      tripped: (allow.identityChanges ?? 0) < renamed.length,
      found: { code: 'client_ids_changed', changes: renamed.length, limit: identityLimit, examples: renamed.slice(0, GUARD_EXAMPLES).map(({ from, to }) => ({ from, to })) },
      allowWith: `--allow-identity-changes ${renamed.length}`,
    });
  }

  // policy.rejects is a ceiling: a roster that broken writes nothing (Data Loader's and Census's
  // error limits stop the job too), unless --allow-rejects N lets this many through.
  const rejected = input.rosterCounts?.rejected ?? 0;
  if (input.rejects !== undefined && rejected > 0) {
    const judged = judgeRejects(input.rosterCounts!, input.rejects);
    if (!judged.tolerated) {
      const { max_count: maxCount, max_percent: maxPercent } = input.rejects;
      results.push({
        guard: 'rejects',
        tripped: (allow.rejects ?? 0) < rejected,
        found: { code: 'rejects', rejected, considered: judged.considered, percent: judged.percent, ...(maxCount !== undefined ? { maxCount } : {}), ...(maxPercent !== undefined ? { maxPercent } : {}) },
        allowWith: `--allow-rejects ${rejected}`,
      });
    }
  }

  if (input.inventoryMissing) results.push({ guard: 'inventory_missing', tripped: false, found: { code: 'inventory_missing' } });
  return results;
}

/** Examples a guard keeps of what tripped it (the identity guards). */
const GUARD_EXAMPLES = 5;
