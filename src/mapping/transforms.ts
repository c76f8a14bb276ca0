/**
 * The closed set of value transforms named in mapping files (see `TRANSFORMS` in schema.ts).
 * Each is a small pure function; the checking transforms (`orcid`, `email`) return a failure
 * instead of throwing, so one bad cell becomes one row problem (or, with `on_invalid:
 * skip_value`, one warning), and `last_first` returns a warning when it leaves a name as written.
 */
import { domainToASCII, domainToUnicode } from 'node:url';
import { suffixKind } from './name-suffixes.js';
import type { TransformName } from './schema.js';

/** What went wrong with a value, or what a transform could not do with it. */
export interface ValueIssue {
  code: string;
  message: string;
  hint: string;
}

export type TransformResult = { ok: true; value: string; warning?: ValueIssue } | ({ ok: false } & ValueIssue);

/**
 * White space and invisible format characters (zero-width space, BOM, word joiner, directional
 * marks and embeddings: Unicode's Cf) at the ends of a value: a cell pasted from a web page or a
 * PDF often carries them, and they make two equal values differ.
 */
const EDGES = /^[\p{White_Space}\p{Cf}]+|[\p{White_Space}\p{Cf}]+$/gu;
const WHITESPACE_RUN = /\p{White_Space}+/gu;

export function trimValue(value: string): string {
  return value.replace(EDGES, '');
}

/** Runs of white space (non-breaking spaces too) become one space; the ends are trimmed as by `trim`. */
export function collapseWhitespace(value: string): string {
  return trimValue(value.replace(WHITESPACE_RUN, ' '));
}

/** Below U+0300 every character is its own NFC form, and no combining mark can follow: most cells skip `normalize`. */
const MAY_CHANGE_UNDER_NFC = /[^\u0000-\u02ff]/;

/**
 * Unicode NFC: "José" typed on one system and exported decomposed (NFD) by another become the same
 * text, so they compare, hash and deduplicate as one value.
 */
export function toNfc(text: string): string {
  return MAY_CHANGE_UNDER_NFC.test(text) ? text.normalize('NFC') : text;
}

// ---------------------------------------------------------------------------------------------
// Names

