/**
 * The probe (src/mapping/duplicate-probe.ts) gives the full check's answer: over random rosters and
 * inventories (rows the fast path took, rows mapped again after a change, new rows, owned records
 * gone from the roster, a client_id mapped twice, rows set aside), the decision of
 * `policy.duplicate_people` made from the probe's finder and owned records is the one made from
 * the full check's (every owned record of the roster added to the finder, the whole inventory
 * compared, as src/sync/duplicate-people-check.ts does without the probe): the same pairs found
 * in the same order, the same blocks compared in part, the same listed pairs and counts, the
 * same rows held back in the same order, the same pending renames.
 *
 * Names come from short lists (words around COMMON_WORD_ROWS rows), with typos, initials and
 * word order; affiliations in spelling variants; emails and ORCID iDs shared now and then, a
 * placeholder email on many rows (past KEY_ALL_PAIRS), a large affiliation now and then (name
 * blocks past BLOCK_ALL_PAIRS). Each case is seeded; PROBE_SEED=<seed> PROBE_CASES=1 replays one.
 */
import { describe, expect, it } from 'vitest';
import { DuplicatePeopleFinder, MAX_LISTED_PAIRS, type DuplicatePair } from '../../src/mapping/duplicate-people.js';
import { DuplicateProbe } from '../../src/mapping/duplicate-probe.js';
import type { FieldValue } from '../../src/mapping/types.js';
import { decideDuplicatePeople } from '../../src/plan/duplicate-people.js';
import { seededRandom } from '../../src/runtime/seeded-random.js';

type Fields = Record<string, FieldValue>;
interface Row {
  clientId: string;
  fields: Fields;
  provenance: { file: string; row: number };
}

const CASES = Number(process.env.PROBE_CASES ?? 100);
const FIRST_SEED = Number(process.env.PROBE_SEED ?? 1);
const FILE = 'roster.csv';

const FIRST = ['Ann', 'Anna', 'Wei', 'Li', 'John', 'Jon', 'María José', 'Zoë', 'Łukasz', 'Heitor', 'J.', 'A'];
const LAST = ['Wang', 'Lee', 'Smith', 'Smyth', 'Müller', 'Muller', 'Oliveira', 'García-López', 'Pemberton', 'Ning'];
/** Family names met a few times in a roster: whether such a name is common turns on rows elsewhere. */
const MID = Array.from({ length: 12 }, (_, i) => `Mid${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`);
const AFFILIATIONS = [['Univ. of Oslo', 'UNIV OF OSLO'], ['Universität Wien', 'Universitat Wien'], ['MIT'], ['Big Institute'], ['—']];
const ORCIDS = ['0000-0002-1825-0097', '0000-0001-5109-3700', '0000-0002-1694-233X', '0000-0003-1415-9269'];

