/**
 * The check for the same person under two client_ids, run the same way by `validate` and by the
 * plan of `plan`, `sync --dry-run` and `sync` (src/plan/duplicate-people.ts decides): it completes the
 * roster's identities with the rows the plan's fast path did not map (their records are the
 * inventory's, unchanged), hands the inventory to the decision, and words the notes.
 */
import type { PolicyConfig } from '../config/pipeline.js';
import type { DuplicateProbe } from '../mapping/duplicate-probe.js';
import { DUPLICATE_PEOPLE_MAX_ROWS, type DuplicatePair, type DuplicatePeopleFinder } from '../mapping/duplicate-people.js';
import type { RosterSummary } from '../mapping/roster.js';
import { decideDuplicatePeople, type DuplicatePeopleDecision } from '../plan/duplicate-people.js';
import type { Fields } from '../plan/types.js';
import { duplicatePeopleNotes } from '../report/run-notes.js';
import type { StateBackend } from '../state/backend.js';
import { boundHeapGrowth } from './bounded-heap.js';

export function checkDuplicatePeople(input: {
  people: DuplicatePeopleFinder;
  /** The state, when there is one (`validate` before a first sync has none). */
  store?: StateBackend;
  /** Mapped client_ids the inventory lacks (with a store). */
  newIds?: ReadonlySet<string>;
  roster: RosterSummary;
  /** The roster's file, for the rows the fast path read. */
  sourceFile: string;
  keepAsIs: Set<string>;
  policy: PolicyConfig['duplicate_people'];
  maxStoredRejected?: number;
  /** The rows the run mapped, for a check of the new rows that reads only what they can pair with. */
  probe?: DuplicateProbe;
}): { notes: string[]; pendingRenames: ReadonlyMap<string, DuplicatePair> } {
  const { store, roster } = input;
  const anyNew = input.newIds ? [...input.newIds].some((clientId) => !input.keepAsIs.has(clientId)) : true;
  // Reading the inventory parses every owned record, short-lived, while the check holds those it
  // keeps: V8 would let the heap grow to several times what is live (bounded-heap.ts).
  if (store && anyNew && input.newIds) boundHeapGrowth();
  // A nightly run's few new rows: only the owned records they can pair with (the same answer).
  const probed = store && anyNew && input.newIds && input.probe
    ? input.probe.select({ newIds: input.newIds, inventory: ownedFields(store), rosterRow: (clientId) => roster.firstRowById.get(clientId), sourceFile: input.sourceFile })
    : undefined;
  const people = probed?.people ?? input.people;
  // Rows the plan's fast path did not map are the inventory's records, unchanged: added from it,
  // so the roster's rows are compared whichever path read them (`validate` maps every row).
  if (store && anyNew && !probed) {
    for (const [clientId, fields] of ownedFields(store)) {
      if (people.overflowed) break;
      const row = roster.firstRowById.get(clientId);
      if (row !== undefined) people.addUnlessMapped({ clientId, fields, provenance: { file: input.sourceFile, row } });
    }
  }
  const decision = decideDuplicatePeople({
    people,
    ...(store && input.newIds ? { newIds: input.newIds, owned: probed ? () => probed.owned : () => ownedFields(store) } : {}),
    roster,
    keepAsIs: input.keepAsIs,
    reject: input.policy === 'reject',
    ...(input.maxStoredRejected !== undefined ? { maxStoredRejected: input.maxStoredRejected } : {}),
  });
  recordDecision(roster, input.keepAsIs, decision);
  const { pendingRenames } = decision;
  const notes = duplicatePeopleNotes({
    found: roster.duplicatePeopleFound,
    policy: input.policy,
    pendingRenames,
    partialBlocks: people.partialBlocks,
    ...(people.overflowed ? { skippedPast: DUPLICATE_PEOPLE_MAX_ROWS } : {}),
  });
  return { notes, pendingRenames };
}

/** The rows held back as rejected ones (not written), and the pairs the report lists. */
function recordDecision(roster: RosterSummary, keepAsIs: Set<string>, decision: DuplicatePeopleDecision): void {
  for (const clientId of decision.heldBack) keepAsIs.add(clientId);
  roster.counts.valid -= decision.heldBack.size;
  roster.counts.rejected += decision.heldBack.size;
  roster.rejected.push(...decision.rejected);
  roster.rejectedNotStored += decision.rejectedNotStored;
  if (decision.listed) {
    roster.duplicatePeople = decision.listed.pairs;
    roster.duplicatePeopleFound = decision.listed.found;
  }
}

/** The inventory's records, a page at a time: the fields last applied to each owned client_id. */
export function* ownedFields(store: StateBackend): Iterable<readonly [string, Fields]> {
  let page: string[] = [];
  const flush = function* () {
    yield* store.lastApplied(page);
    page = [];
  };
  for (const clientId of store.ownedIds()) {
    page.push(clientId);
    if (page.length >= store.lookupBatch) yield* flush();
  }
  yield* flush();
}

/** Of `clientIds`, those the inventory lacks, looked up a batch at a time. */
export function notOwned(store: StateBackend, clientIds: readonly string[]): string[] {
  const owned = store.ownedHashesOf(clientIds);
  return clientIds.filter((clientId) => !owned.has(clientId));
}
