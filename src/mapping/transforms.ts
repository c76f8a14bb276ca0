/**
 * The closed set of value transforms named in mapping files (see `TRANSFORMS` in schema.ts).
 * Each is a small pure function; the two checking transforms (`orcid`, `email`) return a
 * failure instead of throwing, so one bad cell becomes one row problem.
 */
import type { TransformName } from './schema.js';

export type TransformResult = { ok: true; value: string } | { ok: false; code: string; message: string; hint: string };

const WHITESPACE_RUN = /[\s\u00a0\u2007\u202f]+/g;

export function collapseWhitespace(value: string): string {
  return value.replace(WHITESPACE_RUN, ' ').trim();
}

const NAME_SUFFIXES = new Set(['jr', 'jr.', 'sr', 'sr.', 'ii', 'iii', 'iv', 'v']);

/**
 * "Curie, Marie" → "Marie Curie". A third part is kept only when it is a generational suffix
 * ("King, Martin Luther, Jr." → "Martin Luther King Jr."); anything else with more commas, or a
 * value without a comma, is returned unchanged rather than guessed at.
 */
export function lastFirst(value: string): string {
  const parts = value.split(',').map((p) => collapseWhitespace(p));
  if (parts.length === 2) {
    const [last, first] = parts as [string, string];
    return [first, last].filter(Boolean).join(' ');
  }
  if (parts.length === 3 && NAME_SUFFIXES.has(parts[2]!.toLowerCase())) {
    const [last, first, suffix] = parts as [string, string, string];
    return [first, last, suffix].filter(Boolean).join(' ');
  }
  return value;
}

/** ISO 7064 MOD 11-2 check character of the first 15 digits of an ORCID iD. */
export function orcidCheckDigit(base15: string): string {
  let total = 0;
  for (const ch of base15) total = (total + Number(ch)) * 2;
  const result = (12 - (total % 11)) % 11;
  return result === 10 ? 'X' : String(result);
}

const ORCID_URL_PREFIX = /^(?:https?:\/\/)?(?:www\.)?(?:sandbox\.)?orcid\.org\//i;

/**
 * Normalises an ORCID iD given as a URL (`https://orcid.org/…`), with spaces, without hyphens or
 * with a lowercase `x`, to `0000-0002-1825-0097`, and checks its ISO 7064 11,2 check digit.
 */
export function normaliseOrcid(value: string): TransformResult {
  const compact = value.trim().replace(ORCID_URL_PREFIX, '').replace(/[\s\u00a0-]/g, '').toUpperCase();
  if (!/^\d{15}[\dX]$/.test(compact)) {
    return {
      ok: false,
      code: 'invalid_orcid',
      message: 'not an ORCID iD (expected 16 characters like 0000-0002-1825-0097)',
      hint: 'Correct the ORCID iD, or leave the cell empty.',
    };
  }
  const expected = orcidCheckDigit(compact.slice(0, 15));
  if (compact[15] !== expected) {
    return {
      ok: false,
      code: 'invalid_orcid',
      message: `ORCID check digit is wrong (expected ${expected} for these first 15 digits)`,
      hint: 'The iD has a typo; copy it again from the person\'s ORCID record.',
    };
  }
  const formatted = `${compact.slice(0, 4)}-${compact.slice(4, 8)}-${compact.slice(8, 12)}-${compact.slice(12)}`;
  return { ok: true, value: formatted };
}

/**
 * Pragmatic address syntax (the WHATWG "valid e-mail address" production, plus a dot in the
 * domain and the 64/254 length limits). It does not prove the mailbox exists.
 */
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function checkEmail(value: string): TransformResult {
  const at = value.lastIndexOf('@');
  const local = at > 0 ? value.slice(0, at) : '';
  const valid =
    EMAIL.test(value) &&
    value.length <= 254 &&
    local.length <= 64 &&
    !local.startsWith('.') &&
    !local.endsWith('.') &&
    !local.includes('..');
  if (valid) return { ok: true, value };
  return {
    ok: false,
    code: 'invalid_email',
    message: 'not a valid email address',
    hint: /\s/.test(value.trim()) || value !== value.trim()
      ? 'Remove the spaces, or add `trim` before `email` in the mapping; several addresses in one cell need `split`.'
      : 'Correct the address, or leave the cell empty.',
  };
}

/** Applies one per-value transform. `dedupe` works on whole lists and is a no-op here. */
export function applyTransform(name: TransformName, value: string): TransformResult {
  switch (name) {
    case 'trim':
      return { ok: true, value: value.trim() };
    case 'collapse_whitespace':
      return { ok: true, value: collapseWhitespace(value) };
    case 'lower':
      return { ok: true, value: value.toLowerCase() };
    case 'upper':
      return { ok: true, value: value.toUpperCase() };
    case 'last_first':
      return { ok: true, value: lastFirst(value) };
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