function world(seed: number) {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const rare = () => `Q${Math.floor(random() * 1e6).toString(36)}`;
  const typo = (name: string) => {
    const at = 1 + Math.floor(random() * (name.length - 1));
    return random() < 0.5 ? name.slice(0, at) + name.slice(at + 1) : `${name.slice(0, at)}e${name.slice(at)}`;
  };
  const big = random() < 0.1;
  const placeholder = random() < 0.3 ? 0.2 + random() * 0.3 : 0;
  const person = (i: number): Fields => {
    const first = random() < 0.15 ? rare() : pick(FIRST);
    const last = random() < 0.15 ? rare() : random() < 0.3 ? pick(MID) : pick(LAST);
    const shape = random();
    let name = shape < 0.6 ? `${first} ${last}` : shape < 0.8 ? `${last}, ${first}` : shape < 0.9 ? `${first} ${pick(FIRST)} ${last}` : last;
    if (random() < 0.2) name = typo(name);
    const fields: Fields = { name: random() < 0.04 ? null : name };
    if (big && random() < 0.8) fields.affiliations = ['Big Institute'];
    else if (random() < 0.85) fields.affiliations = [random() < 0.5 ? pick(pick(AFFILIATIONS)) : `Institute ${Math.floor(random() * 30)}`];
    const own = `${first.toLowerCase().replace(/[^a-z]/g, '')}.${i}@${random() < 0.4 ? 'uni.org' : `d${i % 7}.org`}`;
    fields.emails = random() < 0.08 ? [] : random() < placeholder ? ['none@example.org', own] : random() < 0.1 ? [`Shared${i % 3}@Lab.org`] : [random() < 0.1 ? own.toUpperCase() : own];
    fields.orcids = random() < 0.15 ? [pick(ORCIDS)] : [];
    return fields;
  };
  const rosterSize = big ? 550 + Math.floor(random() * 150) : 20 + Math.floor(random() * 300);
  const ownedShare = random() < 0.2 ? 0.3 : random() < 0.5 ? 0.95 : 0.99;
  const roster: Row[] = [];
  for (let i = 0; i < rosterSize; i++) {
    const fields = person(i);
    // A namesake of an earlier row at its affiliation, with an address at the same domain: two
    // people if the name is common in the roster (COMMON_WORD_ROWS), one person else.
    if (i > 0 && random() < 0.12) {
      const model = pick(roster).fields;
      Object.assign(fields, { name: model.name, affiliations: model.affiliations ?? null, emails: [`namesake.${i}@uni.org`] });
    }
    roster.push({ clientId: `c${i}`, fields, provenance: { file: FILE, row: i + 2 } });
  }
  // Chains of similar names at one affiliation: a new row, an owned row one typo away, and an owned
  // row one typo away from that one in its other word (not near the new row): the second owned
  // row makes the first ambiguous, so the new row's pair is not said.
  const chained = new Map<string, boolean>();
  for (let c = random() < 0.5 ? 1 + Math.floor(random() * 3) : 0; c > 0; c--) {
    const [given, family] = [`${pick(MID)}ina`, `${pick(MID)}son`];
    const affiliations = [`Institute ${Math.floor(random() * 30)}`];
    const names = [`${given} ${typo(family)}`, `${given} ${family}`, `${typo(given)} ${family}`];
    names.forEach((name, k) => {
      const clientId = `chain${c}-${k}`;
      chained.set(clientId, k > 0);
      const at = Math.floor(random() * (roster.length + 1));
      roster.splice(at, 0, { clientId, fields: { name, affiliations, emails: [`${clientId}@own${k}.org`], orcids: [] }, provenance: { file: FILE, row: 0 } });
    });
  }
  roster.forEach((row, i) => (row.provenance = { file: FILE, row: i + 2 }));
  const inventory: Array<readonly [string, Fields]> = [];
  const mapped: Row[] = [];
  const newIds = new Set<string>();
  for (const row of roster) {
    const owned = chained.get(row.clientId) ?? random() < ownedShare;
    if (!owned) newIds.add(row.clientId);
    const changed = owned && !chained.has(row.clientId) && random() < 0.08;
    if (owned) inventory.push([row.clientId, changed ? person(rosterSize + inventory.length) : row.fields]);
    // Unchanged owned rows are taken by the fast path (not mapped); the others are mapped.
    if (!owned || changed) mapped.push(row);
  }
  if (newIds.size === 0) newIds.add(roster[0]!.clientId), mapped.unshift(roster[0]!);
  // A client_id mapped twice (`duplicate_client_ids: last`): its later row replaces the first.
  if (random() < 0.3 && mapped.length > 1) {
    const twice = pick(mapped);
    mapped.push({ ...twice, fields: person(9999), provenance: { file: FILE, row: rosterSize + 2 } });
  }
  // Owned records gone from the roster, some with a new row's email or ORCID iD (re-keyed people).
  for (let g = 0; g < Math.floor(random() * 20); g++) {
    const model = pick(roster).fields;
    inventory.push([`g${g}`, random() < 0.5 ? { ...model } : person(20_000 + g)]);
  }
  for (let i = inventory.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [inventory[i], inventory[j]] = [inventory[j]!, inventory[i]!];
  }
  const keepAsIs = new Set(roster.filter(() => random() < 0.03).map((row) => row.clientId));
  const firstRowById = new Map(roster.map((row) => [row.clientId, row.provenance.row]));
  return { mapped, inventory, newIds, keepAsIs, firstRowById, reject: random() < 0.6, maxStoredRejected: random() < 0.3 ? 2 : 10_000 };
}

type World = ReturnType<typeof world>;

/** Every pair the search hands on, in order, and the decision made from the same finder and records. */
function answer(w: World, people: DuplicatePeopleFinder, owned: Iterable<readonly [string, Fields]>) {
  const found: DuplicatePair[] = [];
  const accept = (a: string, b: string) => !w.keepAsIs.has(a) && !w.keepAsIs.has(b) && (w.newIds.has(a) || w.newIds.has(b));
  people.find({ accept, newIds: w.newIds, owned, onPair: (pair) => found.push(pair), limit: MAX_LISTED_PAIRS });
  const partialBlocks = people.partialBlocks;
  const decision = decideDuplicatePeople({
    people,
    newIds: w.newIds,
    owned: () => owned,
    roster: { firstRowById: w.firstRowById, rejected: [] },
    keepAsIs: w.keepAsIs,
    reject: w.reject,
    maxStoredRejected: w.maxStoredRejected,
  });
  return { found, partialBlocks, decision: { ...decision, heldBack: [...decision.heldBack], pendingRenames: [...decision.pendingRenames] } };
}

