/**
 * One budget per API key across processes of one host: two `rostersync sync` child processes with
 * the same key write into one emulator that admits R calls in any sliding second. Sharing the
 * budget file, they take turns on one pace: together they use the limit, and they finish
 * together. The bounds are generous (a loaded machine); bench/shared-budget.ts measures it.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { budgetFile } from '../../src/coordinator/same-host.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { DEMO_API_KEY } from '../support/cli.js';
import { makeProject, people } from '../sync/project.js';

const ROOT = resolve(import.meta.dirname, '../..');
let emu: RunningEmulator | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await emu?.close();
  emu = undefined;
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** `rostersync sync <pipeline> --create-group` in a child process; resolves with its exit code and when it ended. */
function syncInChild(pipeline: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; endedAt: number; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'rostersync-dev.js'), 'sync', pipeline, '--create-group', '--log-level', 'warn'], {
      cwd,
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('error', fail);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, endedAt: performance.now(), stderr });
    });
  });
}

describe('one budget per API key, shared by the processes of a host', () => {
  it('two processes on one key use the limit together and finish together', { timeout: 150_000 }, async () => {
    const R = 20;
    const records = 150;
    emu = await startEmulator({ port: 0, rps: R, rateLimitKind: 'sliding-window' });
    const budgetDir = await mkdtemp(join(tmpdir(), 'rostersync-budget-test-'));
    dirs.push(budgetDir);
    const projects = await Promise.all(
      ['A', 'B'].map(async (name) => {
        const project = await makeProject(people(records), { maxRps: 0 });
        dirs.push(project.dir);
        // No max_rps: each finds the limit; a group of its own.
        const text = (await readFile(project.pipeline, 'utf8')).replace('Sync test group', `Budget test ${name}`).replace(/\n\s*max_rps: 0/, '');
        await writeFile(project.pipeline, text);
        return project;
      }),
    );
    const env = { SERVICE_BASE_URL: emu.url, SERVICE_API_KEY: DEMO_API_KEY, ROSTERSYNC_BUDGET_DIR: budgetDir };
    const started = performance.now();
    const runs = await Promise.all(projects.map((project) => syncInChild(project.pipeline, project.dir, env)));
    for (const run of runs) expect(run.code, run.stderr).toBe(0);

    const writes = emu.stats.snapshot().writes.succeeded;
    expect(writes).toBeGreaterThanOrEqual(2 * records);
    const seconds = runs.map((run) => (run.endedAt - started) / 1000);
    const [first, last] = [Math.min(...seconds), Math.max(...seconds)];
    console.log("FIG", seconds, (2 * records) / last / R, emu.stats.snapshot().rateLimited);
    // Together at the limit: 300 writes at R = 20 take 15 s, plus the children's start-up
    // (a few seconds each on a loaded machine). Each alone on its own pace would take turns
    // badly: one would finish far earlier than the other.
    expect((2 * records) / last / R).toBeGreaterThan(0.5);
    expect(first / last).toBeGreaterThan(0.75);
    // They shared the budget through its file (named by a hash, never the key).
    const file = budgetFile(budgetDir, emu.url, DEMO_API_KEY);
    expect(file).not.toContain(DEMO_API_KEY);
    await expect(readFile(file)).resolves.toBeDefined();
  });
});
