/**
 * The worker-thread reader (src/sources/read-in-worker.ts) must give exactly what the in-process
 * reader gives: the same header, rows, cells, errors, line numbers, notes and refusals.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../src/sources/options.js';
import { openSource, type OpenedSource, type SourceItem } from '../../src/sources/index.js';
import { openSourceInWorker, ROWS_PER_BATCH } from '../../src/sources/read-in-worker.js';
import { rowKeyOf } from '../../src/mapping/row-key.js';
import { fixturesDir } from './read-all.js';

async function readAll(opening: Promise<OpenedSource>): Promise<{ headers: string[]; items: SourceItem[]; notes: string[]; format: string; sheet?: string } | { refused: string }> {
  try {
    const source = await opening;
    const items: SourceItem[] = [];
    // Compared as data: a row read in a worker also carries its cells as one text (cellsText).
    for await (const item of source.items) items.push(item.kind === 'row' ? { kind: 'row', row: { values: item.row.values, provenance: item.row.provenance } } : item);
    return { headers: source.headers, items, notes: source.notes, format: source.format, ...(source.sheet ? { sheet: source.sheet } : {}) };
  } catch (error) {
    return { refused: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

const both = async (config: SourceConfig, baseDir = fixturesDir) => ({
  inProcess: await readAll(openSource(config, { baseDir })),
  inWorker: await readAll(openSourceInWorker(config, { baseDir })),
});

describe('reading a roster in a worker thread', () => {
  it.each([
    'cp1252.csv',
    'late-cp1252.csv',
    'multiline.csv',
    'ragged.csv',
    'semicolon-quoted-commas.csv',
    'title-lines.csv',
    'unbalanced-quote.csv',
    'unclosed-quote-eof.csv',
    'utf8-bom.csv',
    'header-only.csv',
    'tab.tsv',
    'roster.xlsx',
    'inline-rich-text.xlsx',
    'empty.csv',
    'utf16.csv',
    'corrupt.xlsx',
  ])('gives what the in-process reader gives: %s', async (file) => {
    const config: SourceConfig = file === 'title-lines.csv' ? { file, csv: { header_row: 3, encoding: 'auto', delimiter: 'auto' } } : { file };
    const { inProcess, inWorker } = await both(config);
    expect(inWorker).toEqual(inProcess);
  });

  it('streams many batches in order, with errors between rows, and stops a refusal found mid-file the same way', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rostersync-worker-read-'));
    const lines = ['ID,Name,Score'];
    for (let i = 1; i <= ROWS_PER_BATCH * 3 + 17; i++) lines.push(i % 1000 === 0 ? `R${i},Name ${i},${i},stray value` : `R${i},Name ${i},${i % 7 === 0 ? '' : i}`);
    writeFileSync(join(dir, 'big.csv'), `${lines.join('\n')}\n`);
    const { inProcess, inWorker } = await both({ file: 'big.csv' }, dir);
    expect(inWorker).toEqual(inProcess);
    expect('items' in inWorker && inWorker.items.length).toBeGreaterThan(ROWS_PER_BATCH * 2);
    // The rows' text gives the same row keys as their cells.
    const source = await openSourceInWorker({ file: 'big.csv' }, { baseDir: dir });
    for await (const batch of source.batches!) {
      for (const item of batch) {
        if (item.kind !== 'row') continue;
        expect(item.row.cellsText).toBeDefined();
        expect(rowKeyOf('salt', source.headers, item.row)).toBe(rowKeyOf('salt', source.headers, { values: { ...item.row.values } }));
      }
    }

    // A NUL byte far into the file: both refuse with the same message once they reach it.
    writeFileSync(join(dir, 'nul.csv'), `${lines.slice(0, 5000).join('\n')}\nR0,bad\u0000name,1\n`);
    const nul = await both({ file: 'nul.csv' }, dir);
    expect(nul.inWorker).toEqual(nul.inProcess);
    expect(nul.inWorker).toEqual({ refused: expect.stringMatching(/^SourceError: .*NUL byte/) });
  });

  it('stops the worker when the rows will not be read after all (close)', async () => {
    const source = await openSourceInWorker({ file: 'multiline.csv' }, { baseDir: fixturesDir });
    source.close!();
    await expect(readAll(Promise.resolve(source))).resolves.toEqual({ refused: expect.stringMatching(/closed before the end/) });
  });

  it('refuses a missing file as the in-process reader does', async () => {
    const { inProcess, inWorker } = await both({ file: 'no-such-file.csv' });
    expect(inWorker).toEqual(inProcess);
    expect(inWorker).toEqual({ refused: expect.stringMatching(/^SourceError: Roster file not found/) });
  });
});
