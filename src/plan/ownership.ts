/**
 * One owner per record, decided from the claims and the declared prefixes (pure): a roster row
 * whose client_id another pipeline sharing the group claims, or that lies outside this pipeline's
 * client_id prefixes, is neither written nor (being in the roster) deleted; an owned record
 * another pipeline also claims (a state shared by mistake) is never deleted here.
 */
import { withinPrefixes } from '../state/sharing.js';

/** Why this pipeline leaves a roster row's record alone; undefined when the record is its own. */
export function foreignReason(clientId: string, claimedBy: string | undefined, pipeline: string, prefixes: readonly string[] | null): string | undefined {
  if (claimedBy !== undefined && claimedBy !== pipeline) return `claimed by pipeline "${claimedBy}"`;
  if (!withinPrefixes(clientId, prefixes)) return `outside this pipeline's client_id prefixes (${prefixes?.join(', ')})`;
  return undefined;
}

/** The missing records this pipeline may delete; those another pipeline claims go to `foreign`. */
export function ownMissing(missing: readonly string[], claimedBy: ReadonlyMap<string, string>, pipeline: string, foreign: Map<string, string>): string[] {
  return missing.filter((clientId) => {
    const owner = claimedBy.get(clientId);
    if (owner === undefined || owner === pipeline) return true;
    foreign.set(clientId, `claimed by pipeline "${owner}"`);
    return false;
  });
}
