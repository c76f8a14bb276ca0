/**
 * Command modules and their heavy dependencies load only for the command being run.
 * Vitest externalises node_modules, so CommonJS dependencies the command modules pull in
 * (better-sqlite3 for the state, pino for logs, exceljs for XLSX) show up in require.cache once loaded.
 * This file runs alone in its process (pool: forks, isolated: the integration project; the unit
 * project shares one process between files) and imports nothing but the CLI entry.
 */
import { createRequire } from 'node:module';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';

const HEAVY = ['/node_modules/better-sqlite3/', '/node_modules/pino/', '/node_modules/exceljs/'];

function loadedHeavy(): string[] {
  const cache = Object.keys(createRequire(import.meta.url).cache);
  return HEAVY.filter((dir) => cache.some((file) => file.includes(dir)));
}

async function run(argv: string[]): Promise<number> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.resume();
  stderr.resume();
  return main(argv, { stdout, stderr, env: {}, cwd: process.cwd() });
}

describe('lazy command loading', () => {
  afterEach(() => vi.restoreAllMocks());

  it('help, the command list and `emulator --help` load no state store, logger or spreadsheet reader; `sync --help` does', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(loadedHeavy()).toEqual([]);
    expect(await run([])).toBe(0);
    expect(await run(['--help'])).toBe(0);
    expect(await run(['emulator', '--help'])).toBe(0);
    expect(loadedHeavy()).toEqual([]);

    // The check can fail: the sync command's module does load the state store.
    expect(await run(['sync', '--help'])).toBe(0);
    expect(loadedHeavy()).toContain('/node_modules/better-sqlite3/');
  });
});
