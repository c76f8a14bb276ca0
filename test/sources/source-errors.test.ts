import { describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../src/sources/options.js';
import { EXIT, UserFacingError } from '../../src/errors/user-facing-error.js';
import { SourceError } from '../../src/sources/index.js';
import { openError } from './read-all.js';

interface BadFile {
  name: string;
  config: SourceConfig;
  /** Fragments the message must contain (file, location, cause). */
  message: string[];
  /** Fragment of the hint (the fix). */
  hint: string;
}

const badFiles: BadFile[] = [
  { name: 'missing file', config: { file: 'no-such-roster.csv' }, message: ['Roster file not found: no-such-roster.csv'], hint: 'relative to the pipeline file' },
  { name: 'a directory', config: { file: '.', format: 'csv' }, message: ['is not a file'], hint: 'roster file itself' },
  { name: 'empty (0 bytes)', config: { file: 'empty.csv' }, message: ['empty.csv is empty (0 bytes)'], hint: 'header row' },
  { name: 'only blank lines', config: { file: 'blank-lines-only.csv' }, message: ['blank-lines-only.csv', 'header row'], hint: 'header_row' },
  { name: 'UTF-16 without a BOM, in no clear byte order', config: { file: 'utf16-no-bom-mixed.csv' }, message: ['utf16-no-bom-mixed.csv contains NUL bytes', 'in no clear byte order'], hint: '"encoding: utf-16le"' },
  {
    name: 'duplicate CSV header',
    config: { file: 'duplicate-header.csv' },
    message: ['duplicate-header.csv', 'header row (line 1)', '"Name" in column 1 and column 3'],
    hint: 'unique name',
  },
  { name: 'blank CSV header', config: { file: 'blank-header.csv' }, message: ['blank-header.csv', 'no name in column 2'], hint: 'unique name' },
  {
    name: 'header_row past the end',
    config: { file: 'title-lines.csv', csv: { header_row: 30, encoding: 'auto', delimiter: 'auto' } },
    message: ['title-lines.csv: header_row is 30, but the file has only 7 line(s)'],
    hint: 'csv.header_row',
  },
  {
    name: 'CSV renamed .xlsx',
    config: { file: 'csv-renamed.xlsx' },
    message: ['csv-renamed.xlsx is not an Excel workbook', 'CSV file renamed .xlsx'],
    hint: 'format: csv',
  },
  { name: 'workbook read as CSV', config: { file: 'roster.xlsx', format: 'csv' }, message: ['roster.xlsx is a zip file'], hint: 'format: xlsx' },
  { name: 'truncated zip', config: { file: 'truncated.xlsx' }, message: ['truncated.xlsx is damaged', 'truncated or corrupt'], hint: 'save it again' },
  { name: 'corrupt zip', config: { file: 'corrupt.xlsx' }, message: ['corrupt.xlsx could not be read as an Excel workbook'], hint: 'save it again' },
  {
    name: 'unknown sheet name',
    config: { file: 'roster.xlsx', xlsx: { sheet: 'Reviewer list', header_row: 1 } },
    message: ['roster.xlsx has no sheet named "Reviewer list"', 'Sheets: "Reviewers", "Board"'],
    hint: 'source.xlsx.sheet',
  },
  {
    name: 'sheet number too high',
    config: { file: 'roster.xlsx', xlsx: { sheet: 3, header_row: 1 } },
    message: ['roster.xlsx has 2 sheet(s), so there is no sheet number 3', '"Reviewers", "Board"'],
    hint: 'sheet number',
  },
  {
    name: 'XLSX header row past the end',
    config: { file: 'roster.xlsx', xlsx: { sheet: 'Board', header_row: 40 } },
    message: ['roster.xlsx, sheet "Board": header_row is 40, but the sheet ends before row 40'],
    hint: 'source.xlsx.header_row',
  },
  {
    name: 'XLSX header row is empty',
    config: { file: 'roster.xlsx', xlsx: { sheet: 'Board', header_row: 2 } },
    message: ['sheet "Board": the header row (row 2) is empty'],
    hint: 'next row with values is row 3',
  },
  {
    name: 'duplicate and blank XLSX headers',
    config: { file: 'duplicate-header.xlsx' },
    message: ['duplicate-header.xlsx', 'sheet "People", row 1', 'no name in column C', '"Email" in column B and column D'],
    hint: 'unique name',
  },
  { name: 'legacy .xls extension', config: { file: 'old-roster.xls' }, message: ['legacy Excel (.xls)'], hint: 'Excel Workbook (.xlsx)' },
  { name: 'unknown extension', config: { file: 'roster.dat' }, message: ['Cannot tell the format of roster.dat'], hint: 'source.format' },
  {
    name: 'CSV options for a workbook',
    config: { file: 'roster.xlsx', csv: { encoding: 'auto', delimiter: ';', header_row: 1 } },
    message: ['source.csv options were given, but roster.xlsx is read as xlsx'],
    hint: 'source.xlsx',
  },
];

describe('file-level problems throw one SourceError (exit code 1)', () => {
  it.each(badFiles)('$name', async ({ config, message, hint }) => {
    const error = await openError(config);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toBeInstanceOf(UserFacingError);
    const sourceError = error as SourceError;
    expect(sourceError.exitCode).toBe(EXIT.usage);
    expect(sourceError.file).toBe(config.file);
    for (const fragment of message) expect(sourceError.message).toContain(fragment);
    expect(sourceError.hint).toContain(hint);
  });
});
