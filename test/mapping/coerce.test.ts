import { describe, expect, it } from 'vitest';
import { formatSerial } from '../../src/sources/xlsx/cell-value.js';
import { coerceDate, coerceNumber, coerceOption, excelSerialToIso, type OptionIndex } from '../../src/mapping/coerce.js';

describe('number', () => {
  it.each([
    [12, '.', 12],
    [3.5, ',', 3.5],
    ['12', '.', 12],
    ['-3.25', '.', -3.25],
    ['+4', '.', 4],
    ['1,234.5', '.', 1234.5],
    ['1,234,567', '.', 1234567],
    ['3,5', ',', 3.5],
    ['1.234,5', ',', 1234.5],
    ['1 234,5', ',', 1234.5],
    ['1\u00a0234', ',', 1234],
    ['  7 ', '.', 7],
    ['12', ',', 12],
  ] as const)('%j with decimal %s → %d', (input, decimal, expected) => {
    expect(coerceNumber(input, decimal)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['3,5', '.', /decimal comma.*decimal: ","/],
    ['3.5', ',', /decimal point.*decimal: "."/],
    ['1,23', '.', /decimal comma/],
    ['12 reviews', '.', /plain number/],
    ['', '.', /plain number/],
    ['1.2.3', '.', /plain number/],
    ['1e5', '.', /plain number/],
  ] as const)('%j with decimal %s is refused', (input, decimal, hint) => {
    const r = coerceNumber(input, decimal);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.code).toBe('invalid_number');
      expect(r.hint).toMatch(hint);
    }
  });

  it('refuses non-finite numeric cells', () => {
    expect(coerceNumber(Number.NaN).ok).toBe(false);
    expect(coerceNumber(Number.POSITIVE_INFINITY).ok).toBe(false);
  });
});

describe('Excel serial dates (1900 system, with the Lotus leap-year bug)', () => {
  it.each([
    [1, '1900-01-01'],
    [31, '1900-01-31'],
    [59, '1900-02-28'],
    [61, '1900-03-01'],
    [25569, '1970-01-01'],
    [36526, '2000-01-01'],
    [44927, '2023-01-01'],
    [45351, '2024-02-29'],
    [45292.75, '2024-01-01'],
    [2958465, '9999-12-31'],
  ])('%d → %s', (serial, expected) => {
    expect(excelSerialToIso(serial)).toEqual({ ok: true, value: expected });
  });

  it.each([0, -1, 60, 2958466, Number.NaN])('%d is refused', (serial) => {
    const r = excelSerialToIso(serial);
    expect(r.ok).toBe(false);
  });

  it('reads every serial day as an XLSX date cell shows it (one conversion for both)', () => {
    for (let day = 1; day <= 2958465; day += day < 400 ? 1 : 997) {
      if (day === 60) continue;
      expect(excelSerialToIso(day), `serial ${day}`).toEqual({ ok: true, value: formatSerial(day, 'date', false).value });
    }
  });

  it('explains serial 60 as the non-existent 1900-02-29', () => {
    const r = excelSerialToIso(60);
    expect(!r.ok && r.message).toMatch(/1900-02-29/);
  });
});

describe('date', () => {
  it.each([
    ['2023-02-28', [], '2023-02-28'],
    ['2024-02-29', [], '2024-02-29'],
    ['2023-05-04T10:20:00Z', [], '2023-05-04'],
    [44927, [], '2023-01-01'],
    ['44927', [], '2023-01-01'],
    ['04/05/2023', ['DD/MM/YYYY'], '2023-05-04'],
    ['04/05/2023', ['MM/DD/YYYY'], '2023-04-05'],
    ['4/5/2023', ['DD/MM/YYYY'], '2023-05-04'],
    ['31.12.2022', ['DD.MM.YYYY'], '2022-12-31'],
    ['31-12-2022', ['DD-MM-YYYY'], '2022-12-31'],
    ['2022/12/31', ['YYYY/MM/DD'], '2022-12-31'],
    ['2022/12/31', ['DD/MM/YYYY', 'YYYY/MM/DD'], '2022-12-31'],
  ] as const)('%j with %j → %s', (input, formats, expected) => {
    expect(coerceDate(input, formats)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['2023-02-30', [], /not a real calendar date/],
    ['2023-02-29', [], /not a real calendar date/],
    ['1900-02-29', [], /not a real calendar date/],
    ['2023-13-01', [], /not a real calendar date/],
    ['31/02/2023', ['DD/MM/YYYY'], /not a real calendar date/],
    ['13/25/2023', ['MM/DD/YYYY'], /not a real calendar date/],
    ['04/05/2023', [], /accepted format/],
    ['2023', [], /accepted format/],
    ['yesterday', [], /accepted format/],
    ['04.05.2023', ['DD/MM/YYYY'], /accepted format/],
    // A plain number in a date column is a year or a count, not day 2023 of 1900.
    [2023, [], /accepted format/],
  ] as const)('%j with %j is refused', (input, formats, message) => {
    const r = coerceDate(input, formats);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.code).toBe('invalid_date');
      expect(r.message).toMatch(message);
    }
  });

  it('never guesses day-first vs month-first: the hint asks for date_formats', () => {
    const r = coerceDate('04/05/2023');
    expect(!r.ok && r.hint).toMatch(/date_formats/);
  });
});

describe('options', () => {
  const index: OptionIndex = {
    byLabel: new Map([
      ['junior', 'id-j'],
      ['senior', 'id-s'],
    ]),
    byLegacy: new Map([['sr', 'id-s']]),
    labels: ['Junior', 'Senior'],
  };
  it.each([
    ['Junior', 'id-j'],
    ['SENIOR', 'id-s'],
    ['  senior ', 'id-s'],
    ['Sr', 'id-s'],
  ])('%j → %s', (label, apiId) => {
    expect(coerceOption(label, index)).toEqual({ ok: true, value: apiId });
  });
  it('lists the allowed labels for an unknown label', () => {
    const r = coerceOption('Expert', index);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.code).toBe('unknown_option');
      expect(r.message).toContain('Junior, Senior');
      expect(r.hint).toMatch(/values:/);
    }
  });
});
