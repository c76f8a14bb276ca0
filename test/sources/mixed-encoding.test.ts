/** A CSV whose rows were saved in two encodings is refused rather than silently corrupted. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSource } from '../../src/sources/index.js';

describe('mixed encodings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rostersync-mixed-'));
  const utf8 = Buffer.from('Société', 'utf8');
  const cp1252 = Buffer.from([0x53, 0x6f, 0x63, 0x69, 0xe9, 0x74, 0xe9]);

  it('refuses UTF-8 and Windows-1252 rows in one file, naming the first bad line', async () => {
    const file = join(dir, 'mixed.csv');
    writeFileSync(file, Buffer.concat([Buffer.from('ID,Name\n1,'), utf8, Buffer.from('\n2,Plain\n3,'), cp1252, Buffer.from('\n')]));
    await expect(openSource({ file }, { baseDir: dir })).rejects.toThrow(/mixes encodings: .* from line 4/);
  });

  it('still reads a file that is Windows-1252 throughout', async () => {
    const file = join(dir, 'cp1252.csv');
    writeFileSync(file, Buffer.concat([Buffer.from('ID,Name\n1,'), cp1252, Buffer.from('\n')]));
    const source = await openSource({ file }, { baseDir: dir });
    const rows = [];
    for await (const item of source.items) if (item.kind === 'row') rows.push(item.row.values);
    expect(rows).toEqual([{ ID: '1', Name: 'Société' }]);
  });

  it('reads a mixed file when the pipeline sets the encoding explicitly', async () => {
    const file = join(dir, 'mixed-explicit.csv');
    writeFileSync(file, Buffer.concat([Buffer.from('ID,Name\n1,'), utf8, Buffer.from('\n')]));
    const source = await openSource({ file, csv: { encoding: 'windows-1252', delimiter: 'auto', header_row: 1 } }, { baseDir: dir });
    expect(source.notes.join(' ')).toContain('set in the pipeline');
  });
});
