/**
 * Which legacy encoding a CSV file that is not UTF-8 was saved in, when the pipeline does not
 * say. Every non-ASCII word of the file (word-tally.ts) is read in each candidate encoding, and
 * each reading is weighed against letter statistics of real text in the languages that encoding
 * is used for (letter-profiles.ts: how often each letter, and each pair of neighbours around a
 * non-ASCII letter, occurs in the Universal Declaration of Human Rights in those languages). A
 * reading that cannot be what someone typed (control characters, a symbol glued to a letter as in
 * "£ukasz", a lowercase run turning uppercase as in "дМИТРИЙ", two scripts in a word) rules its
 * encoding out. The best reading is taken only when the evidence for it over every plausible
 * reading that differs from it reaches `TUNING.acceptNats` (each word's say capped), and when no word of the file reads clearly better in another
 * encoding than in the chosen one; otherwise the file is refused with the candidates, best first,
 * and the names each way: a wrong guess would put misspelt names into the service.
 *
 * docs/mapping.md ("Encodings") gives the figures; bench/encoding-detectors.ts compares this with
 * chardet's byte models (jschardet), the approach it replaced.
 */
import iconv from 'iconv-lite';
import { iconvCodec } from './labels.js';
import { LETTER_PROFILES, type LetterProfile } from './letter-profiles.js';
import { tallyBuffer, type TalliedWord, type WordTally } from './word-tally.js';

/**
 * Encodings considered, as the WHATWG standard names them, each with the language groups of
 * letter-profiles.ts it is written in: the default CSV encodings of Excel's locales (Windows code
 * pages, Mac Roman, the East Asian double-byte sets) and the legacy ones still written by Unix
 * and DOS tools. Rarer ones (ISO-8859-3/4/6/8/10/14/16) are read when declared, never guessed:
 * they look too much like the common ones to be told apart on names.
 */
const WESTERN = ['eng', 'fra', 'deu_1996', 'spa', 'por_PT', 'por_BR', 'ita', 'nld', 'dan', 'swe', 'nob', 'fin', 'isl', 'cat', 'glg', 'eus', 'gle'];
const CENTRAL = ['pol', 'ces', 'slk', 'hun', 'hrv', 'slv', 'ron_2006', 'bos_latn', 'srp_latn', 'als', 'deu_1996'];
const CYRILLIC = ['rus', 'ukr', 'bel', 'bul', 'mkd', 'srp_cyrl'];
const BALTIC = ['est', 'lav', 'lit', 'pol', 'deu_1996', 'fin', 'swe'];
const CANDIDATES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['windows-1252', WESTERN],
  ['ISO-8859-15', WESTERN],
  ['macintosh', WESTERN],
  ['windows-1250', CENTRAL],
  ['ISO-8859-2', CENTRAL],
  ['windows-1251', CYRILLIC],
  ['KOI8-R', ['rus', 'bel', 'bul']],
  ['KOI8-U', ['ukr', 'rus']],
  ['IBM866', ['rus', 'bel', 'bul']],
  ['ISO-8859-5', CYRILLIC],
  ['x-mac-cyrillic', CYRILLIC],
  ['windows-1253', ['ell_monotonic']],
  ['ISO-8859-7', ['ell_monotonic']],
  ['windows-1254', ['tur', 'azj_latn', ...WESTERN]],
  ['windows-1257', BALTIC],
  ['ISO-8859-13', BALTIC],
  ['windows-1258', ['vie', ...WESTERN]],
  ['windows-1255', ['heb']],
  ['windows-1256', ['arb']],
  ['windows-874', ['tha']],
  ['Shift_JIS', ['jpn']],
  ['EUC-JP', ['jpn']],
  ['gb18030', ['cmn_hans']],
  ['Big5', ['cmn_hant']],
  ['EUC-KR', ['kor']],
];

