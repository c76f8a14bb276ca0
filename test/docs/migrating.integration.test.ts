/**
 * docs/migrating.md, run from start to end as a user would: every ```sh block, line by line, in a
 * real shell, with `rostersync` on the PATH (the CLI from the sources), in a copy of the worked
 * example (pipelines/, mappings/, samples/) against an in-process emulator.
 *
 * What the page asks of a person is marked with an HTML comment before a fenced block:
 * - `<!-- doc-test: write PATH -->` writes the block's content to PATH (an edited file);
 * - `<!-- doc-test: skip (why) -->` leaves the block out.
 * The `rostersync emulator` and `export SERVICE_...` lines are the test's own emulator and
 * environment. A command ending in `# exits N ...` must exit N, every other one 0; one whose comment
 * says "zero writes" must make no write call.
 */
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { DEMO_API_KEY } from '../support/cli.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DOC = 'docs/migrating.md';

type Step = { kind: 'sh'; line: number; commands: string[] } | { kind: 'write'; line: number; path: string; content: string };

/** The page's fenced blocks, in order, as steps (see the module comment). */
export function stepsOf(markdown: string): Step[] {
  const lines = markdown.split('\n');
  const steps: Step[] = [];
  let directive: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const comment = /^\s*<!-- doc-test: (.+?) -->\s*$/.exec(lines[i]!);
    if (comment) {
      directive = comment[1];
      continue;
    }
    const fence = /^(\s*)```(\w*)\s*$/.exec(lines[i]!);
    if (!fence) continue;
    const indent = fence[1]!.length;
    const body: string[] = [];
    const start = i + 1;
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!.slice(indent));
    const given = directive;
    directive = undefined;
    if (given?.startsWith('skip')) continue;
    const write = given && /^write (\S+)$/.exec(given);
    if (write) steps.push({ kind: 'write', line: start, path: write[1]!, content: `${body.join('\n')}\n` });
    else if (given) throw new Error(`${DOC}:${start - 1}: unknown doc-test directive "${given}"`);
    else if (fence[2] === 'sh') steps.push({ kind: 'sh', line: start, commands: joinContinuations(body) });
  }
  return steps;
}

function joinContinuations(body: string[]): string[] {
  const commands: string[] = [];
  let pending = '';
  for (const line of body) {
    if (line.endsWith('\\')) pending += `${line.slice(0, -1)} `;
    else {
      commands.push(pending + line);
      pending = '';
    }
  }
  return commands.filter((command) => command.trim() !== '' && !command.trim().startsWith('#'));
}

function run(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  // Asynchronous: the emulator answers from this very process.
  return new Promise((done) => {
    execFile('bash', ['-c', command], { cwd, env, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emulator.close();
});

describe(DOC, () => {
  it('runs from start to end', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rostersync-migrating-'));
    for (const file of ['pipelines/legacy.yaml', 'pipelines/schema.json', 'mappings/legacy.yaml', 'mappings/schema.json', 'samples/legacy-export.csv']) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      copyFileSync(join(ROOT, file), join(dir, file));
    }
    const bin = join(dir, '.bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'rostersync'), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin/rostersync-dev.js')}" "$@"\n`);
    chmodSync(join(bin, 'rostersync'), 0o755);
    const env: NodeJS.ProcessEnv = { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: dir, TMPDIR: tmpdir(), SERVICE_BASE_URL: emulator.url, SERVICE_API_KEY: DEMO_API_KEY };

    const steps = stepsOf(readFileSync(join(ROOT, DOC), 'utf8'));
    expect(steps.filter((step) => step.kind === 'sh').length).toBeGreaterThan(3);
    let ran = 0;
    for (const step of steps) {
      if (step.kind === 'write') {
        writeFileSync(join(dir, step.path), step.content);
        continue;
      }
      for (const command of step.commands) {
        if (/^rostersync emulator\b/.test(command)) continue;
        if (/^export\b/.test(command)) {
          expect(command, `${DOC}:${step.line}`).toMatch(/SERVICE_BASE_URL=\S+ SERVICE_API_KEY=demo-key-0123456789/);
          continue;
        }
        const expected = Number(/#\s*exits (\d+)/.exec(command)?.[1] ?? 0);
        const writesBefore = emulator.stats.snapshot().writes.total;
        const result = await run(command, dir, env);
        expect(result.code, `${DOC}:${step.line}: ${command}\n${result.output}`).toBe(expected);
        if (/zero writes/.test(command)) expect(emulator.stats.snapshot().writes.total - writesBefore, command).toBe(0);
        ran++;
      }
    }
    expect(ran).toBeGreaterThan(5);

    // Where the page leaves the group: the export's 18 valid people, the 6 corrected and the new one.
    const group = [...emulator.world.orgs[0]!.groups.values()].filter((g) => g.name === 'Legacy reviewers');
    expect(group).toHaveLength(1);
    const records = group[0]!.records as Map<string, Record<string, unknown>>;
    expect(records.size).toBe(25);
    expect(records.get('legacy-70338')).toMatchObject({ name: 'Anna Berg' });
    expect(records.get('legacy-70039')).toMatchObject({ orcids: ['0000-0003-1927-7643'] });
  }, 240_000);
});
