import { describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../src/sources/options.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SourceError } from '../../src/sources/source-error.js';
import { fixturesDir, openError, readFixture } from './read-all.js';
import { unmarked } from '../../src/personal-data/personal-text.js';

describe('CSV reader: encodings', () => {
  it.each([
    {
      file: 'utf8-bom.csv',
      note: 'UTF-8 (byte-order mark)',
      headers: ['Name', 'Email', 'Affiliation'],
      first: { Name: 'Marie Curie', Email: 'marie@example.org', Affiliation: 'Université de Paris' },
    },
    {
      file: 'cp1252.csv',
      csv: { encoding: 'cp1252' },
      note: 'windows-1252 (set in the pipeline',
      headers: ['Name', 'Email', 'City', 'Notes'],
      first: { Name: 'José Müller', Email: 'jose@example.org', City: 'Düsseldorf', Notes: '“Prefers email”' },
    },
  ])('$file decodes as $note', async ({ file, note, headers, first, ...options }) => {
    const { source, rows, errors } = await readFixture({ file, ...('csv' in options ? { csv: options.csv as SourceConfig['csv'] } : {}) });
    expect(source.headers).toEqual(headers);
    expect(source.notes.join('\n')).toContain(note);
    expect(errors).toEqual([]);
    expect(rows[0]?.values).toEqual(first);
  });

  it('reads every Windows-1252 character: ü ß € curly quotes', async () => {
    const { rows } = await readFixture({ file: 'cp1252.csv', csv: { encoding: 'windows-1252', delimiter: 'auto', header_row: 1 } });
    expect(rows.map((row) => [row.values.Name, row.values.City, row.values.Notes])).toEqual([
      ['José Müller', 'Düsseldorf', '“Prefers email”'],
      ['Anna Groß', 'Straße 5', 'Budget 100 €'],
      ['Zoë O’Brien', 'Köln', '‘quoted’'],
    ]);
  });

  it('without a declaration, refuses a file whose only telling word reads as two encodings, showing the names each way', async () => {
    // "Zoë" is the one word Windows-1252 and Windows-1257 ("Zoė") read differently: one word decides nothing.
    const error = (await openError({ file: 'cp1252.csv' })) as SourceError;
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toMatch(/is not UTF-8, and its bytes do not say for sure/);
    expect(unmarked(error.message)).toContain('as windows-1252: "Zoë"');
    expect(error.hint).toContain('encoding: windows-1252');
  });

  it('without a declaration, refuses a file whose legacy encoding is not certain, the likeliest first and Cyrillic named', async () => {
    // One short Russian name in KOI8-R: the Cyrillic encodings read it as other letters each.
    const error = (await openError({ file: 'koi8-one-name.csv' })) as SourceError;
    expect(error).toBeInstanceOf(SourceError);
    expect(error.message).toMatch(/is not UTF-8, and its bytes do not say for sure which encoding it was saved in \(likeliest first\)/);
    expect(error.hint).toContain('for example "encoding: koi8-r"');
    expect(unmarked(error.message)).toContain('as KOI8-R: "Юрий"');
  });

  it('a byte-order mark wins over a declared encoding, and the notes say so', async () => {
    const { rows, source } = await readFixture({ file: 'utf8-bom.csv', csv: { encoding: 'windows-1252', delimiter: 'auto', header_row: 1 } });
    expect(rows[0]?.values.Affiliation).toBe('Université de Paris');
    expect(source.notes.join('\n')).toContain('although source.csv.encoding says windows-1252: a byte-order mark always wins');
  });

  it('switches to Windows-1252 when invalid UTF-8 appears after a plain-ASCII sample', async () => {
    const { rows, source, errors } = await readFixture({ file: 'late-cp1252.csv' });
    expect(errors).toEqual([]);
    expect(rows.at(-1)?.values).toEqual({ Name: 'Renée Dupré', Email: 'renee@example.org' });
    expect(rows.at(-1)?.provenance.row).toBe(rows.length + 1);
    const bytes = readFileSync(join(fixturesDir, 'late-cp1252.csv'));
    const firstNonAscii = bytes.findIndex((byte) => byte >= 0x80);
    expect(firstNonAscii).toBeGreaterThan(64 * 1024); // past the detection sample
    // Said by line: people find lines, not byte offsets, in an editor.
    const line = 1 + bytes.subarray(0, firstNonAscii).filter((byte) => byte === 0x0a).length;
    expect(source.notes.join('\n')).toContain(`switched to windows-1252 at line ${line} `);
  });
});

