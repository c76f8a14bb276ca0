/**
 * One owner per record. Pipelines that share a state location share claims (service, group,
 * client_id → pipeline), and two pipelines may write to one group only when both pipeline files
 * declare the sharing with disjoint client_id prefixes. Pure: registrations in, problems out.
 */
import type { TargetRegistration } from './backend.js';

/** Two prefixes overlap when one starts with the other: some client_id could match both. */
export function prefixesOverlap(a: readonly string[], b: readonly string[]): boolean {
  return a.some((x) => b.some((y) => x.startsWith(y) || y.startsWith(x)));
}

/**
 * Why this pipeline may not write to a group other pipelines also target; undefined when it may.
 * `mine`: the prefixes this pipeline declares (null: it declares no sharing).
 */
export function sharingProblem(pipeline: string, mine: readonly string[] | null, registered: readonly TargetRegistration[]): string | undefined {
  for (const other of registered) {
    if (other.pipeline === pipeline) continue;
    if (mine === null || other.sharedPrefixes === null) {
      const undeclared = [mine === null ? `"${pipeline}"` : null, other.sharedPrefixes === null ? `"${other.pipeline}"` : null].filter(Boolean).join(' and ');
      return `pipeline "${other.pipeline}" already writes to this group, and ${undeclared} declare${undeclared.includes(' and ') ? '' : 's'} no sharing.`;
    }
    if (prefixesOverlap(mine, other.sharedPrefixes)) {
      return `pipeline "${other.pipeline}" also writes to this group, and its client_id prefixes (${other.sharedPrefixes.join(', ')}) overlap this pipeline's (${mine.join(', ')}).`;
    }
  }
  return undefined;
}

/** Whether a client_id falls inside the prefixes this pipeline declared (always, when it declares none). */
export function withinPrefixes(clientId: string, prefixes: readonly string[] | null): boolean {
  return prefixes === null || prefixes.some((prefix) => clientId.startsWith(prefix));
}
