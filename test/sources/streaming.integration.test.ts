import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SourceError, openSource, sha256File } from '../../src/sources/index.js';

const ROWS = 200_000;
/** Makes the file ~30 MB, so holding it whole would show in the memory check. */
const PADDING = 'Reviewer notes kept short but not too short for the memory check.'.repeat(1);
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

let dir: string;
let file: string;
let expectedHash: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rostersync-sources-'));
  file = join(dir, 'big.csv');
  const hash = createHash('sha256');
  const out = createWriteStream(file);
  const put = async (text: string): Promise<void> => {
    hash.update(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  await put('id;name;email;notes\n');
  let chunk = '';
  for (let i = 1; i <= ROWS; i++) {
    chunk += `${i};Person ${i};person${i}@example.org;"multi\nline ${i % 7}: ${PADDING}"\n`;
    if (chunk.length > 256 * 1024) {
      await put(chunk);
      chunk = '';
    }
  }
  await put(chunk);
  out.end();
  await once(out, 'finish');
  expectedHash = hash.digest('hex');
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('streaming', () => {
  it(`reads ${ROWS} rows without holding the file`, async () => {
    const source = await openSource({ file: 'big.csv' }, { baseDir: dir });
    // Live memory after a full GC: garbage does not count, anything the reader holds on to does.
    const used = (): number => {
      collectGarbage();
      const memory = process.memoryUsage();
      return memory.heapUsed + memory.arrayBuffers;
    };
    const baseline = used();
    let rows = 0;
    let lastRow = 0;
    let lastId: unknown;
    let peak = 0;
    for await (const item of source.items) {
      if (item.kind !== 'row') throw new Error(item.error.message);
      rows++;
      lastRow = item.row.provenance.row;
      lastId = item.row.values.id;
      if ((rows & 0x7fff) === 0) peak = Math.max(peak, used() - baseline);
    }
    expect(rows).toBe(ROWS);
    expect(lastId).toBe(String(ROWS));
    // Each record spans two physical lines after the header line.
    expect(lastRow).toBe(2 * ROWS);
    // The file is ~22 MB; a reader holding it (as a buffer, a string or rows) would retain more than this.
    expect(peak).toBeLessThan(8 * 1024 * 1024);
  }, 60_000);

  it('stops with a SourceError when a quote stays open for more than a megabyte', async () => {
    const broken = join(dir, 'open-quote.csv');
    await writeFile(broken, `Name,Email\nAda,ada@example.org\n"Alan,alan@example.org\n${'Grace,grace@example.org\n'.repeat(60_000)}`);
    const source = await openSource({ file: 'open-quote.csv' }, { baseDir: dir });
    const names: unknown[] = [];
    const failure = await (async () => {
      try {
        for await (const item of source.items) if (item.kind === 'row') names.push(item.row.values.Name);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(names).toEqual(['Ada']);
    expect(failure).toBeInstanceOf(SourceError);
    expect((failure as SourceError).message).toContain('a quote (") opened on line 3 is still open 1 MB later');
    expect((failure as SourceError).hint).toContain('Fix the quoting on line 3');
  });

  it('aborts on signal', async () => {
    const controller = new AbortController();
    const source = await openSource({ file: 'big.csv' }, { baseDir: dir, signal: controller.signal });
    let rows = 0;
    await expect(
      (async () => {
        for await (const item of source.items) {
          if (item.kind === 'row' && ++rows === 10) controller.abort();
        }
      })(),
    ).rejects.toThrow(/abort/i);
    expect(rows).toBeLessThan(ROWS);
  });

  it('sha256File matches the hash of the bytes written', async () => {
    expect(await sha256File(file)).toBe(expectedHash);
    const small = join(dir, 'small.txt');
    await writeFile(small, 'abc');
    expect(await sha256File(small)).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
