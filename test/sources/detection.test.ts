import { describe, expect, it } from 'vitest';
import { classifyUtf8, detectBom, detectDelimiter, incompleteUtf8Tail, lineStartOffset } from '../../src/sources/csv-sniff.js';
import { formatDate, normaliseCell, serialToDate, type CellIssue } from '../../src/sources/normalise-cell.js';

describe('detectDelimiter', () => {
  it.each([
    { text: 'a,b,c\n1,2,3\n', delimiter: ',', found: true },
    { text: 'a;b;c\n1;2;3\n', delimiter: ';', found: true },
    { text: 'a\tb\tc\n1\t2\t3\n', delimiter: '\t', found: true },
    { text: 'a|b|c\n1|2|3\n', delimiter: '|', found: true },
    { text: 'Name;Notes\n"Curie, Marie";"a, b, c"\n', delimiter: ';', found: true },
    { text: 'Name;Notes\r\nCurie, Marie;x\r\nBohr;y, z\r\n', delimiter: ';', found: true },
    { text: 'a,b;c\n1,2;3\n4,5;6\n', delimiter: ',', found: true }, // tie: comma preferred
    { text: 'a;b;c,d\n1;2;3,4\n1;2;3\n', delimiter: ';', found: true }, // comma count inconsistent
    { text: '"multi\nline, with, commas";b\n"x";y\n', delimiter: ';', found: true },
    { text: 'email\nada@example.org\n', delimiter: ',', found: false },
  ])('$text → $delimiter', ({ text, delimiter, found }) => {
    expect(detectDelimiter(text, true)).toEqual({ delimiter, found });
  });

  it('ignores a last record cut off by the sample edge', () => {
    expect(detectDelimiter('a;b\n1;2\n3;4\n5', false).delimiter).toBe(';');
  });
});

describe('byte-level helpers', () => {
  it.each([
    { bytes: [0xef, 0xbb, 0xbf, 0x41], bom: { bom: 'utf-8', length: 3 } },
    { bytes: [0xff, 0xfe, 0x41, 0x00], bom: { bom: 'utf-16le', length: 2 } },
    { bytes: [0xfe, 0xff, 0x00, 0x41], bom: { bom: 'utf-16be', length: 2 } },
    { bytes: [0x41, 0x42], bom: undefined },
  ])('detectBom $bytes', ({ bytes, bom }) => {
    expect(detectBom(Buffer.from(bytes))).toEqual(bom);
  });

  it.each([
    { name: 'ascii', bytes: Buffer.from('abc'), tail: 0, verdict: 'ascii' },
    { name: 'complete é', bytes: Buffer.from('café'), tail: 0, verdict: 'utf-8' },
    { name: 'é cut after its lead byte', bytes: Buffer.from('café').subarray(0, 4), tail: 1, verdict: 'utf-8' },
    { name: '€ cut after two of three bytes', bytes: Buffer.from('x€').subarray(0, 3), tail: 2, verdict: 'utf-8' },
    { name: 'Windows-1252 é', bytes: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2c]), tail: 0, verdict: 'invalid' },
  ])('$name: tail $tail, $verdict', ({ bytes, tail, verdict }) => {
    expect(incompleteUtf8Tail(bytes)).toBe(tail);
    expect(classifyUtf8(bytes)).toBe(verdict);
  });

  it.each([
    { text: 'a\nb\nc', line: 1, offset: 0 },
    { text: 'a\nb\nc', line: 3, offset: 4 },
    { text: 'a\r\nb\r\nc', line: 3, offset: 6 },
    { text: 'a\rb\rc', line: 2, offset: 2 },
    { text: 'a\nb\n', line: 3, offset: 4 },
    { text: 'a\nb', line: 4, offset: undefined },
  ])('lineStartOffset($text, $line) = $offset', ({ text, line, offset }) => {
    expect(lineStartOffset(Buffer.from(text), line)).toBe(offset);
  });
});

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
