/**
 * What `policy.duplicate_people` does with rows of different client_ids that are probably one
 * person (found by src/mapping/duplicate-people.ts): the pairs go on `roster.duplicatePeople`, and
 * under `reject` the new client_id(s) of each pair are held back (neither written nor deleted) and
 * counted as rejected rows. Two owned records are only reported, as holding them back would stop
 * their updates and undo nothing. Pure: the inventory's fields come in as an iterable.
 */
import type { DuplicatePair, DuplicatePeopleFinder } from '../mapping/duplicate-people.js';
import type { RosterSummary } from '../mapping/roster.js';
import type { Fields } from './types.js';

export function decideDuplicatePeople(input: {
  people: DuplicatePeopleFinder;
  /** Mapped client_ids the inventory lacks. */
  newIds: ReadonlySet<string>;
  /** The inventory's records, read only when a new client_id needs them. */
  owned: () => Iterable<readonly [string, Fields]>;
  roster: RosterSummary;
  /** Client_ids in the roster not to be written; held-back ones are added. */
  keepAsIs: Set<string>;
  reject: boolean;
}): void {
  const { people, newIds, roster } = input;
  const live = new Set([...newIds].filter((clientId) => !input.keepAsIs.has(clientId)));
  // Two rows of the roster are compared only when both are new: an owned row may be skipped
  // unmapped by the fast path, and the plan must not depend on which path read it. A new row
  // meets the owned records through the inventory (same ORCID iD or email); `validate`, which
  // reads no state, compares every row with every other.
  const inRoster = people.inRoster().filter((pair) => newIds.has(pair.a.clientId) && newIds.has(pair.b.clientId));
  const pairs = [...inRoster, ...(live.size > 0 ? people.againstInventory(live, input.owned()) : [])].filter(
    (pair) => !input.keepAsIs.has(pair.a.clientId) && !input.keepAsIs.has(pair.b.clientId),
  );
  if (pairs.length === 0) return;
  roster.duplicatePeople = pairs;
  if (input.reject) for (const pair of pairs) holdBack(pair, newIds, roster, input.keepAsIs);
}

function holdBack(pair: DuplicatePair, newIds: ReadonlySet<string>, roster: RosterSummary, keepAsIs: Set<string>): void {
  for (const [person, other] of [[pair.a, pair.b], [pair.b, pair.a]] as const) {
    if (!newIds.has(person.clientId) || person.owned || keepAsIs.has(person.clientId)) continue;
    keepAsIs.add(person.clientId);
    roster.counts.valid -= 1;
    roster.counts.rejected += 1;
    const provenance = person.provenance ?? { file: '', row: 0 };
    roster.rejected.push({
      provenance,
      clientId: person.clientId,
      values: {},
      problems: [
        {
          provenance,
          value: person.clientId,
          code: 'duplicate_person',
          message: `probably the same person as ${other.clientId}${other.owned ? ' (already in the group)' : ''}: ${pair.evidence}`,
          hint: 'Merge the two rows under one client_id (keep the one already in the group), or set policy.duplicate_people: warn if they are two people.',
        },
      ],
    });
  }
}
