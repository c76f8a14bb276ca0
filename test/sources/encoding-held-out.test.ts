/**
 * The encoding detector on rosters it was not tuned on (test/fixtures/roster-corpus/held-out.ts:
 * names that are not in the corpus, in the same languages and encodings, in Excel's and
 * LibreOffice's layouts): at least 95 % read right, none read wrong, the rest refused. A fixed
 * seed keeps the test repeatable; bench/encoding-detectors.ts draws a new one each run.
 */
import { describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { detectFromTally } from '../../src/sources/encoding/detect.js';
import { iconvCodec } from '../../src/sources/encoding/labels.js';
import { tallyBuffer } from '../../src/sources/encoding/word-tally.js';
import { heldOutRosters } from '../fixtures/roster-corpus/held-out.js';

describe('encoding detection on held-out rosters', () => {
  it('reads at least 95 % of 300 right and none wrong', () => {
    const outcomes = { right: 0, refused: 0, wrong: [] as string[] };
    for (const roster of heldOutRosters(20261127, 300)) {
      const detection = detectFromTally(tallyBuffer(roster.bytes));
      if (detection.kind !== 'accepted') {
        outcomes.refused++;
        continue;
      }
      const text = iconv.decode(roster.bytes, iconvCodec(detection.reading.encoding)).normalize('NFC');
      if (text === roster.text.normalize('NFC')) outcomes.right++;
      else outcomes.wrong.push(`${roster.language} ${roster.encoding} read as ${detection.reading.encoding}`);
    }
    expect(outcomes.wrong).toEqual([]);
    expect(outcomes.right / 300).toBeGreaterThanOrEqual(0.95);
  });
});