/** Preferred name when several encodings read the file the same way: Excel's defaults first. */
const PREFERENCE = [
  'windows-1252', 'windows-1250', 'windows-1251', 'windows-1253', 'windows-1254', 'windows-1257', 'windows-1258',
  'windows-1255', 'windows-1256', 'windows-874', 'Shift_JIS', 'gb18030', 'Big5', 'EUC-KR', 'EUC-JP',
];

export interface DetectorTuning {
  /** How much likelier (natural log) the best reading of the whole file must be than the next different one. */
  acceptNats: number;
  /** A word that reads this much likelier in another encoding, as someone could have typed it, contradicts the choice. */
  contradictNats: number;
  /** Weight of "each letter on its own" in a pair's probability: how rare, not impossible, a pair the text never showed is. */
  unseenPairShare: number;
  /** What a word costs for being in another language than the file's main one. */
  switchNats: number;
  /** The most one word (times its weight) may add to the evidence for a reading over another. */
  wordCapNats: number;
}

/** Chosen on the corpus, then checked on held-out rosters (bench/encoding-detectors.ts, docs/mapping.md). */
export const TUNING: DetectorTuning = { acceptNats: 6, contradictNats: 8, unseenPairShare: 0.3, switchNats: 3, wordCapNats: 6 };
export const ACCEPT_NATS = TUNING.acceptNats;

export interface Reading {
  encoding: string;
  /** Other encodings that read the file identically. */
  same: string[];
  /** Log-likelihood of the file's non-ASCII words in this reading (higher is likelier). */
  score: number;
  /** Why the encoding cannot be right (a word it reads as no one types), if so. */
  ruledOut?: { word: TalliedWord; reading: string };
  /** The file's words, read this way, in tally order. */
  texts: string[];
}

/** A word of the file that reads clearly better in another encoding than in the chosen one. */
export interface Contradiction {
  word: TalliedWord;
  chosen: { encoding: string; text: string };
  other: { encoding: string; text: string };
}

export type Detection =
  | { kind: 'accepted'; reading: Reading; rivals: Reading[] }
  | { kind: 'ambiguous'; readings: Reading[]; contradiction?: Contradiction }
  | { kind: 'none' };

export function decodeAs(bytes: Buffer, encoding: string): string {
  return iconv.decode(bytes, iconvCodec(encoding));
}

/** Detects the encoding of a sample held in memory (a file's start, or a chunk). */
export function detectLegacyEncoding(sample: Buffer): Detection {
  return detectFromTally(tallyBuffer(sample));
}