describe('CSV reader: delimiters', () => {
  it.each([
    { file: 'semicolon.csv', name: 'semicolon' },
    { file: 'tab.tsv', name: 'tab' },
    { file: 'pipe.txt', name: 'pipe' },
  ])('detects the $name in $file', async ({ file, name }) => {
    const { source, rows } = await readFixture({ file });
    expect(source.notes).toContain(`Delimiter: ${name} (detected).`);
    expect(source.headers).toEqual(['Name', 'Email', 'Country']);
    expect(rows.map((row) => row.values)).toEqual([
      { Name: 'Ada Lovelace', Email: 'ada@example.org', Country: 'UK' },
      { Name: 'Alan Turing', Email: 'alan@example.org', Country: 'UK' },
      { Name: 'Grace Hopper', Email: 'grace@example.org', Country: 'US' },
    ]);
  });

  it('ignores commas inside quotes when detecting', async () => {
    const { source, rows } = await readFixture({ file: 'semicolon-quoted-commas.csv' });
    expect(source.headers).toEqual(['Name', 'Affiliations', 'Email']);
    expect(rows[0]?.values).toEqual({ Name: 'Curie, Marie', Affiliations: 'Sorbonne, Paris', Email: 'marie@example.org' });
  });

  it('honours an explicit delimiter', async () => {
    const { source, rows } = await readFixture({ file: 'semicolon-quoted-commas.csv', csv: { delimiter: ',', encoding: 'auto', header_row: 1 } });
    expect(source.headers).toEqual(['Name;Affiliations;Email']);
    expect(rows).toHaveLength(0); // every data line has more cells than the one-column header
  });
});

describe('CSV reader: structure', () => {
  it('reads quoted multi-line fields and numbers rows by the line they start on', async () => {
    const { rows } = await readFixture({ file: 'multiline.csv' });
    expect(rows.map((row) => [row.provenance.row, row.values.Name, row.values.Notes])).toEqual([
      [2, 'Ada', 'First line\r\nsecond line'],
      [4, 'Alan', 'He said "hello"'],
      [6, 'Grace', 'one\ntwo\nthree'],
      [9, 'Edsger', 'plain'],
    ]);
  });

  it('skips title lines above header_row, blank lines and all-empty lines', async () => {
    const { source, rows } = await readFixture({ file: 'title-lines.csv', csv: { header_row: 3, encoding: 'auto', delimiter: 'auto' } });
    expect(source.headers).toEqual(['Name', 'Email', 'Active']);
    expect(source.notes).toContain('Skipped 2 line(s) above the header row (line 3).');
    expect(rows.map((row) => [row.provenance.row, row.values.Name, row.values.Active])).toEqual([
      [4, 'Ada', 'Yes'],
      [7, 'Alan', 'No'],
    ]);
    expect(rows[0]?.provenance).toEqual({ file: 'title-lines.csv', row: 4 });
  });

  it('reports an unbalanced quote mid-file as one row error and reads on', async () => {
    const { rows, errors, order } = await readFixture({ file: 'unbalanced-quote.csv' });
    expect(order).toEqual(['2', '!3', '6', '7', '8']);
    expect(errors[0]?.provenance).toEqual({ file: 'unbalanced-quote.csv', row: 3 });
    expect(errors[0]?.message).toContain('Lines 3–5 were read as one row');
    expect(rows.map((row) => row.values.Notes)).toEqual(['fine', 'read again', 'Dr. "Don" Knuth', 'stray "quote" inside']);
  });

  it('reports a quote left open at the end of the file', async () => {
    const { rows, errors, order } = await readFixture({ file: 'unclosed-quote-eof.csv' });
    expect(order).toEqual(['2', '!3']);
    expect(rows[0]?.values.Name).toBe('Ada');
    expect(errors[0]?.message).toContain('opened on line 3 is never closed, so lines 3–4 could not be read');
  });

  it('pads short rows with null and rejects values beyond the header', async () => {
    const { rows, errors, order } = await readFixture({ file: 'ragged.csv' });
    expect(order).toEqual(['2', '3', '!4', '5']);
    expect(rows.map((row) => row.values)).toEqual([
      { Name: 'Ada', Email: 'ada@example.org', Country: null },
      { Name: 'Alan', Email: 'alan@example.org', Country: 'UK' },
      { Name: 'Edsger', Email: null, Country: 'NL' },
    ]);
    expect(errors[0]?.message).toContain('Line 4 has 4 cells but the header has 3 columns');
    expect(errors[0]?.message).toContain('column 4: "extra value"');
  });

  it('drops empty trailing header cells (a trailing delimiter)', async () => {
    const { source, rows, errors } = await readFixture({ file: 'trailing-delimiter-header.csv' });
    expect(source.headers).toEqual(['Name', 'Email']);
    expect(errors).toEqual([]);
    expect(rows[0]?.values).toEqual({ Name: 'Ada', Email: 'ada@example.org' });
  });

  it('treats a header-only file as a valid source with no rows and a note', async () => {
    const { source, rows, errors } = await readFixture({ file: 'header-only.csv' });
    expect(source.headers).toEqual(['Name', 'Email', 'Country']);
    expect(rows).toEqual([]);
    expect(errors).toEqual([]);
    expect(source.notes).toContain('header-only.csv has a header row but no data rows.');
  });

  it('picks the format from the extension unless set', async () => {
    const config: SourceConfig = { file: 'pipe.txt', format: 'csv' };
    const { source } = await readFixture(config);
    expect(source.format).toBe('csv');
    expect(source.path).toMatch(/fixtures\/sources\/pipe\.txt$/);
  });
});
