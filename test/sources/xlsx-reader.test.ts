import { describe, expect, it } from 'vitest';
import { openSource } from '../../src/sources/index.js';
import { fixturesDir, readFixture } from './read-all.js';

describe('XLSX reader', () => {
  it('reads the first sheet by default with one normalised value per cell kind', async () => {
    const { source, rows, errors } = await readFixture({ file: 'roster.xlsx' });
    expect(source.format).toBe('xlsx');
    expect(source.sheet).toBe('Reviewers');
    expect(source.headers).toEqual([
      'Name',
      'Email',
      'Reviews completed',
      'Last review date',
      'Profile',
      'Score',
      'Active',
      'Next review',
    ]);
    // Row 3 has a formula with an error result: a reject naming the cell, not a row with an empty Score.
    expect(errors.map((error) => error.provenance.row)).toEqual([3]);
    // Rows 4 (empty) and 5 (formatted, blank text) are skipped.
    expect(rows.map((row) => row.provenance)).toEqual([2, 6, 7].map((row) => ({ file: 'roster.xlsx', sheet: 'Reviewers', row })));
  });

  it.each([
    { what: 'trimmed text', row: 2, column: 'Name', value: 'Marie Curie' },
    { what: 'a number', row: 2, column: 'Reviews completed', value: 12 },
    { what: 'zero', row: 6, column: 'Reviews completed', value: 0 },
    { what: 'a date', row: 2, column: 'Last review date', value: '2023-11-05' },
    { what: 'an empty cell', row: 6, column: 'Last review date', value: null },
    { what: 'a hyperlink (its text)', row: 2, column: 'Profile', value: 'ORCID profile' },
    { what: 'a formula (cached result)', row: 2, column: 'Score', value: 24 },
    { what: 'a formula with result 0', row: 6, column: 'Score', value: 0 },
    { what: 'a date-formatted formula', row: 2, column: 'Next review', value: '2023-12-05' },
    { what: 'TRUE', row: 2, column: 'Active', value: true },
  ])('reads $what: row $row, $column = $value', async ({ row, column, value }) => {
    const { rows } = await readFixture({ file: 'roster.xlsx' });
    const found = rows.find((candidate) => candidate.provenance.row === row);
    expect(found?.values[column]).toEqual(value);
  });

  it('rejects the row of a formula with an error result, naming the cell, and notes merged cells', async () => {
    const { source, errors } = await readFixture({ file: 'roster.xlsx' });
    expect(errors[0]?.message).toMatch(/^Row 3 of sheet "Reviewers" cannot be read: cell F3 \(column "Score"\) holds the error #/);
    expect(source.notes.join('\n')).toContain('1 merged cell range(s) (C7:D7)');
  });

  it('reads inline rich text whole (every run) and notes merged cells', async () => {
    const { source, rows } = await readFixture({ file: 'inline-rich-text.xlsx' });
    expect(rows[0]?.values).toEqual({ Name: 'Marie Curie', Email: 'marie@example.org' });
    expect(source.notes.join('\n')).not.toContain('inline rich-text');
    expect(source.notes.join('\n')).toContain('1 merged cell range(s) (C5:E6)');
  });

  it.each([
    { sheet: 'Board' as const },
    { sheet: 'board' as const },
    { sheet: 2 as const },
  ])('chooses a sheet by name or position: $sheet', async ({ sheet }) => {
    const { source, rows } = await readFixture({ file: 'roster.xlsx', xlsx: { sheet, header_row: 3 } });
    expect(source.sheet).toBe('Board');
    expect(source.headers).toEqual(['Name', 'Board role', 'Term ends']);
    expect(rows.map((row) => [row.provenance.row, row.values])).toEqual([
      [4, { Name: 'Ada Lovelace', 'Board role': 'Chair', 'Term ends': '2026-12-31' }],
      [5, { Name: 'Alan Turing', 'Board role': 'Member', 'Term ends': '2025-06-30' }],
    ]);
  });

  it('treats a header-only sheet as a valid source with no rows and a note', async () => {
    const { source, rows } = await readFixture({ file: 'header-only.xlsx' });
    expect(source.headers).toEqual(['Name', 'Email']);
    expect(rows).toEqual([]);
    expect(source.notes.join('\n')).toContain('has a header row but no data rows');
  });

  it('aborts on signal', async () => {
    const controller = new AbortController();
    const source = await openSource({ file: 'roster.xlsx' }, { baseDir: fixturesDir, signal: controller.signal });
    let rows = 0;
    await expect(
      (async () => {
        for await (const item of source.items) {
          if (item.kind === 'row' && ++rows === 1) controller.abort();
        }
      })(),
    ).rejects.toThrow(/abort/i);
    expect(rows).toBe(1);
  });

  it('stops reading when the consumer breaks out early', async () => {
    const source = await openSource({ file: 'roster.xlsx' }, { baseDir: fixturesDir });
    let seen = 0;
    for await (const item of source.items) {
      if (item.kind === 'row') seen++;
      break;
    }
    expect(seen).toBe(1);
  });
});
