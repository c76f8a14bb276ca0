/** The CSV record reader: the same records and lines however the text is cut into chunks. */
import { describe, expect, it } from 'vitest';
import { CsvTokenizer, type OverlongRecord } from '../../src/sources/csv/split-records.js';

function records(chunks: string[], limit = 1024 * 1024): { records: unknown[]; overlong?: OverlongRecord } {
  const out: unknown[] = [];
  const tokenizer = new CsvTokenizer(0x2c, (fields, info) => out.push({ fields: [...fields], ...info }), limit);
  // Every chunk, then the end of the text (as the stream's flush gives it).
  for (const [i, chunk] of [...chunks, ''].entries()) {
    const overlong = tokenizer.push(chunk, i === chunks.length);
    if (overlong) return { records: out, overlong };
  }
  return { records: out };
}

const TEXT =
  'ID,Name,Notes\r\n1,"""Prefers email""\r\nAvailable",x\n\n2,"Smith, John" Jr,"a""b"\r3,Dr. "Bob",\r\n4,"x" "y",z\r\n5,"open\nto the end';

describe('CsvTokenizer', () => {
  it('reads RFC 4180 and what Excel reads beyond it, with physical lines', () => {
    const { records: found } = records([TEXT]);
    expect(found).toEqual([
      { fields: ['ID', 'Name', 'Notes'], startLine: 1, endLine: 1, textAfterQuote: -1, strayQuote: -1, multiLine: -1, unclosed: false },
      { fields: ['1', '"Prefers email"\r\nAvailable', 'x'], startLine: 2, endLine: 3, textAfterQuote: -1, strayQuote: -1, multiLine: 1, unclosed: false },
      { fields: ['2', 'Smith, John Jr', 'a"b'], startLine: 5, endLine: 5, textAfterQuote: 1, strayQuote: -1, multiLine: -1, unclosed: false },
      { fields: ['3', 'Dr. "Bob"', ''], startLine: 6, endLine: 6, textAfterQuote: -1, strayQuote: -1, multiLine: -1, unclosed: false },
      { fields: ['4', 'x "y"', 'z'], startLine: 7, endLine: 7, textAfterQuote: 1, strayQuote: 1, multiLine: -1, unclosed: false },
      { fields: ['5', 'open\nto the end'], startLine: 8, endLine: 9, textAfterQuote: -1, strayQuote: -1, multiLine: -1, unclosed: true },
    ]);
  });

  it('gives the same records for every place the text is cut, and for one character at a time', () => {
    const whole = records([TEXT]).records;
    for (let cut = 1; cut < TEXT.length; cut++) expect(records([TEXT.slice(0, cut), TEXT.slice(cut)]).records, `cut at ${cut}`).toEqual(whole);
    expect(records([...TEXT]).records).toEqual(whole);
  });

  it('stops at a record past the limit, with its real cause', () => {
    expect(records(['a,b\n1,"', 'x'.repeat(50), 'y'.repeat(50)], 64).overlong).toEqual({ startLine: 2, kind: 'open-quote' });
    expect(records(['a,b\n1,"""x', 'x'.repeat(80), 'y'], 64).overlong).toEqual({ startLine: 2, kind: 'open-quote' });
    expect(records(['a,b\n1,', 'x'.repeat(80), 'y'], 64).overlong).toEqual({ startLine: 2, kind: 'long-line' });
    expect(records(['a,b\n1,"', 'x\n'.repeat(40), '"\n'], 64).overlong).toEqual({ startLine: 2, kind: 'open-quote' });
    expect(records(['a,b\n1,"', 'x'.repeat(40)], 32).overlong).toEqual({ startLine: 2, kind: 'open-quote' });
  });
});