/** Detects the encoding of a file from the tally of its non-ASCII words. */
export function detectFromTally(tally: WordTally, tuning: DetectorTuning = TUNING): Detection {
  const words = [...tally.words.values()];
  if (words.length === 0) return { kind: 'none' };
  // One decode per candidate: the words joined by line feeds, which no candidate reads otherwise.
  const joined = Buffer.concat(words.flatMap((word) => [word.bytes, NEWLINE]));
  const readings: Reading[] = [];
  const wordScores = new Map<Reading, Float64Array>();
  for (const [encoding, languages] of CANDIDATES) {
    const texts = decodeAs(joined, encoding).normalize('NFC').split('\n').slice(0, words.length);
    const same = readings.find((reading) => reading.texts.every((text, i) => text === texts[i]));
    const reading: Reading = same ?? { encoding, same: [], score: -Infinity, texts };
    if (same) same.same.push(encoding);
    else {
      const bad = texts.findIndex((text) => !looksLikeText(text));
      if (bad !== -1) reading.ruledOut = { word: words[bad]!, reading: texts[bad]! };
      readings.push(reading);
    }
    const perLanguage = languages.map((language) => Float64Array.from(texts, (text) => wordScore(text, profile(language), tuning.unseenPairShare)));
    const previous = wordScores.get(reading);
    const { score, scores } = fileScore(previous ? [previous, ...perLanguage] : perLanguage, words, tuning.switchNats);
    if (score > reading.score) {
      reading.score = score;
      wordScores.set(reading, scores);
    }
  }
  for (const reading of readings) {
    // Name the group by Excel's default among the encodings that read the file alike.
    const names = [reading.encoding, ...reading.same];
    const preferred = PREFERENCE.find((name) => names.includes(name)) ?? reading.encoding;
    reading.same = names.filter((name) => name !== preferred);
    reading.encoding = preferred;
  }
  // Plausible readings first, each by its weakest lead over another plausible one, then by likelihood.
  const plausible = readings.filter((reading) => !reading.ruledOut);
  const lead = new Map(plausible.map((reading) => [reading, Math.min(Infinity, ...plausible.filter((other) => other !== reading).map((other) => evidenceFor(reading, other, wordScores, words, tuning.wordCapNats)))]));
  readings.sort((a, b) => Number(a.ruledOut !== undefined) - Number(b.ruledOut !== undefined) || (lead.get(b) ?? 0) - (lead.get(a) ?? 0) || b.score - a.score);
  const [best] = readings;
  if (!best || best.ruledOut) return { kind: readings.length > 0 ? 'ambiguous' : 'none', readings: readings.slice(0, 4) };
  const rivals = readings.slice(1);
  if (lead.get(best)! < tuning.acceptNats) return { kind: 'ambiguous', readings: plausible.sort((a, b) => lead.get(b)! - lead.get(a)!).slice(0, 4) };
  const contradiction = contradictionOf(best, readings, words, wordScores, tuning.contradictNats);
  if (contradiction) return { kind: 'ambiguous', readings: [best, ...rivals.filter((r) => r.encoding === contradiction.other.encoding)], contradiction };
  return { kind: 'accepted', reading: best, rivals };
}

/**
 * The likelihood of the file's words read one way: a roster has a main language and names from
 * others, so each word is weighed in the main language, or in another for `switchNats` more; the
 * main language is the one that makes the file likeliest. Returns each word's score under it.
 */
function fileScore(perLanguage: readonly Float64Array[], words: readonly TalliedWord[], switchNats: number): { score: number; scores: Float64Array } {
  const anyLanguage = Float64Array.from(words, (_, i) => Math.max(...perLanguage.map((scores) => scores[i]!)));
  let best = { score: -Infinity, scores: anyLanguage };
  for (const scores of perLanguage) {
    const mixed = Float64Array.from(scores, (score, i) => Math.max(score, anyLanguage[i]! - switchNats));
    const total = mixed.reduce((sum, score, i) => sum + score * weight(words[i]!), 0);
    if (total > best.score) best = { score: total, scores: mixed };
  }
  return best;
}

const NEWLINE = Buffer.from('\n');
const MULTI_BYTE = new Set(['Shift_JIS', 'EUC-JP', 'gb18030', 'Big5', 'EUC-KR']);

/**
 * How much likelier one reading makes the file than another, on the words they read differently
 * (a word read alike says nothing of the encoding, only of the languages each is used for: "Maël"
 * is no evidence for Windows-1250 because Albanian writes "ë"), each word's say capped at `cap`:
 * the letter statistics come from a few pages of text per language, so no single word (one "Høgh"
 * against one "Hřgh") may decide alone; it takes several that agree.
 */
function evidenceFor(reading: Reading, other: Reading, wordScores: Map<Reading, Float64Array>, words: readonly TalliedWord[], cap: number): number {
  const mine = wordScores.get(reading)!;
  const theirs = wordScores.get(other)!;
  let sum = 0;
  for (let i = 0; i < words.length; i++) {
    if (reading.texts[i] !== other.texts[i]) sum += weight(words[i]!) * Math.max(-cap, Math.min(cap, mine[i]! - theirs[i]!));
  }
  return sum;
}

