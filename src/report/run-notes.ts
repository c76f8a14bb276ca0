/**
 * The sentences a run's report carries about what planning found (its `notes`): written here, in
 * report/, from the facts gather and plan/ hand over.
 */
import type { PolicyConfig } from '../config/pipeline.js';

/** Roster rows and owned records another pipeline owns, left alone. */
export function foreignNote(foreign: ReadonlyMap<string, string>): string | undefined {
  if (foreign.size === 0) return undefined;
  const shown = [...foreign].slice(0, 20).map(([clientId, why]) => `${clientId} (${why})`).join(', ');
  return `${foreign.size} client_id${foreign.size === 1 ? '' : 's'} left alone, as another pipeline owns them: ${shown}${foreign.size > 20 ? ', …' : ''}.`;
}

export function duplicatePeopleNote(pairs: number, policy: PolicyConfig['duplicate_people']): string | undefined {
  if (pairs === 0) return undefined;
  return `${pairs} pair${pairs === 1 ? '' : 's'} of client_ids are probably the same person (policy.duplicate_people: ${policy}); the report lists them with the evidence.`;
}

export function duplicatePeopleSkippedNote(maxRows: number): string {
  return `The check for the same person under two client_ids was skipped: more than ${maxRows} rows were mapped in this run.`;
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
