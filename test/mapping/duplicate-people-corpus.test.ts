/**
 * Precision and recall of the same-person check at its default settings, on the held-out half of
 * the labelled corpus (test/fixtures/duplicate-people/: realistic name frequencies, planted
 * duplicates and look-alikes). The defaults were tuned on the other half (TUNING_SEED); these are
 * the figures docs/mapping.md states. Precision counts every pair given, planted or not.
 */
import { describe, expect, it } from 'vitest';
import { DuplicatePeopleFinder } from '../../src/mapping/duplicate-people.js';
import { generateCorpus, HELD_OUT_SEED, precisionRecall, recordsOf } from '../fixtures/duplicate-people/corpus.js';

describe('the same-person check on the held-out half of the labelled corpus (50,000 rows)', () => {
  const corpus = generateCorpus(50_000, HELD_OUT_SEED);
  const finder = new DuplicatePeopleFinder();
  for (const record of recordsOf(corpus)) finder.add(record);
  const pairs: Array<{ a: string; b: string; tier: 'orcid' | 'email' | 'name' }> = [];
  const list = finder.find({ onPair: (pair) => pairs.push({ a: pair.a.clientId, b: pair.b.clientId, tier: pair.tier }) });
  const score = precisionRecall(corpus, pairs);

  it('precision ≥ 0.95 and recall ≥ 0.9 over all planted pairs', () => {
    expect(score.all.planted).toBe(1000);
    expect(score.all.precision).toBeGreaterThanOrEqual(0.95);
    expect(score.all.recall).toBeGreaterThanOrEqual(0.9);
    // The figures docs/mapping.md gives, to three places.
    expect([score.all.precision, score.all.recall].map((x) => x.toFixed(3))).toEqual(['0.993', '0.955']);
  });

  it('per tier: ORCID iD and email exact, name and affiliation precise and recalling nearly nine in ten', () => {
    expect(score.orcid).toMatchObject({ precision: 1, recall: 1 });
    expect(score.email).toMatchObject({ precision: 1, recall: 1 });
    expect(score.name.precision).toBeGreaterThanOrEqual(0.95);
    expect(score.name.recall).toBeGreaterThanOrEqual(0.89);
    expect([score.name.precision, score.name.recall].map((x) => x.toFixed(3))).toEqual(['0.983', '0.898']);
  });

  it('lists at most 500 pairs, the strongest first, and counts them all', () => {
    expect(list.total).toBe(pairs.length);
    const listed = list.pairs();
    expect(listed).toHaveLength(500);
    expect(listed[0]!.tier).toBe('orcid');
    expect(list.found).toEqual({ orcid: score.orcid.reported, email: score.email.reported, name: score.name.reported });
  });
});
