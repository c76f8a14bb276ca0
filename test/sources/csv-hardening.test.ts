/**
 * CSV readers: a NUL byte anywhere is refused, not only in the first 64 KB; invalid
 * UTF-8 is reported by line; a row with many cells beyond the header gets a bounded message.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSource } from '../../src/sources/index.js';
import { SourceError } from '../../src/sources/source-error.js';
import type { SourceRowError } from '../../src/sources/index.js';
import { unmarked } from '../../src/personal-data/personal-text.js';

const dir = mkdtempSync(join(tmpdir(), 'rostersync-csv-hardening-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `count` plain rows after a header, each line `n,Person n,pn@example.org`. */
function rows(count: number, from = 1): string {
  return Array.from({ length: count }, (_, i) => `${from + i},Person ${from + i},p${from + i}@example.org\n`).join('');
}

async function readAll(name: string, content: Buffer | string, csv: Record<string, unknown> = {}) {
  writeFileSync(join(dir, name), content);
  const source = await openSource({ file: name, format: 'csv', ...(Object.keys(csv).length ? { csv } : {}) } as never, { baseDir: dir });
  const errors: SourceRowError[] = [];
  let rowCount = 0;
  for await (const item of source.items) {
    if (item.kind === 'row') rowCount++;
    else errors.push(item.error);
  }
  return { source, errors, rowCount };
}

describe('NUL bytes', () => {
  it('a NUL byte past the 64 KB sample is refused, naming its line', async () => {
    const head = `ID,Name,Email\n${rows(3000)}`;
    expect(Buffer.byteLength(head)).toBeGreaterThan(64 * 1024);
    const content = Buffer.concat([Buffer.from(head), Buffer.from('3001,Bad\u0000Person,bad@example.org\n'), Buffer.from(rows(5, 3002))]);
    const error = await readAll('late-nul.csv', content).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SourceError);
    expect((error as Error).message).toBe('late-nul.csv contains a NUL byte on line 3002: that part is binary data or damaged, not CSV text.');
  });
});

describe('invalid UTF-8 is reported by line', () => {
  it('with csv.encoding utf-8, bytes that are not UTF-8 are refused, naming the line of the first one', async () => {
    const content = Buffer.concat([Buffer.from(`ID,Name,Email\n${rows(3000)}`), Buffer.from([0x33, 0x30, 0x30, 0x31, 0x2c, 0x52, 0x65, 0x6e, 0xe9, 0x65, 0x2c, 0x78, 0x0a])]);
    const error = await readAll('late-invalid.csv', content, { encoding: 'utf-8' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SourceError);
    expect((error as SourceError).message).toMatch(/is not UTF-8, but source\.csv\.encoding says it is: line 3002 has the byte 0xE9/);
    expect(unmarked((error as SourceError).message)).toContain('"Renée"');
  });
});

describe('cells beyond the header', () => {
  it('a 100,000-cell row gets a count and the first three cells, not every one', async () => {
    const extra = Array.from({ length: 100_000 }, (_, i) => `x${i}`).join(',');
    const { errors, rowCount } = await readAll('wide-row.csv', `ID,Name,Email\n1,Ann,ann@example.org,${extra}\n2,Bob,bob@example.org\n`);
    expect(rowCount).toBe(1);
    expect(errors).toHaveLength(1);
    const [error] = errors;
    expect(error!.message).toBe(
      'Line 2 has 100003 cells but the header has 3 columns; 100000 values beyond the header (column 4: "x0", column 5: "x1", column 6: "x2", … and 99997 more). ' +
        'Remove the stray delimiter or quote the cell that contains it, or add a column name to the header.',
    );
    expect(error!.message.length).toBeLessThan(400);
    expect((error!.raw ?? '').length).toBeLessThanOrEqual(201);
  });

  it('memory stays bounded over many such rows (messages do not grow with the row)', async () => {
    const extra = Array.from({ length: 10_000 }, (_, i) => `y${i}`).join(",");
    const lines = Array.from({ length: 100 }, (_, i) => `${i},P${i},p${i}@example.org,${extra}\n`).join('');
    const { errors } = await readAll('wide-rows.csv', `ID,Name,Email\n${lines}`);
    expect(errors).toHaveLength(100);
    const retained = errors.reduce((sum, e) => sum + e.message.length + (e.raw?.length ?? 0), 0);
    // 100 rows of 10,000 cells (~7 MB of text) leave under 100 KB of messages.
    expect(retained).toBeLessThan(100_000);
  });
});