const COMMA = /[,\uff0c]/;
const COMMAS = /[,\uff0c]/g;
/** Scripts whose names are written family name first. */
const FAMILY_FIRST_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
/** Scripts whose "Last, First" is reordered (a CJK name with a Latin reading is read as Latin). */
const GIVEN_FIRST_SCRIPT = /[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}]/u;
const NICKNAME = /\([^)]*\)|"[^"]*"/g;
const CONJUNCTION = /^(?:and|&|und|et)$/i;
const INITIALS = /^(?:\p{Lu}\.)+$/u;
const TWO_CAPITALS = /\p{Lu}[^\p{Lu}]*\p{Lu}/u;
/** Capitals each followed by small letters, as names write them inside a word ("McDonald", "DeShawn", "JoAnne"). */
const CAMEL_NAME = /^(?:\p{Lu}\p{Ll}+)+$/u;
const NAME_SEGMENTS = /[-'’]/;

/** A suffix or degree; "J.R." is initials, not "Jr". */
function suffixOf(word: string): ReturnType<typeof suffixKind> {
  const kind = suffixKind(word);
  return kind === 'generational' && INITIALS.test(word) ? undefined : kind;
}

const nameLeftAsWritten = (why: string): ValueIssue => ({
  code: 'name_left_as_written',
  message: `last_first left the name as written: ${why}`,
  hint: 'Check the name in the roster: "Last, First" with suffixes and degrees after a further comma ("King, Martin Luther, Jr.") is reordered; other values are synced as written.',
});

function words(text: string): string[] {
  return text.split(' ').filter(Boolean);
}

/**
 * A word the suffix list does not know that may be a degree as well as initials or a name ("MA",
 * "MSc.Ed.", "AB"): two capitals, not as a name writes them ("McDonald", "Doe-Ray", "O'Neil").
 * Reordering around it would be a guess.
 */
function doubtful(word: string, mixedCase: boolean): boolean {
  const bare = word.replace(NICKNAME, '');
  // In a roster written in capitals every word has capitals: only the suffix list can tell.
  const capitals = bare.split(NAME_SEGMENTS).some((segment) => TWO_CAPITALS.test(segment) && !CAMEL_NAME.test(segment));
  return mixedCase && capitals && !INITIALS.test(bare) && suffixOf(bare) === undefined;
}

type PartKind = 'suffix' | 'doubtful' | 'name';

function partKind(part: string, mixedCase: boolean): PartKind {
  const bare = collapseWhitespace(part.replace(NICKNAME, ' '));
  if (bare === '') return 'name';
  const ws = words(bare);
  if (suffixOf(bare) !== undefined || ws.every((w) => suffixOf(w) !== undefined)) return 'suffix';
  return ws.every((w) => suffixOf(w) !== undefined || doubtful(w, mixedCase)) ? 'doubtful' : 'name';
}

/** The suffix items of a part that is all suffixes: its words, or the part whole ("Ph. D."). */
function suffixItems(part: string): string[] {
  const ws = words(part);
  return ws.every((w) => suffixOf(w.replace(NICKNAME, '')) !== undefined || w.replace(NICKNAME, '') === '') ? ws : [part];
}

/** Removes the suffixes that end `ws` (never its first word) and returns them in order. */
function trailingSuffixes(ws: string[], given: boolean): string[] {
  const taken: string[] = [];
  while (ws.length > 1) {
    const last = ws[ws.length - 1]!;
    const kind = suffixOf(last);
    // "V" after a given name is as likely an initial: only a part of its own makes it a suffix.
    if (kind === undefined || (given && last.toLowerCase().replace('.', '') === 'v')) break;
    taken.unshift(ws.pop()!);
  }
  return taken;
}

function withSuffixes(name: string, suffixes: readonly string[]): string {
  let out = name;
  for (const suffix of suffixes) out += suffixOf(suffix) === 'generational' ? ` ${suffix}` : `, ${suffix}`;
  return out;
}

/**
 * "Curie, Marie" → "Marie Curie", keeping particles with the surname ("van der Berg, Jan" → "Jan
 * van der Berg") and suffixes and degrees at the end, whichever of these forms the cell uses:
 * "Last, First Suffix", "Last, First, Suffix", "Last Suffix, First", "Last, Suffix, First". A value
 * already in reading order with a suffix after a comma ("John Doe, Jr.", "Jane Smith, PhD") stays
 * as it is. In a name written in a family-name-first script (Chinese, Japanese, Korean) only the
 * comma is removed ("山田, 太郎" → "山田 太郎"). The full-width comma counts as a comma.
 *
 * A value that cannot be reordered without guessing (more than two parts that are names, a part
 * that may be a degree or initials, a comma with nothing beside it, two people) is returned as
 * written with a warning: a name reordered wrongly is worse than one left alone.
 */
export function lastFirst(value: string): TransformResult {
  if (!COMMA.test(value)) return { ok: true, value };
  if (looksLikeFormula(trimValue(value))) {
    return { ok: true, value, warning: nameLeftAsWritten('it starts like a spreadsheet formula, and a formula is not a name') };
  }
  if (FAMILY_FIRST_SCRIPT.test(value) && !GIVEN_FIRST_SCRIPT.test(value)) {
    return { ok: true, value: collapseWhitespace(value.replace(COMMAS, '')) };
  }
  const leave = (why: string): TransformResult => ({ ok: true, value, warning: nameLeftAsWritten(why) });
  const parts = value.split(COMMAS).map(collapseWhitespace);
  if (parts.some((part) => part === '')) return leave('a comma has nothing on one side');
  const mixedCase = /\p{Ll}/u.test(value);
  // The first part is the surname ("McDonald, Ronald"), unless it is all suffixes.
  const kinds = parts.map((part, i) => {
    const kind = partKind(part, mixedCase);
    return i === 0 && kind === 'doubtful' ? 'name' : kind;
  });
  const doubtfulAt = kinds.indexOf('doubtful');
  if (doubtfulAt >= 0) return leave(`"${parts[doubtfulAt]}" may be a degree or initials, or a name`);
  const names = kinds.flatMap((kind, i) => (kind === 'name' ? [i] : []));
  if (names.some((i) => words(parts[i]!).some((w) => CONJUNCTION.test(w)))) return leave('it seems to name two people');
  if (names.length === 1 && names[0] === 0) {
    // "John Doe, Jr.": already in reading order. One word before a degree ("Andrews, M.D.") may be a surname and initials.
    return words(parts[0]!).length >= 2 ? { ok: true, value } : leave(`"${parts[0]}" alone before "${parts.slice(1).join(', ')}" may be a surname and initials`);
  }
  if (names.length !== 2 || names[0] !== 0) {
    return leave(names.length > 2 ? 'more than two of its parts are names' : 'it does not start with a surname');
  }
  const surname = words(parts[0]!);
  const honorifics = leadingHonorifics(surname);
  const given = words(parts[names[1]!]!);
  const suffixes = trailingSuffixes(surname, false);
  const givenSuffixes = trailingSuffixes(given, true);
  const last = given[given.length - 1]!;
  if (given.length > 1 && doubtful(last, mixedCase)) return leave(`"${last}" may be a degree or initials, or a name`);
  for (let i = 1; i < parts.length; i++) suffixes.push(...(i === names[1] ? givenSuffixes : suffixItems(parts[i]!)));
  return { ok: true, value: withSuffixes([...honorifics, ...given, ...surname].join(' '), suffixes) };
}

/** Titles written before a name ("Prof. Dr. Müller, Hans"): they stay in front of it. */
const HONORIFIC = /^(?:prof|professor|dr|doctor|mr|mrs|ms|miss|mx|sir|dame|rev|revd|fr|herr|frau|mme|mlle|dott|dott\.ssa|ing|dipl\.-ing|dr\.-ing|dr\.\s?med|prof\.\s?dr|hon|lord|lady)\.?$/i;

/** Removes the honorifics that start `ws` (never its last word) and returns them in order. */
function leadingHonorifics(ws: string[]): string[] {
  const taken: string[] = [];
  while (ws.length > 1 && HONORIFIC.test(ws[0]!)) taken.push(ws.shift()!);
  return taken;
}

// ---------------------------------------------------------------------------------------------
// ORCID iDs

/** ISO 7064 MOD 11-2 check character of the first 15 digits of an ORCID iD. */
export function orcidCheckDigit(base15: string): string {
  let total = 0;
  for (const ch of base15) total = (total + Number(ch)) * 2;
  const result = (12 - (total % 11)) % 11;
  return result === 10 ? 'X' : String(result);
}

/**
 * The blocks ORCID issues iDs from (support.orcid.org, "Structure of the ORCID Identifier"), as
 * their first 15 digits, bounds included. Numbers outside are other ISNI space, or made up.
 */
export const ORCID_BLOCKS: readonly (readonly [string, string])[] = [
  ['000000015000000', '000000035000000'],
  ['000900000000000', '000900100000000'],
];

/** "ORCID:", "orcid", "ORCID iD:" before the iD. */
const ORCID_LABEL = /^orcid(?:\s*id)?(?:\s*[:：]\s*|\s+)/i;
const ORCID_URL = /^(?:https?:\/\/)?(?:www\.)?(sandbox\.)?orcid\.org\/+([^?#]*)(?:[?#].*)?$/i;
/** Hyphens as Word, PDFs and web pages write them (U+2010 to U+2015, minus sign, small and full-width), spaces and invisible characters. */
const ORCID_NOISE = /[\p{White_Space}\p{Cf}\u2010-\u2015\u2212\ufe58\ufe63\uff0d/-]/gu;

const invalidOrcid = (message: string, hint: string): TransformResult => ({ ok: false, code: 'invalid_orcid', message, hint });

/**
 * Normalises an ORCID iD as people paste it to `0000-0002-1825-0097`: a URL (with a trailing `/`,
 * a query or a fragment), an `ORCID:` label, spaces, typographic dashes, invisible characters, no
 * hyphens, a lowercase `x`. Refuses a sandbox URL (a test iD, not the person's), a wrong ISO 7064
 * 11,2 check character, and an iD outside the blocks ORCID issues.
 */
export function normaliseOrcid(value: string): TransformResult {
  let text = trimValue(value).replace(ORCID_LABEL, '');
  const url = ORCID_URL.exec(text);
  if (url) {
    if (url[1]) {
      return invalidOrcid(
        'a sandbox.orcid.org iD is a test account, not the person\'s ORCID iD',
        'Ask for the iD of the person\'s record on orcid.org (sandbox iDs exist only on the test server).',
      );
    }
    text = url[2]!;
  }
  const compact = text.replace(ORCID_NOISE, '').toUpperCase();
  if (!/^\d{15}[\dX]$/.test(compact)) {
    return invalidOrcid('not an ORCID iD (expected 16 characters like 0000-0002-1825-0097)', 'Correct the ORCID iD, or leave the cell empty.');
  }
  const base = compact.slice(0, 15);
  const expected = orcidCheckDigit(base);
  if (compact[15] !== expected) {
    return invalidOrcid(
      `ORCID check digit is wrong (expected ${expected} for these first 15 digits)`,
      "The iD has a typo; copy it again from the person's ORCID record.",
    );
  }
  const formatted = `${compact.slice(0, 4)}-${compact.slice(4, 8)}-${compact.slice(8, 12)}-${compact.slice(12)}`;
  if (!ORCID_BLOCKS.some(([low, high]) => base >= low && base <= high)) {
    return invalidOrcid(
      `${formatted} has a valid check digit but lies outside the blocks ORCID issues iDs from (0000-0001-5000-0007 to 0000-0003-5000-0001, 0009-0000-0000-0000 to 0009-0010-0000-0000)`,
      "It is not a real person's iD (an example or a made-up number?); copy it again from the person's ORCID record.",
    );
  }
  return { ok: true, value: formatted };
}

// ---------------------------------------------------------------------------------------------
// Email addresses

/**
 * A dot-atom local part (RFC 5322 atext) in which, as RFC 6531 allows, any non-ASCII character
 * other than white space and control or format characters may appear. Quoted local parts and
 * comments are refused: no roster needs them, and few mail systems take them.
 */
const LOCAL_PART = /^(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]|[^\p{ASCII}\p{White_Space}\p{C}])+(?:\.(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]|[^\p{ASCII}\p{White_Space}\p{C}])+)*$/u;
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const IPV4ISH = /^[\d.]+$|^\[.*\]$/;

const invalidEmail = (message: string, hint = 'Correct the address, or leave the cell empty.'): TransformResult => ({ ok: false, code: 'invalid_email', message, hint });

/**
 * Checks an address and returns it in the one form rostersync sends (docs/mapping.md, "Email
 * addresses"): the local part as written, the domain in its Unicode form, lowercase, as UTS #46
 * maps it. `mueller@bücher.de` and `mueller@xn--bcher-kva.de` are then one value, whichever the
 * roster holds. Internationalised domains are checked by IDNA rules (UTS #46, Node's WHATWG URL
 * implementation) and then by the DNS rules on their ASCII form: letters, digits and inner
 * hyphens, 63 octets a label, 253 in all. The top-level domain has at least two letters, so
 * `jane@example.c`, `jane@123.456` and a bare IP address are refused. It does not prove that the
 * mailbox exists.
 */
export function checkEmail(value: string): TransformResult {
  if (value !== trimValue(value) || /\s/.test(value)) {
    return invalidEmail(
      'not a valid email address (it holds spaces or invisible characters)',
      'Remove the spaces, or add `trim` before `email` in the mapping; several addresses in one cell need `split`.',
    );
  }
  const at = value.lastIndexOf('@');
  const local = at > 0 ? value.slice(0, at) : '';
  const domain = at > 0 ? value.slice(at + 1) : '';
  if (!local || !domain) return invalidEmail('not a valid email address (expected name@domain)');
  if (IPV4ISH.test(domain)) {
    return invalidEmail('an IP address instead of a domain name is not accepted', 'Use the address with the mail domain (name@example.org).');
  }
  const ascii = domainToASCII(domain);
  const labels = ascii.split('.');
  const nonAscii = /[^\p{ASCII}]/u.test(domain);
  const punycodeHint = nonAscii && ascii ? ` Its ASCII (punycode) form is ${ascii}.` : '';
  const unicodeDomain = nonAscii || ascii.includes('xn--') ? domainToUnicode(ascii) : ascii;
  // UTS #46 CheckHyphens, which Node's domainToASCII leaves off: no hyphen at either end of a label
  // (also in its Unicode form), none in the 3rd and 4th places but in an xn-- label.
  const badHyphens = (label: string): boolean => label.startsWith('-') || label.endsWith('-') || (label.slice(2, 4) === '--' && !label.startsWith('xn--'));
  if (!ascii || labels.length < 2 || labels.some((l) => !LDH_LABEL.test(l) || badHyphens(l)) || unicodeDomain.split('.').some(badHyphens) || ascii.length > 253) {
    return invalidEmail(
      `not a valid email address (the domain "${domain}" is not a valid domain name)`,
      /xn--/i.test(domain)
        ? 'A label starting with xn-- must be valid punycode; copy the domain again, or write it in its Unicode form (bücher.de rather than xn--bcher-kva.de).'
        : 'A domain has at least two labels of letters, digits and inner hyphens (example.org); correct the address, or leave the cell empty.',
    );
  }
  const tld = labels[labels.length - 1]!;
  if (!tld.startsWith('xn--') && !/^[a-z]{2,63}$/.test(tld)) {
    return invalidEmail(`not a valid email address (the top-level domain "${tld}" is not two or more letters)`, `Correct the end of the address (for example .org or .de).${punycodeHint}`);
  }
  if (!LOCAL_PART.test(local)) {
    return invalidEmail(
      'not a valid email address (the part before @ holds characters an address cannot, or a dot at its start, end or twice in a row)',
      `Correct the address, or leave the cell empty.${punycodeHint}`,
    );
  }
  const address = `${local}@${unicodeDomain}`;
  if (Buffer.byteLength(local) > 64 || local.length + 1 + ascii.length > 254) {
    return invalidEmail('not a valid email address (longer than 64 octets before @ or 254 in all)');
  }
  const lookalike = emailLookalike(value, unicodeDomain);
  return lookalike === undefined ? { ok: true, value: address } : { ok: true, value: address, warning: lookalike };
}

/** Scripts a domain label's letters are told apart by (Common and Inherited characters belong to none). */
const LABEL_SCRIPTS = ['Latin', 'Cyrillic', 'Greek', 'Armenian', 'Georgian', 'Hebrew', 'Arabic', 'Devanagari', 'Thai', 'Han', 'Hiragana', 'Katakana', 'Hangul', 'Bopomofo'].map(
  (script) => ({ script, pattern: new RegExp(`\\p{Script=${script}}`, 'u') }),
);
/** Script sets one label may mix (UTS #39's "highly restrictive" level): Japanese, Chinese and Korean writing with Latin. */
const ALLOWED_MIXES = [['Latin', 'Han', 'Hiragana', 'Katakana'], ['Latin', 'Han', 'Bopomofo'], ['Latin', 'Han', 'Hangul']];
/** Full-width forms of ASCII (U+FF01 to U+FF5E): UTS #46 maps them in a domain, a mail system does not in a local part. */
const FULLWIDTH = /[\uff01-\uff5e]/gu;

const codePoint = (char: string): string => `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/** "а (U+0430, Cyrillic)" for each distinct character, a few at most. */
function describeChars(chars: readonly string[], what: (char: string) => string): string {
  const distinct = [...new Set(chars)];
  const shown = distinct.slice(0, 6).map((char) => `"${char}" (${codePoint(char)}, ${what(char)})`);
  return distinct.length > 6 ? `${shown.join(', ')} and ${distinct.length - 6} more` : shown.join(', ');
}

/** The script of a letter, among LABEL_SCRIPTS. */
const scriptOf = (char: string): string | undefined => LABEL_SCRIPTS.find(({ pattern }) => pattern.test(char))?.script;

/**
 * An address that looks like another one: a domain label mixing scripts (`exаmple` with a Cyrillic
 * "а") or full-width letters (`ｊａｎｅ`). It may be a typing accident or a spoof; either way the
 * mail goes elsewhere than the reader thinks, so the characters are named.
 */
export function emailLookalike(written: string, unicodeDomain: string): ValueIssue | undefined {
  const fullwidth = written.match(FULLWIDTH);
  if (fullwidth) {
    return {
      code: 'email_lookalike',
      message: `the address holds full-width characters ${describeChars(fullwidth, () => 'full-width')}`,
      hint: 'Retype the address with ordinary (half-width) characters; set `email_lookalikes: reject` in the mapping to refuse such addresses.',
    };
  }
  for (const label of unicodeDomain.split('.')) {
    const letters = [...label].filter((char) => scriptOf(char) !== undefined);
    const scripts = new Set(letters.map((char) => scriptOf(char)!));
    if (scripts.size < 2 || ALLOWED_MIXES.some((mix) => [...scripts].every((script) => mix.includes(script)))) continue;
    // Name the letters of the rarer scripts: they are the ones that look like the others.
    const counts = [...scripts].map((script) => ({ script, n: letters.filter((char) => scriptOf(char) === script).length }));
    const main = counts.reduce((a, b) => (b.n > a.n ? b : a)).script;
    const odd = letters.filter((char) => scriptOf(char) !== main);
    return {
      code: 'email_lookalike',
      message: `the domain label "${label}" mixes ${main} with ${describeChars(odd, (char) => scriptOf(char)!)}`,
      hint: `Retype the domain in one script; set \`email_lookalikes: reject\` in the mapping to refuse such addresses.`,
    };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Formula-like values

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d+(?:\.\d+)?$/;

