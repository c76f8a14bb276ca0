import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { loadFixture } from '../../src/emulator/fixture.js';

export const ROOT = resolve(import.meta.dirname, '../..');

function sink() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

/** Runs the CLI in-process and captures its output. */
export async function runCli(argv: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const stdout = sink();
  const stderr = sink();
  const code = await main(argv, { stdout: stdout.stream, stderr: stderr.stream, env: options.env ?? {}, cwd: options.cwd ?? ROOT });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
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
