/**
 * Two ways to name the encoding of an undeclared legacy CSV, compared on the same files:
 *
 *   A. chardet's byte models (jschardet 4, a port of Python's chardet: byte n-gram models trained
 *      per language and encoding) on the file's bytes, each reading then checked to look like text,
 *      the best taken when its confidence is twice the next one's. This is what the reader did
 *      before (on one 64 KB chunk; here on the whole file, to its advantage).
 *   B. letter statistics of real text (src/sources/encoding/detect.ts): every non-ASCII word of the
 *      file read in each candidate, weighed against letter and letter-pair frequencies of the
 *      Universal Declaration of Human Rights in that encoding's languages.
 *
 * Files: the corpus's undeclared legacy files (test/fixtures/roster-corpus, tuned on), and
 * held-out rosters made afresh from names not in the corpus (held-out.ts; a new seed each run
 * unless --seed=N). Each read is right, refused (with a first offer that reads the file right, or
 * not) or silently wrong.
 *
 *   npx tsx bench/encoding-detectors.ts [--seed=N] [--count=600] [--sweep]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { CORPUS_DIR, loadCases } from '../test/fixtures/roster-corpus/cases.js';
import { heldOutRosters } from '../test/fixtures/roster-corpus/held-out.js';
import { detectFromTally, looksLikeText, TUNING, type DetectorTuning } from '../src/sources/encoding/detect.js';
import { encodingOfLabel, iconvCodec } from '../src/sources/encoding/labels.js';
import { tallyBuffer } from '../src/sources/encoding/word-tally.js';

const argv = process.argv.slice(2);
const seed = Number(argv.find((arg) => arg.startsWith('--seed='))?.slice(7) ?? Date.now() % 1_000_000);
const count = Number(argv.find((arg) => arg.startsWith('--count='))?.slice(8) ?? 600);

interface Sample {
  name: string;
  bytes: Buffer;
  /** The file's text (as the encoding it was written in reads it). */
  text: string;
}
type Outcome = 'right' | 'refusedRight' | 'refusedWrong' | 'wrong';
/** A detector's answer: the encoding it reads the file in, or the encodings it offers, best first. */
type Answer = { accepted: string } | { offered: string[] };

const decode = (bytes: Buffer, encoding: string): string => iconv.decode(bytes, iconvCodec(encoding)).normalize('NFC');

function judge(sample: Sample, answer: Answer): Outcome {
  const expected = sample.text.normalize('NFC');
  if ('accepted' in answer) return decode(sample.bytes, answer.accepted) === expected ? 'right' : 'wrong';
  const first = answer.offered[0];
  return first !== undefined && decode(sample.bytes, first) === expected ? 'refusedRight' : 'refusedWrong';
}

// --- A: chardet's byte models ------------------------------------------------------------------
const CHARDET_NAMES: Record<string, string> = {
  cp1250: 'windows-1250', cp1251: 'windows-1251', cp1252: 'windows-1252', 'iso8859-1': 'windows-1252', cp1253: 'windows-1253', cp1254: 'windows-1254', 'iso8859-9': 'windows-1254',
  cp1255: 'windows-1255', cp1256: 'windows-1256', cp1257: 'windows-1257', cp1258: 'windows-1258', cp874: 'windows-874', 'tis-620': 'windows-874', 'iso8859-2': 'ISO-8859-2', 'iso8859-5': 'ISO-8859-5',
  'iso8859-7': 'ISO-8859-7', 'iso8859-13': 'ISO-8859-13', 'iso8859-15': 'ISO-8859-15', 'koi8-r': 'KOI8-R', 'koi8-u': 'KOI8-U', cp866: 'IBM866', 'mac-roman': 'macintosh', 'mac-cyrillic': 'x-mac-cyrillic',
  cp932: 'Shift_JIS', shift_jis_2004: 'Shift_JIS', euc_jis_2004: 'EUC-JP', gb18030: 'gb18030', big5hkscs: 'Big5', cp949: 'EUC-KR', euc_kr: 'EUC-KR',
};
type DetectAll = (bytes: Uint8Array, options: Record<string, unknown>) => Array<{ encoding: string | null; confidence: number }>;
const { chardet } = (await import('jschardet')) as unknown as { chardet: { detectAll: DetectAll } };

