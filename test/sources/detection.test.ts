import { describe, expect, it } from 'vitest';
import { detectBom, detectDelimiter, lineStartOffset } from '../../src/sources/csv/sniff.js';
import { incompleteUtf8Tail } from '../../src/sources/encoding/bytes.js';
import { utf8Evidence } from '../../src/sources/encoding/decode.js';

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
    { name: 'é cut after its lead byte', bytes: Buffer.from('café').subarray(0, 4), tail: 1, verdict: 'ascii' },
    { name: '€ cut after two of three bytes', bytes: Buffer.from('x€').subarray(0, 3), tail: 2, verdict: 'ascii' },
    { name: 'Windows-1252 é', bytes: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2c]), tail: 0, verdict: 'invalid' },
  ])('$name: tail $tail, $verdict', ({ bytes, tail, verdict }) => {
    expect(incompleteUtf8Tail(bytes)).toBe(tail);
    const evidence = utf8Evidence(bytes);
    expect(evidence.invalid ? 'invalid' : evidence.utf8 ? 'utf-8' : 'ascii').toBe(verdict);
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
