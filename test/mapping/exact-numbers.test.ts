/** Numbers a JSON number (a double) cannot carry exactly are row rejects, not rounded values. */
import { describe, expect, it } from 'vitest';
import { coerceNumber } from '../../src/mapping/coerce.js';

describe('coerceNumber refuses what a JSON number cannot carry as written', () => {
  it.each([
    ['99999999999999999999', '100000000000000000000'],
    ['9007199254740993', '9007199254740992'],
    ['1.0000000000000001', '1'],
    ['12345678901234567890123', '1.2345678901234568e+22'],
  ])('%s (would be sent as %s)', (text, sentAs) => {
    const result = coerceNumber(text);
    expect(result).toMatchObject({ ok: false, code: 'inexact_number' });
    expect(result.ok ? '' : result.message).toContain(`it would be sent as ${sentAs}`);
  });

  it.each([
    ['12', 12],
    ['3.50', 3.5],
    ['-12.000', -12],
    ['0.1', 0.1],
    ['0.0000001234', 1.234e-7],
    ['9007199254740992', 9007199254740992],
    ['100000000000000000000', 1e20],
    ['1,234.5', 1234.5],
  ])('%s is exact', (text, value) => {
    expect(coerceNumber(text)).toEqual({ ok: true, value });
  });

  it('under a decimal comma too', () => {
    expect(coerceNumber('99.999.999.999.999.999.999', ',')).toMatchObject({ ok: false, code: 'inexact_number' });
    expect(coerceNumber('1.234,5', ',')).toEqual({ ok: true, value: 1234.5 });
  });
});
