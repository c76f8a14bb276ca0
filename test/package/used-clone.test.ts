/**
 * `npm test` passes in a clone someone has used. A new user clones, follows the README's
 * walkthrough against `rostersync emulator --port 4010` (which leaves a state bound to that
 * service under `pipelines/.rostersync/` and reports under `pipelines/reports/`, both ignored by
 * git), then runs the tests. This does the same in a clone of this checkout (its tracked files,
 * with this checkout's node_modules linked in place of `npm ci`), then runs the doc tests there:
 * they must build their project copies from tracked files, not from what the walkthrough left.
 */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { docBlocks, SHELL_LANGUAGES } from '../docs/doc-blocks.js';
import { DOC_EMULATOR_PORT, freePort, rewrite, ROOT, runScript, shims } from '../docs/doc-harness.js';
import { copyTracked } from '../support/tracked-copy.js';

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A clone of this checkout as `git clone` would make it: the tracked files (as they are now), in a git work tree. */
function cloneOfCheckout(): string {
  const clone = mkdtempSync(join(tmpdir(), 'rostersync-clone-'));
  temps.push(clone);
  copyTracked(ROOT, ['.'], clone);
  execFileSync('git', ['init', '-q', clone]);
  execFileSync('git', ['-C', clone, 'add', '-A']);
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');
  return clone;
}

/** The environment of a user's shell: none of this test run's own variables. */
function userEnv(bin: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(VITEST|TINYPOOL|SERVICE_|ROSTERSYNC_|GITHUB_STEP_SUMMARY$|NODE_OPTIONS$)/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, PATH: `${bin}:${process.env.PATH ?? ''}`, NO_COLOR: '1' };
}

function runVitest(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(cwd, 'node_modules/vitest/vitest.mjs'), 'run', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 280_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });
}

describe('a clone someone has used', () => {
  it('follows the README walkthrough against `rostersync emulator --port 4010`, then passes the doc tests', { timeout: 400_000 }, async () => {
    const clone = cloneOfCheckout();
    const env = userEnv(await shims(mkdtempSync(join(tmpdir(), 'rostersync-shims-')), clone));

    const readme = docBlocks(readFileSync(join(clone, 'README.md'), 'utf8'), 'README.md');
    const walkthrough = readme.find((block) => SHELL_LANGUAGES.has(block.lang) && block.text.includes(`emulator --port ${DOC_EMULATOR_PORT}`));
    expect(walkthrough, 'the README has a walkthrough against `rostersync emulator --port 4010`').toBeDefined();
    // The user's emulator: its port differs from any the doc tests pick, as 4010 did.
    const script = `set -euo pipefail\n${rewrite(walkthrough!, { url: 'http://unused.invalid', docPort: await freePort() })}\n`;
    const walk = await runScript(script, clone, env);
    expect(walk.code, `the README walkthrough failed in the clone:\n${walk.stderr.slice(-3000)}`).toBe(0);
    // What the walkthrough leaves is what made the doc tests fail: make sure it is there.
    expect(existsSync(join(clone, 'pipelines/.rostersync/reviewers.sqlite'))).toBe(true);
    expect(execFileSync('git', ['-C', clone, 'status', '--porcelain', '--ignored', 'pipelines'], { encoding: 'utf8' })).toMatch(/!! pipelines\/\.rostersync\//);

    const docs = await runVitest(clone, ['test/docs/docs.integration.test.ts', 'test/cli/demo.integration.test.ts'], env);
    expect(docs.code, `the doc tests failed in a clone someone has used:\n${docs.output.slice(-4000)}`).toBe(0);
    expect(docs.output).toMatch(/README\.md: every shell block runs as written/);
  });
});
