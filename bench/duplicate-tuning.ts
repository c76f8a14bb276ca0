/**
 * How COMMON_WORD_ROWS was chosen (src/mapping/duplicate-people.ts): precision and recall of the
 * same-person check on the tuning half of the labelled corpus (test/fixtures/duplicate-people/,
 * TUNING_SEED, 50,000 rows) for each candidate; then, at the default, the tuning half's missed
 * duplicates and false pairs by kind (what evidence they carry: the rules were chosen from this
 * table); then the chosen default on the held-out half (HELD_OUT_SEED), whose figures
 * docs/mapping.md states and a test asserts. Counts, not times: one run is the figure.
 *
 *   npx tsx bench/duplicate-tuning.ts [--tuning-only]
 *
 * `--tuning-only` leaves the held-out half unscored: while choosing, do not look at it.
 */
import { COMMON_WORD_ROWS, DuplicatePeopleFinder, DUPLICATE_PEOPLE_MAX_ROWS, normaliseName, normaliseText } from '../src/mapping/duplicate-people.js';
import { generateCorpus, HELD_OUT_SEED, precisionRecall, recordsOf, TUNING_SEED, type Corpus, type Tier } from '../test/fixtures/duplicate-people/corpus.js';

const ROWS = 50_000;
const CANDIDATES = [2, 3, 5, 8, 10, 12, 15, 20];

type Found = Array<{ a: string; b: string; tier: Tier }>;

function pairsOf(corpus: Corpus, commonWordRows: number): Found {
  const finder = new DuplicatePeopleFinder(DUPLICATE_PEOPLE_MAX_ROWS, commonWordRows);
  for (const record of recordsOf(corpus)) finder.add(record);
  const pairs: Found = [];
  finder.find({ onPair: (pair) => pairs.push({ a: pair.a.clientId, b: pair.b.clientId, tier: pair.tier }) });
  return pairs;
}

/**
 * The name tier's missed duplicates and false pairs, by kind: what an editor would see in the two
 * rows (an address at the same domain, a common name: each word on COMMON_WORD_ROWS rows or more;
 * how many rows at the affiliation carry each side's name).
 */
function byKind(corpus: Corpus, pairs: Found): { missed: Map<string, number>; false: Map<string, number> } {
  const byId = new Map(corpus.rows.map((row) => [row.clientId, row]));
  const rowsByWord = new Map<string, number>();
  const rowsHere = new Map<string, number>();
  const at = (row: Corpus['rows'][number]) => `${normaliseText(row.affiliation)}\u0000${normaliseName(row.name)}`;
  for (const row of corpus.rows) {
    for (const word of normaliseName(row.name).split(' ')) rowsByWord.set(word, (rowsByWord.get(word) ?? 0) + 1);
    rowsHere.set(at(row), (rowsHere.get(at(row)) ?? 0) + 1);
  }
  const common = (name: string) => normaliseName(name).split(' ').every((word) => (rowsByWord.get(word) ?? 0) >= COMMON_WORD_ROWS);
  const domain = (email: string) => email.slice(email.lastIndexOf('@') + 1);
  const tally = (counts: Map<string, number>, kind: string) => counts.set(kind, (counts.get(kind) ?? 0) + 1);
  const key = (a: string, b: string) => (a < b ? `${a} ${b}` : `${b} ${a}`);
  const given = new Set(pairs.map((pair) => key(pair.a, pair.b)));
  const missed = new Map<string, number>();
  for (const dup of corpus.duplicates) {
    const [a, b] = [byId.get(dup.a)!, byId.get(dup.b)!];
    if ((a.orcid !== '' && a.orcid === b.orcid) || a.email === b.email || given.has(key(dup.a, dup.b))) continue;
    const sameName = normaliseName(a.name) === normaliseName(b.name);
    const here = sameName ? rowsHere.get(at(a))! - 2 : rowsHere.get(at(a))! - 1;
    const address = domain(a.email) === domain(b.email) ? 'a new address at the same domain' : 'a new address elsewhere';
    const name = sameName ? (common(a.name) ? 'the same common name' : 'the same rare name') : 'a different spelling';
    tally(missed, `${dup.kind}: ${address}, ${name}, ${here === 0 ? 'no other row' : `${here} other row${here === 1 ? '' : 's'}`} there with the full name`);
  }
  const wrong = new Map<string, number>();
  for (const pair of pairs) {
    const [a, b] = [byId.get(pair.a)!, byId.get(pair.b)!];
    if (a.person === b.person) continue;
    const planted = a.planted === 'look_alike' || b.planted === 'look_alike' ? 'a planted look-alike' : 'two namesakes by chance';
    const orcids = [a, b].filter((row) => row.orcid !== '').length;
    tally(wrong, `${pair.tier}: ${planted}, ${domain(a.email) === domain(b.email) ? 'addresses at one domain' : 'addresses at two domains'}, ${common(a.name) ? 'a common name' : 'a rarer name'}, ${orcids} ORCID iD${orcids === 1 ? '' : 's'}`);
  }
  return { missed, false: wrong };
}

const f = (x: number) => x.toFixed(3);
const tuning = generateCorpus(ROWS, TUNING_SEED);
console.log(`tuning half (seed ${TUNING_SEED}, ${ROWS} rows): COMMON_WORD_ROWS, precision / recall over all planted pairs, and of the name tier`);
for (const candidate of CANDIDATES) {
  const s = precisionRecall(tuning, pairsOf(tuning, candidate));
  console.log(`  ${String(candidate).padStart(2)}: all ${f(s.all.precision)} / ${f(s.all.recall)}, name ${f(s.name.precision)} / ${f(s.name.recall)}${candidate === COMMON_WORD_ROWS ? '  (the default)' : ''}`);
}
const kinds = byKind(tuning, pairsOf(tuning, COMMON_WORD_ROWS));
const sorted = (counts: Map<string, number>) => [...counts].sort(([x, m], [y, n]) => n - m || (x < y ? -1 : 1));
console.log(`tuning half, COMMON_WORD_ROWS = ${COMMON_WORD_ROWS}: the name tier's missed duplicates, by kind`);
for (const [kind, count] of sorted(kinds.missed)) console.log(`  ${String(count).padStart(3)}  ${kind}`);
console.log('and its pairs of two different people, by kind');
for (const [kind, count] of sorted(kinds.false)) console.log(`  ${String(count).padStart(3)}  ${kind}`);
if (process.argv.includes('--tuning-only')) process.exit(0);
const held = generateCorpus(ROWS, HELD_OUT_SEED);
const heldScore = precisionRecall(held, pairsOf(held, COMMON_WORD_ROWS));
console.log(`held-out half (seed ${HELD_OUT_SEED}), COMMON_WORD_ROWS = ${COMMON_WORD_ROWS}:`);
for (const tier of ['orcid', 'email', 'name', 'all'] as const) console.log(`  ${tier.padEnd(5)} precision ${f(heldScore[tier].precision)} (${heldScore[tier].truePositives}/${heldScore[tier].reported}), recall ${f(heldScore[tier].recall)} (${heldScore[tier].found}/${heldScore[tier].planted})`);
