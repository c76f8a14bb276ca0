/**
 * Rows from rejected.csv can be read back by the same pipeline after they are fixed: the
 * file is written in the pipeline's own encoding, delimiter and header row.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli, tempDir, writeFieldsFile } from './helpers.js';

let dir: string;
let fieldsFile: string;
beforeAll(() => {
  dir = tempDir();
  fieldsFile = writeFieldsFile(dir);
});

describe('rejected.csv round trip', () => {
  it('the legacy pipeline (Windows-1252, ";", title line) reads its own rejected.csv back', async () => {
    const out = join(dir, 'rejected.csv');
    const first = await runCli(['validate', 'pipelines/legacy.yaml', '--fields-file', fieldsFile, '--rejected-out', out, '--json']);
    expect(first.code).toBe(2);
    const rejectedCount = (JSON.parse(first.stdout) as { counts: { rejected: number } }).counts.rejected;

    // The same pipeline, pointed at rejected.csv (a person fixes cells in Excel and saves it as is).
    const pipeline = readFileSync(join(ROOT, 'pipelines/legacy.yaml'), 'utf8')
      .replace('file: ../samples/legacy-export.csv', `file: ${out}`)
      .replace('mapping: ../mappings/legacy.yaml', `mapping: ${join(ROOT, 'mappings/legacy.yaml')}`);
    const copy = join(dir, 'legacy-again.yaml');
    writeFileSync(copy, pipeline);
    const again = await runCli(['validate', copy, '--fields-file', fieldsFile, '--json']);
    expect(again.stderr).toBe('');
    const result = JSON.parse(again.stdout) as { counts: { rowsRead: number; rejected: number }; notes?: string[] };
    // Every rejected row is read again, with the same columns; unfixed, each is rejected again for
    // the same reasons (nothing new went wrong on the way, such as mojibake or a lost header).
    expect(result.counts.rowsRead).toBe(rejectedCount);
    expect(result.counts.rejected).toBe(rejectedCount);
    const codes = (text: string) => [...text.matchAll(/"code": "(\w+)"/g)].map((m) => m[1]).sort();
    expect(codes(first.stdout).length).toBeGreaterThan(0);
    expect(codes(again.stdout)).toEqual(codes(first.stdout));
  });
});

describe('renderRejectedCsv in a dialect', () => {
  it('uses the delimiter, quotes cells holding it, and puts title lines above the header row', async () => {
    const { renderRejectedCsv, dialectFor } = await import('../../src/report/rejected-csv.js');
    const dialect = dialectFor({ csv: { encoding: 'auto', delimiter: ';', header_row: 3 } });
    expect(dialect).toEqual({ delimiter: ';', encoding: 'utf-8', headerRow: 3 });
    const text = renderRejectedCsv(
      [{ provenance: { file: 'r.csv', row: 5 }, values: { ID: 'a;b', Name: 'Zoë' }, problems: [{ provenance: { file: 'r.csv', row: 5 }, code: 'x', message: 'm' }] }],
      { dialect },
    );
    const lines = text.split('\r\n');
    expect(lines[0]).toMatch(/^Rows rostersync rejected/);
    expect(lines[1]).toBe('');
    expect(lines[2]).toBe('ID;Name;error_row;error_codes;error_messages;error_hints');
    expect(lines[3]).toBe('"a;b";Zoë;5;x;m;');
  });
});