/** Languages of a reading: those of every encoding that reads the file so. */
const languagesOf = (reading: Reading): string[] => [reading.encoding, ...reading.same].flatMap((encoding) => CANDIDATES.find(([name]) => name === encoding)?.[1] ?? []);

/** The fewest letter pairs of a word that one of the reading's languages never shows. */
function unseenPairs(text: string, reading: Reading): number {
  const raw = [...text];
  const chars = raw.map(lowerLetter);
  let fewest = Infinity;
  for (const language of languagesOf(reading)) {
    const model = profile(language);
    if (!model.pairsKnown) return 0;
    let unseen = 0;
    for (let i = 0; i < chars.length; i++) {
      if ((raw[i]!.codePointAt(0) ?? 0) < 0x80 || chars[i] === '_') continue;
      if (!model.pairs.has((chars[i - 1] ?? '_') + chars[i])) unseen++;
      if (!model.pairs.has(chars[i]! + (chars[i + 1] ?? '_'))) unseen++;
    }
    fewest = Math.min(fewest, unseen);
  }
  return fewest;
}

/** A word repeated many times (an affiliation on every row) counts, but does not drown the names. */
const weight = (word: TalliedWord): number => Math.min(word.count, 4);

/**
 * The first word, in the file's order, that a rival reads likelier by `contradictNats`, as someone
 * could have typed it, than the chosen reading: bytes of another encoding among the chosen one's
 * (a 1252 "Søren" in a 1250 file would be "Sřren").
 */
function contradictionOf(best: Reading, readings: readonly Reading[], words: readonly TalliedWord[], wordScores: Map<Reading, Float64Array>, contradictNats: number): Contradiction | undefined {
  const chosen = wordScores.get(best)!;
  let found: Contradiction | undefined;
  // Letter pairs tell single-byte encodings of one script apart; ideographs, read alone, do not.
  if (MULTI_BYTE.has(best.encoding)) return undefined;
  const rank = (reading: Reading): number => PREFERENCE.indexOf(reading.encoding) >>> 0;
  for (const rival of [...readings].sort((a, b) => rank(a) - rank(b))) {
    if (rival === best || MULTI_BYTE.has(rival.encoding)) continue;
    // A rival ruled out by other words may still read this one as someone typed it, in the same script.
    const theirs = wordScores.get(rival)!;
    for (let i = 0; i < words.length; i++) {
      if (theirs[i]! - chosen[i]! < contradictNats || (found && found.word.line <= words[i]!.line)) continue;
      const mine = best.texts[i]!;
      const other = rival.texts[i]!;
      // A letter read as another letter of the same script: not a letter read as a quote or a symbol.
      if (other === mine || scriptOf(other) !== scriptOf(mine) || letters(other) !== letters(mine) || !looksLikeText(other)) continue;
      // Only a word the chosen reading makes of letter pairs its languages never show, where the rival's are all usual.
      if (unseenPairs(mine, best) < 2 || unseenPairs(other, rival) > 0) continue;
      found = { word: words[i]!, chosen: { encoding: best.encoding, text: best.texts[i]! }, other: { encoding: rival.encoding, text: rival.texts[i]! } };
    }
  }
  return found;
}

export interface Model {
  singles: Map<string, number>;
  pairs: Map<string, number>;
  /** Pairs of base letters (accents taken off: "è" is "e"), and each base letter's count. */
  basePairs: Map<string, number>;
  baseSingles: Map<string, number>;
  singleTotal: number;
  pairTotal: number;
  pairsKnown: boolean;
}

/** A letter without its accents ("è" → "e", "ł" stays "ł"). */
const baseOf = (char: string): string => char.normalize('NFD')[0] ?? char;

function sumBy(counts: Map<string, number>, key: (item: string) => string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const [item, n] of counts) sums.set(key(item), (sums.get(key(item)) ?? 0) + n);
  return sums;
}
const models = new Map<string, Model>();

