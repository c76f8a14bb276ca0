/**
 * The sentences a run's report carries about what planning found (its `notes`): written here, in
 * report/, from the facts gather and plan/ hand over.
 */
import type { PolicyConfig } from '../config/pipeline.js';
import type { ForeignReason } from '../plan/ownership.js';
import { describePartialBlocks, type DuplicatePair, type DuplicatePeopleFound, type PartialBlock } from '../mapping/duplicate-people.js';

/** Roster rows and owned records another pipeline owns, left alone. */
export function foreignNote(foreign: ReadonlyMap<string, ForeignReason>): string | undefined {
  if (foreign.size === 0) return undefined;
  const shown = [...foreign].slice(0, 20).map(([clientId, why]) => `${clientId} (${foreignText(why)})`).join(', ');
  return `${foreign.size} client_id${foreign.size === 1 ? '' : 's'} left alone, as another pipeline owns them: ${shown}${foreign.size > 20 ? ', …' : ''}.`;
}

function foreignText(why: ForeignReason): string {
  return why.code === 'claimed' ? `claimed by pipeline "${why.owner}"` : `outside this pipeline's client_id prefixes (${why.prefixes.join(', ')})`;
}

/**
 * What the check for the same person under two client_ids found, for every command alike: the
 * pairs by tier and how many the report leaves out, the owned records kept as pending renames,
 * and whether the check was skipped or compared some blocks in part.
 */
export function duplicatePeopleNotes(input: {
  found: DuplicatePeopleFound | undefined;
  policy: PolicyConfig['duplicate_people'];
  pendingRenames: ReadonlyMap<string, DuplicatePair>;
  partialBlocks: readonly PartialBlock[];
  skippedPast?: number;
}): string[] {
  const notes: string[] = [];
  if (input.skippedPast !== undefined) {
    notes.push(
      `The check for the same person under two client_ids was skipped: the roster has more than ${input.skippedPast.toLocaleString('en')} rows, or as many ORCID iDs and emails, or more than 4 GiB of their text (the identities the check keeps are bounded); the rest of the run is not affected.`,
    );
  }
  const partial = describePartialBlocks(input.partialBlocks);
  if (partial) notes.push(partial);
  const found = input.found;
  if (found) {
    const total = found.listed + found.leftOut;
    const tiers = `${found.found.orcid} by ORCID iD, ${found.found.email} by email, ${found.found.name} by name and affiliation`;
    const listed = found.leftOut > 0 ? `the report lists the strongest ${found.listed} with the evidence and leaves out ${found.leftOut}` : 'the report lists them with the evidence';
    notes.push(`${total} pair${total === 1 ? '' : 's'} of client_ids are probably the same person (${tiers}; policy.duplicate_people: ${input.policy}): ${listed}.`);
  }
  const renames = [...input.pendingRenames];
  if (renames.length > 0) {
    const shown = renames.slice(0, 20).map(([owned, pair]) => `${owned} → ${pair.a.clientId === owned ? pair.b.clientId : pair.a.clientId}`).join(', ');
    notes.push(
      `${renames.length} owned record${renames.length === 1 ? ' is' : 's are'} gone from the roster but kept, not deleted: each is probably the same person as a new client_id held back by policy.duplicate_people: reject (a pending rename): ${shown}${renames.length > 20 ? ', …' : ''}. Merge the rows under the owned client_id, or set policy.duplicate_people: warn to rename the record.`,
    );
  }
  return notes;
}

export const REFRESH_WITHOUT_GROUP_NOTE = '--refresh skipped: the target group does not exist yet.';

export function driftCheckSkippedNote(error: unknown): string {
  return `drift check skipped: ${error instanceof Error ? error.message : String(error)}`;
}

/** What the drift check found and this run writes again. */
export function driftNote(found: { sampled: number; deleted: readonly string[]; changed: readonly string[] }): string {
  const shown = (ids: readonly string[]) => (ids.length === 0 ? '' : ` (${ids.slice(0, 20).join(', ')}${ids.length > 20 ? ', …' : ''})`);
  const were = (n: number): string => `${n} ${n === 1 ? 'was' : 'were'}`;
  return `drift check: of ${found.sampled} owned record${found.sampled === 1 ? '' : 's'} read back, ${were(found.deleted.length)} deleted${shown(found.deleted)} and ${found.changed.length} changed${shown(found.changed)} in the service; this run writes them again. Other records may have drifted too: \`--refresh=all\` reads every one.`;
}

/** A saved plan applied (`rostersync apply`), after its actions were checked again. */
export function savedPlanNote(path: string, createdAt: string): string {
  return `applied the saved plan ${path} made at ${createdAt}, after checking each of its actions against the current inventory and claims.`;
}

/** A saved revert applied, after it was planned again. */
export function savedRevertNote(path: string, createdAt: string): string {
  return `applied the saved revert ${path} made at ${createdAt}, after planning it again against the journal, the service and the inventory.`;
}

/** Rejected rows, judged against policy.rejects (plan/rejects-tolerance.ts), and what to do. */
export function rejectsNote(judged: string): string {
  return `${judged}; fix them in rejected.csv and run again.`;
}