/**
 * A value a spreadsheet would run as a formula (`=HYPERLINK(…)`, `+cmd|…`, `@SUM(…)`), when an
 * editor exports the group and opens it. A plain signed number is not one.
 */
export function looksLikeFormula(value: string): boolean {
  return FORMULA_START.test(value) && !PLAIN_NUMBER.test(value);
}

// ---------------------------------------------------------------------------------------------

/** Applies one per-value transform. `dedupe` works on whole lists and is a no-op here. */
export function applyTransform(name: TransformName, value: string): TransformResult {
  switch (name) {
    case 'trim':
      return { ok: true, value: trimValue(value) };
    case 'collapse_whitespace':
      return { ok: true, value: collapseWhitespace(value) };
    case 'lower':
      return { ok: true, value: value.toLowerCase() };
    case 'upper':
      return { ok: true, value: value.toUpperCase() };
    case 'last_first':
      return lastFirst(value);
    case 'orcid':
      return normaliseOrcid(value);
    case 'email':
      return checkEmail(value);
    case 'dedupe':
      return { ok: true, value };
  }
}

/** Drops repeated values, comparing case-insensitively and keeping the first spelling. */
export function dedupe(values: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const v of values) {
    const key = v.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(v);
  }
  return out;
}

/** Splits a cell on any of the separators; pieces are trimmed and empty pieces dropped. */
export function splitValue(value: string, separators: readonly string[]): string[] {
  let pieces = [value];
  for (const sep of separators) pieces = pieces.length === 1 ? pieces[0]!.split(sep) : pieces.flatMap((p) => p.split(sep));
  // One pass, no intermediate arrays: this runs per cell of every split column.
  const out: string[] = [];
  for (const piece of pieces) {
    const trimmed = piece.trim();
    if (trimmed !== '') out.push(trimmed);
  }
  return out;
}
