/** A CSV whose rows were saved in two encodings is refused rather than silently corrupted. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSource } from '../../src/sources/index.js';
import { unmarked } from '../../src/personal-data/personal-text.js';

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

  it('refuses UTF-8 text under a declared Windows-1252, showing the names both ways', async () => {
    const file = join(dir, 'mixed-explicit.csv');
    writeFileSync(file, Buffer.concat([Buffer.from('ID,Name\n1,'), utf8, Buffer.from('\n')]));
    const error = await openSource({ file, csv: { encoding: 'windows-1252', delimiter: 'auto', header_row: 1 } }, { baseDir: dir }).catch((caught: unknown) => caught as Error);
    expect(unmarked((error as Error).message)).toContain('has UTF-8 text on line 2, but source.csv.encoding says windows-1252: read that way, "Société" would become "SociÃ©tÃ©".');
  });

  async function readAll(file: string) {
    const source = await openSource({ file }, { baseDir: dir });
    const names: string[] = [];
    for await (const item of source.items) if (item.kind === 'row') names.push(String(item.row.values.Name));
    return { names, notes: source.notes };
  }

  /** ASCII rows up to `until` bytes, so what follows lands past the 64 KB detection sample. */
  function asciiRows(until: number): Buffer {
    let text = 'ID,Name\n';
    for (let i = 1; text.length < until; i++) text += `${i},Person ${i}\n`;
    return Buffer.from(text);
  }

  it('refuses UTF-8 and Windows-1252 mixed in one chunk past the detection sample', async () => {
    const file = join(dir, 'late-mixed.csv');
    writeFileSync(file, Buffer.concat([asciiRows(100_000), Buffer.from('9001,'), utf8, Buffer.from('\n9002,'), cp1252, Buffer.from('\n')]));
    await expect(readAll(file)).rejects.toThrow(/mixes encodings/);
  });

  it('switches to Windows-1252 exactly when its first accent is the last byte of a chunk', async () => {
    const file = join(dir, 'boundary.csv');
    const head = asciiRows(131_000);
    const id = '8888,';
    // Put 0xE9 at byte 131071: the last byte of the second 64 KiB chunk, where it looks like an
    // unfinished UTF-8 character.
    const filler = 'A'.repeat(131_071 - head.length - id.length - 'Ren'.length);
    const tailRows = Array.from({ length: 5 }, (_, i) => Buffer.concat([Buffer.from(`${9000 + i},Ren`), Buffer.from([0xe9]), Buffer.from('\n')]));
    writeFileSync(file, Buffer.concat([head, Buffer.from(`${id}${filler}Ren`), Buffer.from([0xe9]), Buffer.from('\n'), ...tailRows]));
    const { names, notes } = await readAll(file);
    const accented = names.filter((n) => n.includes('Ren'));
    expect(accented).toHaveLength(6);
    for (const name of accented) expect(name.endsWith('René')).toBe(true);
    expect(notes.join(' ')).toContain('switched to windows-1252');
  });
});