function parseCounts(packed: string, width: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of packed.split(' ')) {
    const chars = [...item];
    if (chars.length > width) counts.set(chars.slice(0, width).join(''), Number(chars.slice(width).join('')));
  }
  return counts;
}

export function profile(language: string): Model {
  let model = models.get(language);
  if (!model) {
    const table = LETTER_PROFILES[language] as LetterProfile;
    const singles = parseCounts(table.singles, 1);
    const pairs = parseCounts(table.pairs, 2);
    const basePairs = sumBy(pairs, (pair) => [...pair].map(baseOf).join(''));
    model = { singles, pairs, basePairs, baseSingles: sumBy(singles, baseOf), singleTotal: table.singleTotal, pairTotal: table.pairTotal, pairsKnown: table.pairs.length > 0 };
    models.set(language, model);
  }
  return model;
}

/** Letters a language group might have that its text never showed: the smoothing's share of the alphabet. */
const UNSEEN_LETTERS = 2000;

const singleP = (model: Model, char: string): number => ((model.singles.get(char) ?? 0) + 0.1) / (model.singleTotal + 0.1 * UNSEEN_LETTERS);

/** How often a letter is this accented form of its base letter ("è" among all e's). */
function accentShare(model: Model, char: string): number {
  if (char === '_') return 1;
  const base = model.baseSingles.get(baseOf(char)) ?? 0;
  return ((model.singles.get(char) ?? 0) + 0.1) / (base + 1);
}

/**
 * A pair's probability. A pair the text never showed backs off to its base letters' pair and
 * each letter's share of its base ("nè" to "ne" times how often an e is "è"), then to its
 * letters' own: rare, not impossible.
 */
function pairP(model: Model, a: string, b: string, unseenShare: number): number {
  const pa = a === '_' ? 0.15 : singleP(model, a);
  const pb = b === '_' ? 0.15 : singleP(model, b);
  const seen = (model.pairs.get(a + b) ?? 0) / model.pairTotal;
  const base = ((model.basePairs.get(baseOf(a) + baseOf(b)) ?? 0) / model.pairTotal) * accentShare(model, a) * accentShare(model, b);
  return (1 - unseenShare) * seen + unseenShare * (0.9 * base + 0.1 * pa * pb);
}

const LETTER = /\p{L}|\p{M}/u;

/** A character as the profiles count it: a letter in lower case (one code point), anything else "_". */
function lowerLetter(char: string): string {
  if (!LETTER.test(char)) return '_';
  // "İ" lowers to "i" and a combining dot: the letter is "i".
  return String.fromCodePoint(char.toLowerCase().codePointAt(0)!);
}

/**
 * Log-likelihood of a word's non-ASCII characters in a language: for each letter, the pairs it
 * forms with its neighbours; an ideograph or syllable (two bytes in the encodings that hold them)
 * counts as itself four times, so each byte weighs alike whatever the script.
 */
