/**
 * The XLSX corpus: workbooks written by real applications (LibreOffice, gnumeric,
 * openpyxl, XlsxWriter) and hand-assembled ones for documented Excel behaviours, each read many
 * times and compared with the values an independent reader (openpyxl) gives for it
 * (test/fixtures/xlsx-corpus/expected.json, made by reference.py).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openSource, SourceError } from '../../src/sources/index.js';
import type { CellValue } from '../../src/sources/index.js';

const CORPUS = fileURLToPath(new URL('../fixtures/xlsx-corpus/', import.meta.url));
/** Reads of each file: results that depended on zip entry order or timing would differ between them. */
const READS = 20;

type ExpectedItem = { row: number; values: Record<string, CellValue> } | { row: number; rejected: string[] };
interface ExpectedSheet {
  name: string;
  headers: string[];
  items: ExpectedItem[];
}
const expected = JSON.parse(readFileSync(`${CORPUS}expected.json`, 'utf8')) as Record<string, { sheets: ExpectedSheet[] }>;

async function readSheet(file: string, sheet: string | number): Promise<{ headers: string[]; items: ExpectedItem[] }> {
  const source = await openSource({ file, xlsx: { sheet, header_row: 1 } }, { baseDir: CORPUS });
  const items: ExpectedItem[] = [];
  for await (const item of source.items) {
    if (item.kind === 'row') items.push({ row: item.row.provenance.row, values: item.row.values });
    else items.push({ row: item.error.provenance.row, rejected: [...item.error.message.matchAll(/\bcell ([A-Z]+\d+)/g)].map((match) => match[1] as string) });
  }
  return { headers: source.headers, items };
}

const cases = Object.entries(expected).flatMap(([file, { sheets }]) => sheets.map((sheet, index) => ({ file, sheet, position: index + 1 })));

describe('XLSX corpus: same values as the reference reader, on every read', () => {
  it('has every writer and behaviour in the corpus', () => {
    const files = Object.keys(expected);
    for (const writer of ['libreoffice', 'gnumeric', 'openpyxl', 'xlsxwriter', 'libreoffice-1904', 'xlsxwriter-1904']) expect(files).toContain(`real/${writer}.xlsx`);
    for (const made of ['excel-behaviours', 'date1904', 'absolute-targets', 'prefixed', 'no-references', 'cjk-names', 'huge-other-sheet']) expect(files).toContain(`handmade/${made}.xlsx`);
  });

  it.each(cases)('$file, sheet "$sheet.name"', async ({ file, sheet, position }) => {
    // By name, given in NFC as a user types it (the file may store it decomposed).
    const name = sheet.name.normalize('NFC');
    for (let read = 0; read < READS; read++) {
      const result = await readSheet(file, read % 2 === 0 ? name : position);
      expect(result, `read ${read + 1} of ${file}`).toEqual({ headers: sheet.headers, items: sheet.items });
    }
  });
});

describe('XLSX corpus: Excel behaviours spelled out', () => {
  const behaviours = expected['handmade/excel-behaviours.xlsx']!.sheets[0]!;
  const row = (number: number): Record<string, CellValue> | undefined => {
    const item = behaviours.items.find((candidate) => candidate.row === number);
    return item && 'values' in item ? item.values : undefined;
  };

  // These pin the reference values themselves to what Excel shows, so a regenerated reference
  // cannot drift unnoticed.
  it.each([
    { what: 'a header formula whose cached result is 0 names its column "0"', check: () => expect(behaviours.headers).toEqual(['Name', 'Note', 'Value', '0']) },
    { what: 'text before rich-text runs is kept', check: () => expect(row(2)?.Name).toBe('Marie Curie') },
    { what: 'a phonetic guide gives the base text, not the reading', check: () => expect(row(3)?.Name).toBe('山田　太郎') },
    { what: 'a shared-formula follower uses its own date style', check: () => expect(row(3)?.['0']).toBe('2024-01-01') },
    { what: 'a shared-formula follower in General stays a number', check: () => expect(row(4)?.['0']).toBe(3) },
    { what: '_x000D_ is a carriage return', check: () => expect(row(4)?.Name).toBe('line\rbreak') },
    { what: '_x005F_ escapes the underscore', check: () => expect(row(5)?.Name).toBe('keep _x000D_ literal') },
    { what: 'serial 1 is 1900-01-01 (leap-year bug)', check: () => expect(row(5)?.Value).toBe('1900-01-01') },
    { what: 'serial 61 is 1900-03-01', check: () => expect(row(5)?.['0']).toBe('1900-03-01') },
    { what: 'serial 59 is 1900-02-28', check: () => expect(row(6)?.Value).toBe('1900-02-28') },
    { what: 'entities are decoded once', check: () => expect(row(6)?.Name).toBe('R&amp;D') },
    { what: 'a time-of-day format gives HH:MM:SS', check: () => expect(row(6)?.['0']).toBe('18:00:00') },
    { what: 'a boolean formula result is a boolean', check: () => expect(row(7)?.Value).toBe(true) },
    { what: 'escapes in a text formula result are decoded', check: () => expect(row(7)?.['0']).toBe('tab\there') },
    { what: 't="d" ISO dates', check: () => expect([row(8)?.Value, row(8)?.['0']]).toEqual(['2024-02-29', '2024-02-29 13:45:30']) },
    { what: 'a duration format gives hours past 24', check: () => expect(row(9)?.['0']).toBe('37:30:00') },
    { what: 'inline strings: entities once, rich runs whole, no reading', check: () => expect([row(10)?.Name, row(10)?.Value]).toEqual(['A&amp;B', 'Ada Lovelace']) },
    { what: 'error values and formulas without a result reject their rows', check: () => expect(behaviours.items.filter((item) => 'rejected' in item)).toEqual([{ row: 11, rejected: ['C11', 'D11'] }, { row: 12, rejected: ['C12'] }, { row: 13, rejected: ['C13'] }]) },
    { what: 'empty cells are null', check: () => expect(row(14)).toEqual({ Name: 'Value', Note: 'empty cells', Value: null, '0': null }) },
  ])('$what', ({ check }) => check());

  it('names the rejected cell, its column and the error in the message', async () => {
    const source = await openSource({ file: 'handmade/excel-behaviours.xlsx' }, { baseDir: CORPUS });
    const messages: string[] = [];
    for await (const item of source.items) if (item.kind === 'error') messages.push(item.error.message);
    expect(messages[0]).toContain('cell C11 (column "Value") holds the error #REF!');
    expect(messages[1]).toContain('cell C12 (column "Value") is a formula with no saved result');
    expect(messages[2]).toContain('cell C13 (column "Value") holds the error #N/A');
  });
});

describe('XLSX zip-bomb guard', () => {
  it('reads a small sheet beside a huge one, and refuses only the huge one when asked for it', async () => {
    const small = await readSheet('handmade/huge-other-sheet.xlsx', 'Roster');
    expect(small.items).toEqual([{ row: 2, values: { Name: 'Ada' } }]);
    const error = await readSheet('handmade/huge-other-sheet.xlsx', 'Log').then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(SourceError);
    expect((error as SourceError).message).toMatch(/huge-other-sheet\.xlsx looks like a zip bomb: its part xl\/worksheets\/sheet2\.xml inflates from 0\.1 MB to 36\.0 MB/);
  });
});
