import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runCli as runInProcess } from '../support/cli.js';
import { loadFixture } from '../../src/emulator/fixture.js';

export const ROOT = resolve(import.meta.dirname, '../..');

/** Runs the CLI in-process from the repository root (by default) and captures its output. */
export function runCli(argv: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  return runInProcess(argv, { cwd: options.cwd ?? ROOT, env: options.env ?? {} });
}

export function tempDir(prefix = 'rostersync-validate-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A saved custom-fields listing made from the emulator's default fixture, as `fields --json` would print it. */
export function writeFieldsFile(dir: string): string {
  const path = join(dir, 'fields.json');
  writeFileSync(path, JSON.stringify(loadFixture().orgs[0]!.custom_fields, null, 2));
  return path;
}