export function wordScore(text: string, model: Model, unseenShare = TUNING.unseenPairShare): number {
  const raw = [...text];
  const chars = raw.map(lowerLetter);
  let score = 0;
  for (let i = 0; i < chars.length; i++) {
    if ((raw[i]!.codePointAt(0) ?? 0) < 0x80) continue;
    const char = chars[i]!;
    if (char === '_' || !model.pairsKnown) {
      // A symbol, or an ideograph or syllable: the latter takes two bytes, each weighed as a letter is (two terms).
      score += (model.pairsKnown ? 2 : 4) * Math.log(singleP(model, char === '_' ? raw[i]! : char));
      continue;
    }
    score += Math.log(pairP(model, chars[i - 1] ?? '_', char, unseenShare)) + Math.log(pairP(model, char, chars[i + 1] ?? '_', unseenShare));
  }
  return score;
}

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFD\p{Co}\p{Cn}]/u;
/** A non-ASCII symbol, punctuation mark or fraction touching a letter ("£ukasz", "Ã©", "¼hlen"), quotes and dashes aside. */
const GLUED_SYMBOL = /\p{L}[^\p{L}\p{Nd}\p{Z}\p{M}\p{Pi}\p{Pf}\p{Ps}\p{Pe}\p{Pd}\u0000-\u007F\u2019]|[^\p{L}\p{Nd}\p{Z}\p{M}\p{Pi}\p{Pf}\p{Ps}\p{Pe}\p{Pd}\u0000-\u007F\u2019]\p{L}/u;
/** A full-width letter beside an ASCII one ("ｓdzka"): a double-byte reading of single-byte text. */
const FULLWIDTH_BESIDE_ASCII = /[\uff21-\uff3a\uff41-\uff5a][A-Za-z]|[A-Za-z][\uff21-\uff3a\uff41-\uff5a]/u;
/** Within a word, a lowercase letter then an uppercase one, either of them non-ASCII ("дМ", "JosÈ"). */
const CASE_FLIP = /\p{Ll}[^\P{Lu}A-Z]|[^\P{Ll}a-z]\p{Lu}/u;
/** Letters of two scripts in one word ("Ðóññ", "Ωρ" next to Latin, "N唫ez"); Japanese mixes kanji and kana. */
const SCRIPTS = [/\p{Script=Latin}/u, /\p{Script=Cyrillic}/u, /\p{Script=Greek}/u, /\p{Script=Hebrew}/u, /\p{Script=Arabic}/u, /\p{Script=Thai}/u, /\p{Script=Hangul}/u, /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u];

const letters = (text: string): number => text.match(/\p{L}/gu)?.length ?? 0;

/** The first script of SCRIPTS a text has letters of (-1 for none). */
const scriptOf = (text: string): number => SCRIPTS.findIndex((script) => script.test(text));

/** False when a reading of the sample cannot be what someone typed. */
export function looksLikeText(text: string): boolean {
  if (CONTROL.test(text)) return false;
  for (const word of text.split(/[\s,;|"'()[\]{}<>@.:/\\=+*#&!?]+/)) {
    if (word.length < 2 || /^[\u0000-\u007F]*$/.test(word)) continue;
    if (GLUED_SYMBOL.test(word) || CASE_FLIP.test(word) || FULLWIDTH_BESIDE_ASCII.test(word)) return false;
    let scripts = 0;
    for (const script of SCRIPTS) if (script.test(word)) scripts++;
    if (scripts > 1) return false;
  }
  return true;
}

/** Up to `count` words holding non-ASCII letters (names, never addresses), in `text`. */
export function nonAsciiWords(text: string, count: number): string[] {
  const words: string[] = [];
  for (const word of text.split(/[\s,;|\t"]+/)) {
    if (word.includes('@') || /^[\u0000-\u007F]*$/.test(word) || words.includes(word)) continue;
    words.push(word.length > 30 ? `${word.slice(0, 29)}…` : word);
    if (words.length === count) break;
  }
  return words;
}

/**
 * The same names read in each encoding, for a message: the words, at the same places in the
 * sample, that the readings disagree on.
 */
export function namesEachWay(sample: Buffer, encodings: readonly string[], count = 4): Array<{ encoding: string; names: string[] }> {
  const texts = encodings.map((encoding) => decodeAs(sample, encoding));
  const split = texts.map((text) => text.split(/[\s,;|\t"]+/));
  const positions: number[] = [];
  const first = split[0] ?? [];
  for (let i = 0; i < first.length && positions.length < count; i++) {
    const word = first[i] as string;
    if (word.includes('@') || /^[\u0000-\u007F]*$/.test(word)) continue;
    if (split.some((words) => words[i] !== word)) positions.push(i);
  }
  if (positions.length === 0) return encodings.map((encoding, index) => ({ encoding, names: nonAsciiWords(texts[index] as string, count) }));
  return encodings.map((encoding, index) => ({ encoding, names: positions.map((i) => split[index]?.[i] ?? '') }));
}
