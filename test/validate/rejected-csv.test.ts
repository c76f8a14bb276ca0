import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RejectedRow } from '../../src/mapping/types.js';
import { escapeFormula, renderRejectedCsv, writeRejectedCsv } from '../../src/report/rejected-csv.js';
import { tempDir } from './helpers.js';

const rejected = (values: RejectedRow['values'], row = 5): RejectedRow => ({
  provenance: { file: 'r.csv', row },
  values,
  problems: [
    { provenance: { file: 'r.csv', row }, column: 'Email', value: 'x@', code: 'invalid_email', message: 'emails: not a valid email address', hint: 'Correct the address.' },
    { provenance: { file: 'r.csv', row }, code: 'missing_required', message: 'name is required', hint: 'Fill in Name.' },
  ],
});

describe('formula escaping', () => {
  it.each([
    ['=HYPERLINK("http://evil","x")', `'=HYPERLINK("http://evil","x")`],
    ['+33 1 23 45 67', `'+33 1 23 45 67`],
    ['-cmd|calc', `'-cmd|calc`],
    ['@SUM(A1)', `'@SUM(A1)`],
    ['\tcmd', `'\tcmd`],
    ['\rcmd', `'\rcmd`],
    ['-3', '-3'],
    ['+4.5', '+4.5'],
    ['plain', 'plain'],
    ['a=b', 'a=b'],
  ])('%j → %j', (input, expected) => {
    expect(escapeFormula(input)).toBe(expected);
  });
});

describe('renderRejectedCsv', () => {
  it('writes the original columns in header order, then the error columns', () => {
    const text = renderRejectedCsv([rejected({ Name: null, Email: 'x@', Notes: '=1+1', Count: 3 })], { headers: ['ID', 'Name', 'Email', 'Notes', 'Count'] });
    const [header, line] = text.split('\r\n');
    expect(header).toBe('ID,Name,Email,Notes,Count,error_row,error_codes,error_messages,error_hints');
    expect(line).toBe(
      ",,x@,'=1+1,3,5,invalid_email; missing_required,[Email] emails: not a valid email address (value: x@) | name is required,Correct the address. | Fill in Name.",
    );
  });

  it('quotes commas, quotes and line breaks', () => {
    const text = renderRejectedCsv([rejected({ Name: 'Curie, "Marie"\nPhD' })]);
    expect(text.split('\r\n')[1]).toMatch(/^"Curie, ""Marie""\nPhD",5,/);
  });

  it('renames an error column that clashes with a source column', () => {
    expect(renderRejectedCsv([rejected({ error_row: 'x' })]).split('\r\n')[0]).toBe('error_row,_error_row,error_codes,error_messages,error_hints');
  });
});

describe('writeRejectedCsv', () => {
  it('writes UTF-8 with BOM, mode 0600, replacing a looser file', async () => {
    const path = join(tempDir(), 'rejected.csv');
    writeFileSync(path, 'old', { mode: 0o644 });
    await writeRejectedCsv(path, [rejected({ Name: 'Søren' })]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const text = readFileSync(path, 'utf8');
    expect(text.startsWith('\uFEFFName,error_row')).toBe(true);
    expect(text).toContain('Søren');
  });
});
