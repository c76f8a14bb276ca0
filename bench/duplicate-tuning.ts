/**
 * How COMMON_WORD_ROWS was chosen (src/mapping/duplicate-people.ts): precision and recall of the
 * same-person check on the tuning half of the labelled corpus (test/fixtures/duplicate-people/,
 * TUNING_SEED, 50,000 rows) for each candidate, then the chosen default on the held-out half
 * (HELD_OUT_SEED), whose figures docs/mapping.md states and a test asserts. Counts, not times:
 * one run is the figure.
 *
 *   npx tsx bench/duplicate-tuning.ts
 */
import { COMMON_WORD_ROWS, DuplicatePeopleFinder, DUPLICATE_PEOPLE_MAX_ROWS } from '../src/mapping/duplicate-people.js';
import { generateCorpus, HELD_OUT_SEED, precisionRecall, recordsOf, TUNING_SEED, type Corpus } from '../test/fixtures/duplicate-people/corpus.js';

const ROWS = 50_000;
const CANDIDATES = [2, 3, 5, 8, 10, 12, 15, 20];

function score(corpus: Corpus, commonWordRows: number) {
  const finder = new DuplicatePeopleFinder(DUPLICATE_PEOPLE_MAX_ROWS, commonWordRows);
  for (const record of recordsOf(corpus)) finder.add(record);
  const pairs: Array<{ a: string; b: string; tier: 'orcid' | 'email' | 'name' }> = [];
  finder.find({ onPair: (pair) => pairs.push({ a: pair.a.clientId, b: pair.b.clientId, tier: pair.tier }) });
  return precisionRecall(corpus, pairs);
}

const f = (x: number) => x.toFixed(3);
const tuning = generateCorpus(ROWS, TUNING_SEED);
console.log(`tuning half (seed ${TUNING_SEED}, ${ROWS} rows): COMMON_WORD_ROWS, precision / recall over all planted pairs, and of the name tier`);
for (const candidate of CANDIDATES) {
  const s = score(tuning, candidate);
  console.log(`  ${String(candidate).padStart(2)}: all ${f(s.all.precision)} / ${f(s.all.recall)}, name ${f(s.name.precision)} / ${f(s.name.recall)}${candidate === COMMON_WORD_ROWS ? '  (the default)' : ''}`);
}
const held = score(generateCorpus(ROWS, HELD_OUT_SEED), COMMON_WORD_ROWS);
console.log(`held-out half (seed ${HELD_OUT_SEED}), COMMON_WORD_ROWS = ${COMMON_WORD_ROWS}:`);
for (const tier of ['orcid', 'email', 'name', 'all'] as const) console.log(`  ${tier.padEnd(5)} precision ${f(held[tier].precision)} (${held[tier].truePositives}/${held[tier].reported}), recall ${f(held[tier].recall)} (${held[tier].found}/${held[tier].planted})`);
