/**
 * Which legacy encoding a CSV file that is not UTF-8 was saved in, when the pipeline does not
 * say. The statistics are jschardet's (a port of Python's chardet 7: byte n-gram models trained
 * per language and encoding); on top of them, each candidate's reading of the sample must look
 * like text (no control characters, no symbol glued to a letter as in "£ukasz", no lowercase run
 * turning uppercase as in "дМИТРИЙ"), and the best reading must clearly beat every other reading
 * that differs from it. Otherwise the file is refused, showing the names each way, and the
 * operator names the encoding: a wrong guess would put misspelt names into the service.
 *
 * jschardet is loaded only here, on this rare path: UTF-8 files never pay for its models.
 */
import iconv from 'iconv-lite';
import { iconvCodec } from './encodings.js';

/**
 * Encodings considered, as the WHATWG standard names them: the default CSV encodings of Excel's
 * locales (Windows code pages, Mac Roman, the East Asian double-byte sets) and the legacy ones
 * still written by Unix and DOS tools. Rarer ones (ISO-8859-3/4/6/8/10/14/16) are read when
 * declared, never guessed: they look too much like the common ones to be told apart on names.
 */
const DETECTOR_NAMES: Readonly<Record<string, string>> = {
  cp1250: 'windows-1250',
  cp1251: 'windows-1251',
  cp1252: 'windows-1252',
  'iso8859-1': 'windows-1252',
  cp1253: 'windows-1253',
  cp1254: 'windows-1254',
  'iso8859-9': 'windows-1254',
  cp1255: 'windows-1255',
  cp1256: 'windows-1256',
  cp1257: 'windows-1257',
  cp1258: 'windows-1258',
  cp874: 'windows-874',
  'tis-620': 'windows-874',
  'iso8859-2': 'ISO-8859-2',
  'iso8859-5': 'ISO-8859-5',
  'iso8859-7': 'ISO-8859-7',
  'iso8859-13': 'ISO-8859-13',
  'iso8859-15': 'ISO-8859-15',
  'koi8-r': 'KOI8-R',
  'koi8-u': 'KOI8-U',
  cp866: 'IBM866',
  'mac-roman': 'macintosh',
  'mac-cyrillic': 'x-mac-cyrillic',
  cp932: 'Shift_JIS',
  shift_jis_2004: 'Shift_JIS',
  euc_jis_2004: 'EUC-JP',
  gb18030: 'gb18030',
  big5hkscs: 'Big5',
  cp949: 'EUC-KR',
  euc_kr: 'EUC-KR',
};

/** Preferred name when several encodings read the sample the same way: Excel's defaults first. */
const PREFERENCE = [
  'windows-1252', 'windows-1250', 'windows-1251', 'windows-1253', 'windows-1254', 'windows-1257', 'windows-1258',
  'windows-1255', 'windows-1256', 'windows-874', 'Shift_JIS', 'gb18030', 'Big5', 'EUC-KR', 'EUC-JP',
];

/** How far the best reading's score must exceed the next different reading's to be accepted. */
export const ACCEPT_RATIO = 2;

export interface Reading {
  encoding: string;
  /** Other encodings that read the sample identically. */
  same: string[];
  confidence: number;
  text: string;
}

export type Detection =
  | { kind: 'accepted'; reading: Reading; rivals: Reading[] }
  | { kind: 'ambiguous'; readings: Reading[] }
  | { kind: 'none' };

type DetectAll = (bytes: Uint8Array, options: Record<string, unknown>) => Array<{ encoding: string | null; confidence: number }>;
let detectAll: DetectAll | undefined;

async function loadDetector(): Promise<DetectAll> {
  if (!detectAll) {
    const module = await import('jschardet');
    detectAll = module.chardet.detectAll as DetectAll;
  }
  return detectAll;
}

export function decodeAs(bytes: Buffer, encoding: string): string {
  return iconv.decode(bytes, iconvCodec(encoding));
}

/** Detects the encoding of `sample` (a file's start, or the chunk where it stops being ASCII). */
export async function detectLegacyEncoding(sample: Buffer): Promise<Detection> {
  const detect = await loadDetector();
  const found = detect(sample, { ignoreThreshold: true, compatNames: false, includeEncodings: Object.keys(DETECTOR_NAMES), maxBytes: sample.length });
  const readings: Reading[] = [];
  for (const { encoding: name, confidence } of found) {
    const encoding = name === null ? undefined : DETECTOR_NAMES[name];
    if (encoding === undefined || confidence <= 0) continue;
    const text = decodeAs(sample, encoding).normalize('NFC');
    const same = readings.find((reading) => reading.text === text);
    if (same) {
      if (same.encoding !== encoding && !same.same.includes(encoding)) same.same.push(encoding);
      same.confidence = Math.max(same.confidence, confidence);
      continue;
    }
    if (!looksLikeText(text)) continue;
    readings.push({ encoding, same: [], confidence, text });
  }
  for (const reading of readings) {
    // Name the group by Excel's default among the encodings that read the sample alike.
    const names = [reading.encoding, ...reading.same];
    const preferred = PREFERENCE.find((name) => names.includes(name)) ?? reading.encoding;
    reading.same = names.filter((name) => name !== preferred);
    reading.encoding = preferred;
  }
  readings.sort((a, b) => b.confidence - a.confidence);
  const [best, ...rivals] = readings;
  if (!best) return { kind: 'none' };
  const next = rivals[0];
  if (next === undefined || best.confidence >= ACCEPT_RATIO * next.confidence) return { kind: 'accepted', reading: best, rivals };
  return { kind: 'ambiguous', readings: readings.filter((reading) => reading.confidence * ACCEPT_RATIO > best.confidence).slice(0, 4) };
}

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFD\p{Co}\p{Cn}]/u;
/** A non-ASCII symbol or punctuation mark touching a letter ("£ukasz", "Ã©"), quotes and dashes aside. */
const GLUED_SYMBOL = /\p{L}[^\p{L}\p{N}\p{Z}\p{M}\p{Pi}\p{Pf}\p{Ps}\p{Pe}\p{Pd}\u0000-\u007F\u2019]|[^\p{L}\p{N}\p{Z}\p{M}\p{Pi}\p{Pf}\p{Ps}\p{Pe}\p{Pd}\u0000-\u007F\u2019]\p{L}/u;
/** Within a word, a lowercase letter then an uppercase one, either of them non-ASCII ("дМ", "JosÈ"). */
const CASE_FLIP = /\p{Ll}[^\P{Lu}A-Z]|[^\P{Ll}a-z]\p{Lu}/u;
/** Letters of two scripts in one word ("Ðóññ", "Ωρ" next to Latin). */
const SCRIPTS = [/\p{Script=Latin}/u, /\p{Script=Cyrillic}/u, /\p{Script=Greek}/u, /\p{Script=Hebrew}/u, /\p{Script=Arabic}/u, /\p{Script=Thai}/u, /\p{Script=Hangul}/u];

/** False when a reading of the sample cannot be what someone typed. */
export function looksLikeText(text: string): boolean {
  if (CONTROL.test(text)) return false;
  for (const word of text.split(/[\s,;|"'()[\]{}<>@.:/\\=+*#&!?]+/)) {
    if (word.length < 2 || /^[\u0000-\u007F]*$/.test(word)) continue;
    if (GLUED_SYMBOL.test(word) || CASE_FLIP.test(word)) return false;
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
