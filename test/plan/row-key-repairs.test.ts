import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UserFacingError } from '../../src/errors/user-facing-error.js';
import { RowKeyRepairs } from '../../src/plan/row-key-repairs.js';
import { rowKeysFile } from '../../src/spill/run-files.js';
import type { RowKeyRepair } from '../../src/plan/types.js';

const repair = (i: number): RowKeyRepair => ({ clientId: `id-${i}${i % 7 === 0 ? ' ü\n"x"' : ''}`, rowKey: `key-${i}`.padEnd(27, 'k'), hash: `hash-${i}`.padEnd(27, 'h') });

const tempDir = mkdtempSync(join(tmpdir(), 'rostersync-repairs-test-'));
afterAll(() => rmSync(tempDir, { recursive: true, force: true }));

/** The temporary directories a store of repairs made in `tempDir`, and their files. */
function spilled(): string[] {
  return readdirSync(tempDir).flatMap((dir) => readdirSync(join(tempDir, dir)).map((file) => join(tempDir, dir, file)));
}

describe('row key repairs', () => {
  it('gives back every repair in order, a page at a time, from memory and then from the temporary file', () => {
    const repairs = Array.from({ length: 1003 }, (_, i) => repair(i));
    const store = new RowKeyRepairs({ pageSize: 100, pagesInMemory: 2, pages: rowKeysFile({ tempDir }) });
    for (const r of repairs) store.add(r);
    const pages = [...store.read()];
    expect(pages.map((page) => page.length)).toEqual([...Array(10).fill(100), 3]);
    expect(pages.flat()).toEqual(repairs);
    // Read again (apply reads once; a second read gives the same).
    expect([...store.read()].flat()).toEqual(repairs);
    store.dispose();
  });

  it('writes the temporary file owner-only and deletes it on dispose', () => {
    const store = new RowKeyRepairs({ pageSize: 10, pagesInMemory: 1, pages: rowKeysFile({ tempDir }) });
    for (let i = 0; i < 50; i++) store.add(repair(i));
    const [file, ...others] = spilled();
    expect(others).toEqual([]);
    expect(statSync(file!).mode & 0o777).toBe(0o600);
    expect(statSync(join(file!, '..')).mode & 0o777).toBe(0o700);
    store.dispose();
    expect(spilled()).toEqual([]);
    expect(readdirSync(tempDir)).toEqual([]);
    store.dispose();
  });

  it('keeps everything in memory (no file) while it fits', () => {
    const store = new RowKeyRepairs({ pageSize: 10, pagesInMemory: 3, pages: rowKeysFile({ tempDir }) });
    for (let i = 0; i < 30; i++) store.add(repair(i));
    expect([...store.read()].flat()).toHaveLength(30);
    expect(readdirSync(tempDir)).toEqual([]);
  });

  it('leaves out, when read, the client_ids refused at the end of planning', () => {
    const store = new RowKeyRepairs({ pageSize: 4, pagesInMemory: 1, pages: rowKeysFile({ tempDir }) });
    for (let i = 0; i < 30; i++) store.add(repair(i));
    store.keepOnly((clientId) => !clientId.startsWith('id-1'));
    expect([...store.read()].flat().map((r) => r.clientId)).toEqual(Array.from({ length: 30 }, (_, i) => repair(i).clientId).filter((id) => !id.startsWith('id-1')));
    store.dispose();
  });

  it('says where and why when the temporary file cannot be written', () => {
    const notADirectory = join(tempDir, 'a-file');
    writeFileSync(notADirectory, '');
    const store = new RowKeyRepairs({ pageSize: 1, pagesInMemory: 0, pages: rowKeysFile({ tempDir: notADirectory }) });
    expect(() => store.add(repair(1))).toThrow(UserFacingError);
    expect(() => store.add(repair(2))).toThrow(/temporary file under .*a-file: a part of the path is not a directory \(ENOTDIR\)\. Nothing was written/);
    rmSync(notADirectory);
  });

  it('has nothing to give when nothing was added', () => {
    const store = new RowKeyRepairs();
    expect([...store.read()].flat()).toEqual([]);
    store.dispose();
  });
});
