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
 * Pure: the inventory's fields come in as an iterable, and the decision says what to hold back
 * and list; the caller records it in the roster (src/sync/duplicate-people-check.ts).
 */
import type { DuplicatePair, DuplicatePeopleFinder, DuplicatePeopleFound } from '../mapping/duplicate-people.js';
import type { RosterSummary } from '../mapping/roster.js';
import type { RejectedRow } from '../mapping/types.js';
import type { Fields } from './types.js';

export interface DuplicatePeopleDecision {
  /** Owned client_ids gone from the roster, kept because their new id is held back: id → the pair. */
  pendingRenames: Map<string, DuplicatePair>;
  /** New client_ids held back (not to be written), each counted as a rejected row. */
  heldBack: Set<string>;
  /** The rejected rows of those held back, as many as the roster may still store; `rejectedNotStored` the rest. */
  rejected: RejectedRow[];
  rejectedNotStored: number;
  /** The pairs the report lists, and the count by tier; absent when none was found. */
  listed?: { pairs: DuplicatePair[]; found: DuplicatePeopleFound };
}

export function decideDuplicatePeople(input: {
  people: DuplicatePeopleFinder;
  /** Mapped client_ids the inventory lacks; without an inventory (no state yet), every row is new. */
  newIds?: ReadonlySet<string>;
  /** The inventory's records, read only when a new client_id needs them. */
  owned?: () => Iterable<readonly [string, Fields]>;
  roster: Pick<RosterSummary, 'firstRowById' | 'rejected'>;
  /** Client_ids in the roster not to be written (rejected, duplicated, another pipeline's). */
  keepAsIs: ReadonlySet<string>;
  reject: boolean;
  /** Rejected rows stored, at most (the rest counted), as mapRoster's `maxStoredRejected`. */
  maxStoredRejected?: number;
}): DuplicatePeopleDecision {
  const { people, newIds, roster, keepAsIs } = input;
  const decision: DuplicatePeopleDecision = { pendingRenames: new Map(), heldBack: new Set(), rejected: [], rejectedNotStored: 0 };
  const { pendingRenames, heldBack } = decision;
  const isNew = (clientId: string) => (newIds ? newIds.has(clientId) : true);
  const anyNew = newIds ? [...newIds].some((clientId) => !keepAsIs.has(clientId)) : people.size > 0;
  if (!anyNew) {
    people.release();
    return decision;
  }
  const notWritten = (clientId: string) => keepAsIs.has(clientId) || heldBack.has(clientId);
  const context: HoldBackContext = { isNew, notWritten, decision, room: (input.maxStoredRejected ?? 10_000) - roster.rejected.length };
  const list = people.find({
    accept: (a, b) => !keepAsIs.has(a) && !keepAsIs.has(b) && (isNew(a) || isNew(b)),
    ...(newIds ? { newIds } : {}),
    ...(input.owned ? { owned: input.owned() } : {}),
    onPair: (pair) => {
      if (!input.reject) return;
      for (const [person, other] of [[pair.a, pair.b], [pair.b, pair.a]] as const) holdBack(person, other, pair, context);
      for (const [person, other] of [[pair.a, pair.b], [pair.b, pair.a]] as const) {
        if (!isNew(person.clientId) && notWritten(other.clientId) && isNew(other.clientId) && !roster.firstRowById.has(person.clientId) && !pendingRenames.has(person.clientId)) {
          pendingRenames.set(person.clientId, pair);
        }
      }
    },
  });
  // Decided: the rows' identities are let go now, not when the run ends (a million rows hold tens
  // of megabytes that planning, apply and the report would carry).
  people.release();
  if (list.total === 0) return decision;
  // Each side marked as the report shows it: owned (in the group already), a pending rename.
  const sideOf = (person: DuplicatePair['a']) => (isNew(person.clientId) || person.owned ? person : { ...person, owned: true as const });
  const listed = list.pairs().map((pair) => ({
    ...pair,
    a: sideOf(pair.a),
    b: sideOf(pair.b),
    ...(pendingRenames.get(pair.a.clientId) === pair || pendingRenames.get(pair.b.clientId) === pair ? { pendingRename: true as const } : {}),
  }));
  return { ...decision, listed: { pairs: listed, found: { found: { ...list.found }, listed: listed.length, leftOut: list.total - listed.length } } };
}

interface HoldBackContext {
  isNew: (clientId: string) => boolean;
  notWritten: (clientId: string) => boolean;
  decision: DuplicatePeopleDecision;
  /** Rejected rows the roster may still store. */
  room: number;
}

function holdBack(person: DuplicatePair['a'], other: DuplicatePair['a'], pair: DuplicatePair, context: HoldBackContext): void {
  const { decision } = context;
  if (!context.isNew(person.clientId) || person.owned || context.notWritten(person.clientId)) return;
  decision.heldBack.add(person.clientId);
  if (decision.rejected.length >= context.room) {
    decision.rejectedNotStored += 1;
    return;
  }
  const provenance = person.provenance ?? { file: '', row: 0 };
  const owned = other.owned || !context.isNew(other.clientId);
  decision.rejected.push({
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
