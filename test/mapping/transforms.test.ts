import { describe, expect, it } from 'vitest';
import {
  applyTransform,
  checkEmail,
  dedupe,
  lastFirst,
  normaliseOrcid,
  orcidCheckDigit,
  splitValue,
} from '../../src/mapping/transforms.js';
import { closestMatch } from '../../src/errors/did-you-mean.js';

describe('orcid', () => {
  it.each([
    ['0000-0002-1825-0097', '0000-0002-1825-0097'],
    ['https://orcid.org/0000-0002-1825-0097', '0000-0002-1825-0097'],
    ['http://orcid.org/0000-0002-1825-0097', '0000-0002-1825-0097'],
    ['orcid.org/0000-0002-1825-0097', '0000-0002-1825-0097'],
    ['https://www.orcid.org/0000-0002-1825-0097', '0000-0002-1825-0097'],
    ['0000 0002 1825 0097', '0000-0002-1825-0097'],
    ['0000000218250097', '0000-0002-1825-0097'],
    [' 0000-0002-1825-0097 ', '0000-0002-1825-0097'],
    ['0000-0002-9079-593x', '0000-0002-9079-593X'],
    ['0000-0001-5109-3700', '0000-0001-5109-3700'],
  ])('normalises %j to %s', (input, expected) => {
    expect(normaliseOrcid(input)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['0000-0002-1825-0098', /check digit is wrong \(expected 7/],
    ['0000-0002-9079-5930', /expected X/],
    ['0000-0002-1825-009', /not an ORCID/],
    ['0000-0002-1825-00977', /not an ORCID/],
    ['abcd-0002-1825-0097', /not an ORCID/],
    ['https://example.org/0000-0002-1825-0097', /not an ORCID/],
    ['', /not an ORCID/],
  ])('rejects %j', (input, message) => {
    const result = normaliseOrcid(input);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.code).toBe('invalid_orcid');
      expect(result.message).toMatch(message);
    }
  });

  it.each([
    ['000000021825009', '7'],
    ['000000029079593', 'X'],
    ['000000015109370', '0'],
  ])('check digit of %s is %s', (base, digit) => {
    expect(orcidCheckDigit(base)).toBe(digit);
  });
});

describe('last_first', () => {
  it.each([
    ['Curie, Marie', 'Marie Curie'],
    ['Curie,Marie', 'Marie Curie'],
    ['  Curie ,  Marie  ', 'Marie Curie'],
    ['de la Cruz, Juan Carlos', 'Juan Carlos de la Cruz'],
    ['King, Martin Luther, Jr.', 'Martin Luther King Jr.'],
    ['Ford, Henry, III', 'Henry Ford III'],
    ['Marie Curie', 'Marie Curie'],
  ])('%j → %j', (input, expected) => {
    expect(lastFirst(input)).toEqual({ ok: true, value: expected });
  });

  // Values that cannot be reordered without guessing are synced as written, with a warning.
  it.each(['Curie,', ', Marie', 'Smith, John, Acme Corp', 'a, b, c, d'])('leaves %j as written, with a warning', (input) => {
    const result = lastFirst(input);
    expect(result).toMatchObject({ ok: true, value: input, warning: { code: 'name_left_as_written' } });
  });
});

describe('email', () => {
  it.each(['a@x.org', 'first.last+tag@sub.example.co.uk', "o'neil@example.ie", 'A@EXAMPLE.ORG'])('accepts %s', (v) => {
    expect(checkEmail(v).ok).toBe(true);
  });
  it.each([
    'plainaddress',
    'a@x',
    '@x.org',
    'a@.org',
    'a..b@x.org',
    '.a@x.org',
    'a.@x.org',
    'a b@x.org',
    ' a@x.org',
    'a@x.org; b@y.org',
    'a@-x.org',
    `${'a'.repeat(65)}@x.org`,
  ])('rejects %j', (v) => {
    const r = checkEmail(v);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.code).toBe('invalid_email');
  });
  it('suggests trim/split when whitespace is the problem', () => {
    const r = checkEmail(' a@x.org');
    expect(!r.ok && r.hint).toMatch(/trim/);
  });
});

describe('simple transforms', () => {
  it.each([
    ['trim', '  a  b ', 'a  b'],
    ['collapse_whitespace', ' a \t\u00a0 b\n c ', 'a b c'],
    ['lower', 'MiXeD', 'mixed'],
    ['upper', 'MiXeD', 'MIXED'],
    ['last_first', 'Curie, Marie', 'Marie Curie'],
    ['dedupe', 'same', 'same'],
  ] as const)('%s(%j) = %j', (name, input, expected) => {
    expect(applyTransform(name, input)).toEqual({ ok: true, value: expected });
  });

  it('dedupe keeps the first spelling, case-insensitively', () => {
    expect(dedupe(['A@x.org', 'b@y.org', 'a@X.org', 'b@y.org'])).toEqual(['A@x.org', 'b@y.org']);
  });

  it.each([
    ['a@x.org; b@y.org', [';'], ['a@x.org', 'b@y.org']],
    ['a@x.org;; b@y.org ,c@z.org', [';', ','], ['a@x.org', 'b@y.org', 'c@z.org']],
    [' one ', [';'], ['one']],
    [';;', [';'], []],
  ])('split %j on %j', (input, seps, expected) => {
    expect(splitValue(input, seps)).toEqual(expected);
  });
});

describe('closestMatch', () => {
  const names = ['Expertise level', 'Subject areas', 'Reviews completed', 'Last review date', 'Notes'];
  it.each([
    ['Expertize level', 'Expertise level'],
    ['subject area', 'Subject areas'],
    ['last reviewed date', 'Last review date'],
    ['Note', 'Notes'],
    ['Expertise', 'Expertise level'],
    ['Shoe size', undefined],
  ])('%j → %j', (wanted, expected) => {
    expect(closestMatch(wanted, names)).toBe(expected);
  });
});
