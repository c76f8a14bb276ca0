import { describe, expect, it } from 'vitest';
import { formatDate, normaliseCell, serialToDate, type CellIssue } from '../../bench/baseline/normalise-cell.js';

// The replaced exceljs-based reader's cell rules, kept as bench/xlsx-readers.ts's baseline.
describe('normaliseCell', () => {
  const dateFormat = 'yyyy-mm-dd';
  it.each<{ name: string; value: unknown; numFmt?: string; expected: unknown; issue?: CellIssue }>([
    { name: 'text is trimmed', value: '  Ada  ', expected: 'Ada' },
    { name: 'blank text is null', value: '   ', expected: null },
    { name: 'undefined is null', value: undefined, expected: null },
    { name: 'null is null', value: null, expected: null },
    { name: 'numbers stay numbers', value: 42.5, expected: 42.5 },
    { name: 'NaN is null', value: Number.NaN, expected: null },
    { name: 'booleans stay booleans', value: false, expected: false },
    { name: 'dates are YYYY-MM-DD (UTC)', value: new Date(Date.UTC(2024, 1, 29, 23, 59)), expected: '2024-02-29' },
    { name: 'invalid dates are null', value: new Date(Number.NaN), expected: null },
    { name: 'rich text is flattened', value: { richText: [{ text: 'Marie ' }, { text: 'Curie ', font: { bold: true } }] }, expected: 'Marie Curie' },
    { name: 'hyperlinks give their text', value: { text: ' ORCID ', hyperlink: 'https://orcid.org/x' }, expected: 'ORCID' },
    { name: 'hyperlink with rich text', value: { text: { richText: [{ text: 'a' }, { text: 'b' }] }, hyperlink: 'x' }, expected: 'ab' },
    { name: 'formula gives its cached number', value: { formula: 'A1*2', result: 4 }, expected: 4 },
    { name: 'formula gives its cached text', value: { formula: 'A1&B1', result: ' ab ' }, expected: 'ab' },
    { name: 'formula cached 0', value: { formula: 'A1*0', result: 0 }, expected: 0 },
    { name: 'date-formatted formula', value: { formula: 'A1+1', result: 45265 }, numFmt: dateFormat, expected: '2023-12-05' },
    { name: 'shared formula', value: { sharedFormula: 'A1', result: 7 }, expected: 7 },
    { name: 'formula error result (NaN)', value: { formula: '1/0', result: Number.NaN }, expected: null, issue: 'formula-error' },
    { name: 'formula error object', value: { formula: '1/0', result: { error: '#DIV/0!' } }, expected: null, issue: 'formula-error' },
    { name: 'formula without cached result', value: { formula: 'A1' }, expected: null, issue: 'formula-no-result' },
    { name: 'error value', value: { error: '#N/A' }, expected: null, issue: 'error-value' },
  ])('$name', ({ value, numFmt, expected, issue }) => {
    const issues: CellIssue[] = [];
    expect(normaliseCell(value, { numFmt, onIssue: (found) => issues.push(found) })).toEqual(expected);
    expect(issues).toEqual(issue ? [issue] : []);
  });

  it.each([
    { serial: 61, date1904: false, expected: '1900-03-01' },
    { serial: 45292, date1904: false, expected: '2024-01-01' },
    { serial: 0, date1904: true, expected: '1904-01-01' },
  ])('serial $serial (1904: $date1904) → $expected', ({ serial, date1904, expected }) => {
    expect(serialToDate(serial, date1904)).toBe(expected);
  });

  it('pads years and months', () => {
    expect(formatDate(new Date(Date.UTC(999, 0, 5)))).toBe('0999-01-05');
  });
});