function fullCheck(w: World) {
  const people = new DuplicatePeopleFinder();
  for (const row of w.mapped) people.add(row);
  for (const [clientId, fields] of w.inventory) {
    const row = w.firstRowById.get(clientId);
    if (row !== undefined) people.addUnlessMapped({ clientId, fields, provenance: { file: FILE, row } });
  }
  return answer(w, people, w.inventory);
}

function probed(w: World) {
  const probe = new DuplicateProbe();
  for (const row of w.mapped) probe.add(row);
  const selection = probe.select({ newIds: w.newIds, inventory: w.inventory, rosterRow: (clientId) => w.firstRowById.get(clientId), sourceFile: FILE });
  if (selection === undefined) throw new Error('the probe was not used');
  return { ...answer(w, selection.people, selection.owned), size: selection.people.size };
}

describe('the probe of a nightly run gives the full check’s answer', () => {
  const seeds = Array.from({ length: CASES }, (_, i) => FIRST_SEED + i);
  it.each(seeds)('seed %i', (seed) => {
    const w = world(seed);
    const full = fullCheck(w);
    const { size, ...probe } = probed(w);
    expect(probe, `seed ${seed}`).toEqual(full);
  });

  it.each(seeds)('seed %i: naming the new rows (blocks compared only near them) finds the pairs every block gives', (seed) => {
    const w = world(seed);
    const people = new DuplicatePeopleFinder();
    for (const row of w.mapped) people.add(row);
    for (const [clientId, fields] of w.inventory) {
      const row = w.firstRowById.get(clientId);
      if (row !== undefined) people.addUnlessMapped({ clientId, fields, provenance: { file: FILE, row } });
    }
    const accept = (a: string, b: string) => !w.keepAsIs.has(a) && !w.keepAsIs.has(b) && (w.newIds.has(a) || w.newIds.has(b));
    const pairs = (newIds?: ReadonlySet<string>) => {
      const found: DuplicatePair[] = [];
      people.find({ accept, ...(newIds ? { newIds } : {}), owned: w.inventory, onPair: (pair) => found.push(pair) });
      return found;
    };
    expect(pairs(w.newIds), `seed ${seed}`).toEqual(pairs());
  });

  it('a new row and an owned record whose email differs only in a capital outside ASCII: one person, in the probe as in the full check', () => {
    const ivan = (name: string, email: string): Fields => ({ name, emails: [email], orcids: [], affiliations: ['МГУ'] });
    const w: World = {
      mapped: [{ clientId: 'NEW', fields: ivan('Ivan Petrov', 'ИВАН@почта.рф'), provenance: { file: FILE, row: 2 } }],
      inventory: [['OLD', ivan('Wei Wang', 'иван@почта.рф')]],
      newIds: new Set(['NEW']),
      keepAsIs: new Set(),
      firstRowById: new Map([['NEW', 2]]),
      reject: true,
      maxStoredRejected: 10_000,
    };
    const full = fullCheck(w);
    expect(full.found.map((pair) => [pair.tier, pair.a.clientId, pair.b.clientId])).toEqual([['email', 'NEW', 'OLD']]);
    expect(full.decision.pendingRenames.map(([clientId]) => clientId)).toEqual(['OLD']);
    const { size, ...probe } = probed(w);
    expect(probe).toEqual(full);
  });

  it('pairs are found at all, some in blocks compared in part, some rows held back', () => {
    const totals = { pairs: 0, partial: 0, heldBack: 0, name: 0, smaller: 0 };
    for (const seed of seeds) {
      const w = world(seed);
      const full = fullCheck(w);
      const { size } = probed(w);
      totals.pairs += full.found.length;
      totals.name += full.found.filter((pair) => pair.tier === 'name').length;
      totals.partial += full.partialBlocks.length;
      totals.heldBack += full.decision.heldBack.length;
      if (size < w.firstRowById.size) totals.smaller++;
    }
    // The comparison above means something only if the cases meet what the check does.
    expect(totals.pairs).toBeGreaterThan(100);
    expect(totals.name).toBeGreaterThan(20);
    expect(totals.partial).toBeGreaterThan(0);
    expect(totals.heldBack).toBeGreaterThan(10);
    expect(totals.smaller).toBeGreaterThan(CASES / 2);
  });
});