function chardetAnswer(bytes: Buffer): Answer {
  const found = chardet.detectAll(bytes, { ignoreThreshold: true, compatNames: false, includeEncodings: Object.keys(CHARDET_NAMES), maxBytes: bytes.length });
  const readings: Array<{ encoding: string; confidence: number; text: string }> = [];
  for (const { encoding: name, confidence } of found) {
    const encoding = name === null ? undefined : CHARDET_NAMES[name];
    if (encoding === undefined || confidence <= 0) continue;
    const text = decode(bytes, encoding);
    const same = readings.find((reading) => reading.text === text);
    if (same) same.confidence = Math.max(same.confidence, confidence);
    else if (looksLikeText(text)) readings.push({ encoding, confidence, text });
  }
  readings.sort((a, b) => b.confidence - a.confidence);
  const [best, next] = readings;
  if (best && (next === undefined || best.confidence >= 2 * next.confidence)) return { accepted: best.encoding };
  return { offered: readings.map((reading) => reading.encoding) };
}

// --- B: letter statistics ----------------------------------------------------------------------
function lettersAnswer(bytes: Buffer, tuning: DetectorTuning = TUNING): Answer {
  const detection = detectFromTally(tallyBuffer(bytes), tuning);
  if (detection.kind === 'accepted') return { accepted: detection.reading.encoding };
  return { offered: detection.kind === 'ambiguous' ? detection.readings.map((reading) => (detection.contradiction ? detection.contradiction.chosen.encoding : reading.encoding)) : [] };
}

// --- The files -----------------------------------------------------------------------------------
const corpus: Sample[] = loadCases()
  .filter((entry) => entry.detection !== undefined)
  .map((entry) => {
    const bytes = readFileSync(join(CORPUS_DIR, entry.file));
    return { name: entry.file, bytes, text: decode(bytes, encodingOfLabel(entry.detection!) ?? entry.detection!) };
  });
const heldOut: Sample[] = heldOutRosters(seed, count).map((roster, i) => ({ name: `held-out ${i} ${roster.language} ${roster.encoding}`, bytes: roster.bytes, text: roster.text }));

function tally(samples: readonly Sample[], answer: (bytes: Buffer) => Answer, misses?: string[]): Record<Outcome, number> {
  const counts: Record<Outcome, number> = { right: 0, refusedRight: 0, refusedWrong: 0, wrong: 0 };
  for (const sample of samples) {
    const outcome = judge(sample, answer(sample.bytes));
    counts[outcome]++;
    if (outcome === 'wrong' && misses) misses.unshift(`  ${sample.name}: ${outcome}`);
    else if (outcome !== 'right' && misses && misses.length < 30) misses.push(`  ${sample.name}: ${outcome}`);
  }
  return counts;
}

const row = (label: string, set: string, counts: Record<Outcome, number>): string => {
  const total = counts.right + counts.refusedRight + counts.refusedWrong + counts.wrong;
  return `| ${label} | ${set} | ${total} | ${counts.right} (${((100 * counts.right) / total).toFixed(1)} %) | ${counts.refusedRight} | ${counts.refusedWrong} | ${counts.wrong} |`;
};

const out = [`Undeclared legacy files: ${corpus.length} of the corpus, ${heldOut.length} held-out rosters (seed ${seed}).`, '', '| approach | files | n | read right | refused, right encoding first | refused, other first | silently wrong |', '| --- | --- | ---: | ---: | ---: | ---: | ---: |'];
const misses: string[] = [];
out.push(row('A. chardet byte models', 'corpus', tally(corpus, chardetAnswer)));
out.push(row('A. chardet byte models', 'held-out', tally(heldOut, chardetAnswer)));
out.push(row('B. letter statistics', 'corpus', tally(corpus, (bytes) => lettersAnswer(bytes), misses)));
out.push(row('B. letter statistics', 'held-out', tally(heldOut, (bytes) => lettersAnswer(bytes), misses)));
if (argv.includes('--sweep')) {
  // The settings around the chosen ones, on the corpus (tuning on held-out rosters would make them no longer held out).
  for (const acceptNats of [6, 8, 10]) {
    for (const switchNats of [1, 3]) {
      for (const wordCapNats of [4, 6]) {
        const tuning = { ...TUNING, acceptNats, switchNats, wordCapNats };
        out.push(row(`B ${JSON.stringify(tuning)}`, 'corpus', tally(corpus, (bytes) => lettersAnswer(bytes, tuning))));
      }
    }
  }
}
if (misses.length > 0) out.push('', 'B, not read right:', ...misses);
process.stdout.write(`${out.join('\n')}\n`);
