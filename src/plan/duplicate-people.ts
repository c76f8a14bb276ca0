/**
 * What `policy.duplicate_people` does with rows of different client_ids that are probably one
 * person (found by src/mapping/duplicate-people.ts). One decision for every command: `validate`,
 * `plan`, `sync --dry-run` and `sync` call this with the same inputs (the roster's rows, the
 * inventory when there is one) and so report the same pairs and hold back the same rows.
 *
 * - A pair is considered when at least one side is new (a client_id the inventory lacks) and
 *   neither side is already set aside (rejected for its values, a duplicated id, another
 *   pipeline's). Two owned records are left alone: holding them back would stop their updates
 *   and undo nothing.
 * - Owned records are compared as the roster now describes them (their rows, mapped) and as the
 *   inventory last applied them (so a new row still meets the record of a person whose row is
 *   gone, or whose email the roster changed).
 * - Under `reject` the new client_id(s) of each pair are held back (neither written nor deleted)
 *   and counted as rejected rows. An owned record gone from the roster whose new id is held back
 *   is a pending rename: it is kept, not deleted (`pendingRenames`). `reject` holds back writes;
 *   it never causes one.
 * - The report lists the strongest MAX_LISTED_PAIRS pairs and counts the rest by tier.
 *
 * Pure: the inventory's fields come in as an iterable.
 */
import type { DuplicatePair, DuplicatePeopleFinder } from '../mapping/duplicate-people.js';
import type { RosterSummary } from '../mapping/roster.js';
import type { Fields } from './types.js';

export interface DuplicatePeopleDecision {
  /** Owned client_ids gone from the roster, kept because their new id is held back: id → the pair. */
  pendingRenames: Map<string, DuplicatePair>;
}

export function decideDuplicatePeople(input: {
  people: DuplicatePeopleFinder;
  /** Mapped client_ids the inventory lacks; without an inventory (no state yet), every row is new. */
  newIds?: ReadonlySet<string>;
  /** The inventory's records, read only when a new client_id needs them. */
  owned?: () => Iterable<readonly [string, Fields]>;
  roster: RosterSummary;
  /** Client_ids in the roster not to be written; held-back ones are added. */
  keepAsIs: Set<string>;
  reject: boolean;
  /** Rejected rows stored, at most (the rest counted), as mapRoster's `maxStoredRejected`. */
  maxStoredRejected?: number;
}): DuplicatePeopleDecision {
  const { people, newIds, roster, keepAsIs } = input;
  const pendingRenames = new Map<string, DuplicatePair>();
  const isNew = (clientId: string) => (newIds ? newIds.has(clientId) : true);
  const setAside = new Set(keepAsIs);
  const anyNew = newIds ? [...newIds].some((clientId) => !setAside.has(clientId)) : people.size > 0;
  if (!anyNew) return { pendingRenames };
  const cap = input.maxStoredRejected ?? 10_000;
  const list = people.find({
    accept: (a, b) => !setAside.has(a) && !setAside.has(b) && (isNew(a) || isNew(b)),
    ...(newIds ? { newIds } : {}),
    ...(input.owned ? { owned: input.owned() } : {}),
    onPair: (pair) => {
      if (!input.reject) return;
      for (const [person, other] of [[pair.a, pair.b], [pair.b, pair.a]] as const) holdBack(person, other, pair, { isNew, roster, keepAsIs, cap });
      for (const [person, other] of [[pair.a, pair.b], [pair.b, pair.a]] as const) {
        if (!isNew(person.clientId) && keepAsIs.has(other.clientId) && isNew(other.clientId) && !roster.firstRowById.has(person.clientId) && !pendingRenames.has(person.clientId)) {
          pendingRenames.set(person.clientId, pair);
        }
      }
    },
  });
  if (list.total === 0) return { pendingRenames };
  // Each side marked as the report shows it: owned (in the group already), a pending rename.
  const sideOf = (person: DuplicatePair['a']) => (isNew(person.clientId) || person.owned ? person : { ...person, owned: true as const });
  const listed = list.pairs().map((pair) => ({
    ...pair,
    a: sideOf(pair.a),
    b: sideOf(pair.b),
    ...(pendingRenames.get(pair.a.clientId) === pair || pendingRenames.get(pair.b.clientId) === pair ? { pendingRename: true as const } : {}),
  }));
  roster.duplicatePeople = listed;
  roster.duplicatePeopleFound = { found: { ...list.found }, listed: listed.length, leftOut: list.total - listed.length };
  return { pendingRenames };
}

function holdBack(
  person: DuplicatePair['a'],
  other: DuplicatePair['a'],
  pair: DuplicatePair,
  context: { isNew: (clientId: string) => boolean; roster: RosterSummary; keepAsIs: Set<string>; cap: number },
): void {
  const { roster, keepAsIs } = context;
  if (!context.isNew(person.clientId) || person.owned || keepAsIs.has(person.clientId)) return;
  keepAsIs.add(person.clientId);
  roster.counts.valid -= 1;
  roster.counts.rejected += 1;
  if (roster.rejected.length >= context.cap) {
    roster.rejectedNotStored += 1;
    return;
  }
  const provenance = person.provenance ?? { file: '', row: 0 };
  const owned = other.owned || !context.isNew(other.clientId);
  roster.rejected.push({
    provenance,
    clientId: person.clientId,
    values: {},
    problems: [
      {
        provenance,
        value: person.clientId,
        code: 'duplicate_person',
        message: `probably the same person as ${other.clientId}${owned ? ' (already in the group)' : ''}: ${pair.evidence}`,
        hint: 'Merge the two rows under one client_id (keep the one already in the group), or set policy.duplicate_people: warn if they are two people.',
      },
    ],
  });
}
