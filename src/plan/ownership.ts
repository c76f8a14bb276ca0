/**
 * One owner per record, decided from the claims and the declared prefixes (pure): a roster row
 * whose client_id another pipeline sharing the group claims, or that lies outside this pipeline's
 * client_id prefixes, is neither written nor (being in the roster) deleted; an owned record
 * another pipeline also claims (a state shared by mistake) is never deleted here.
 */
import { withinPrefixes } from '../state/sharing.js';

/** Why this pipeline leaves a record alone: another pipeline claims it, or its client_id is outside this pipeline's prefixes. */
export type ForeignReason = { code: 'claimed'; owner: string } | { code: 'outside_prefixes'; prefixes: readonly string[] };

/** Why this pipeline leaves a roster row's record alone; undefined when the record is its own. */
export function foreignReason(clientId: string, claimedBy: string | undefined, pipeline: string, prefixes: readonly string[] | null): ForeignReason | undefined {
  if (claimedBy !== undefined && claimedBy !== pipeline) return { code: 'claimed', owner: claimedBy };
  if (prefixes !== null && !withinPrefixes(clientId, prefixes)) return { code: 'outside_prefixes', prefixes };
  return undefined;
}

/** The missing records this pipeline may delete; those another pipeline claims go to `foreign`. */
export function ownMissing(missing: readonly string[], claimedBy: ReadonlyMap<string, string>, pipeline: string, foreign: Map<string, ForeignReason>): string[] {
  return missing.filter((clientId) => {
    const owner = claimedBy.get(clientId);
    if (owner === undefined || owner === pipeline) return true;
    foreign.set(clientId, { code: 'claimed', owner });
    return false;
  });
}
