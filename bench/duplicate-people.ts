/**
 * The same person under two client_ids at scale (`npm run bench -- --only=duplicates`): 100,000
 * rows of the labelled corpus (test/fixtures/duplicate-people/: published name frequencies for
 * fourteen countries, 2 % planted duplicates, 1 % planted look-alikes). Each run times the plan's
 * per-record work on those records (canonical JSON and hash of each, src/plan/canonical.ts)
 * without the check and with it (each record also handed to the finder, then the pairs found, as
 * src/sync/gather.ts does: src/mapping/duplicate-people.ts), in alternating order; the difference
 * is the check's cost beyond the plan. Also: precision and recall against the labels, per tier,
 * and how many pairs a report would list of those found. Seeded: the same roster every run.
 */
import { loadavg } from 'node:os';
import { DuplicatePeopleFinder, MAX_LISTED_PAIRS } from '../src/mapping/duplicate-people.js';
import { canonicalJson, hashJson } from '../src/plan/canonical.js';
import { generateCorpus, precisionRecall, recordsOf, type TierScore } from '../test/fixtures/duplicate-people/corpus.js';
import { spread, type Spread } from './stats.js';

export interface DuplicatesResult {
  rows: number;
  planted: number;
  found: number;
  /** Planted pairs found, over planted. */
  recall: number;
  /** Pairs given that are one person, over pairs given. */
  precision?: number;
  /** Precision and recall by tier (orcid, email, name) and over all. */
  tiers?: Record<string, TierScore>;
  /** Pairs found, and how many of them a report lists (the strongest MAX_LISTED_PAIRS). */
  pairsFound?: number;
  pairsListed?: number;
  /** The plan's per-record work alone (canonical JSON + hash of every record). */
  withoutMs: Spread;
  /** The same work with the check: each record added to the finder, then the pairs found. */
  withMs: Spread;
  /** withMs - withoutMs, per run: the check's cost beyond the plan (target: under 1000 ms). */
  differenceMs: Spread;
  /** withMs / withoutMs, per run. */
  ratio: Spread;
  /** Blocks compared in part only (past their caps). */
  partialBlocks: number;
  /** The machine's 1-minute load average when the section ended (other work slows both sides alike). */
  loadAverage: number;
}

export async function duplicatePeopleBenchmark(quick: boolean, log: (message: string) => void): Promise<DuplicatesResult> {
  const rows = 100_000;
  const runs = quick ? 3 : 7;
  const corpus = generateCorpus(rows, 42);
  const records = recordsOf(corpus);
  log(`duplicates: ${rows} corpus rows, ${corpus.duplicates.length} planted, ${runs} runs`);
  const plan = (finder?: DuplicatePeopleFinder) => {
    const started = performance.now();
    let sink = 0;
    for (const record of records) {
      sink += hashJson(canonicalJson(record.fields)).length;
      finder?.add(record);
    }
    const all: Array<{ a: string; b: string; tier: 'orcid' | 'email' | 'name' }> = [];
    const list = finder?.find({ onPair: (pair) => all.push({ a: pair.a.clientId, b: pair.b.clientId, tier: pair.tier }) });
    const pairs = list?.pairs() ?? [];
    if (sink === 0) throw new Error('unreachable: keeps the plan work from being optimised away');
    return { ms: performance.now() - started, pairs, all };
  };
  const without: number[] = [];
  const withCheck: number[] = [];
  let scores: Record<string, TierScore> = {};
  let partialBlocks = 0;
  let pairsFound = 0;
  let pairsListed = 0;
  for (let run = 0; run < runs; run++) {
    const finder = new DuplicatePeopleFinder();
    const first = run % 2 === 0 ? plan() : plan(finder);
    const second = run % 2 === 0 ? plan(finder) : plan();
    const [base, checked] = run % 2 === 0 ? [first, second] : [second, first];
    scores = precisionRecall(corpus, checked!.all);
    pairsFound = checked!.all.length;
    pairsListed = checked!.pairs.length;
    partialBlocks = finder.partialBlocks.length;
    without.push(base!.ms);
    withCheck.push(checked!.ms);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return {
    rows,
    planted: corpus.duplicates.length,
    found: scores.all!.found,
    recall: scores.all!.recall,
    precision: scores.all!.precision,
    tiers: scores,
    pairsFound,
    pairsListed: Math.min(pairsListed, MAX_LISTED_PAIRS),
    withoutMs: spread(without),
    withMs: spread(withCheck),
    differenceMs: spread(withCheck.map((ms, i) => ms - without[i]!)),
    ratio: spread(withCheck.map((ms, i) => ms / without[i]!)),
    partialBlocks,
    loadAverage: Math.round(loadavg()[0]! * 10) / 10,
  };
}
