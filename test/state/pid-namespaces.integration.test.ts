/**
 * Two runs on one kernel, in two PID namespaces, under one host name (containers on the host
 * network): the lock of a live run in the other namespace is never taken for dead. The run below
 * holds the lock from its own PID namespace (`unshare --pid --fork --mount-proc`, as root), where
 * its pid means another process here; a run and a state command from this namespace are refused.
 * A second case keeps the host's /proc (`unshare --pid --fork` without `--mount-proc`): there a pid
 * of the namespace names another process in /proc, and a second run in that namespace must not
 * take the live first run's lock for dead. Skipped, with the reason printed, where unshare or root
 * is not available.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { emulatorEnv } from '../support/cli.js';
import { cli, emulator, groupRecords, makeProject, people, writes } from '../support/project.js';
import { waitFor } from '../support/wait-for.js';

const BIN = fileURLToPath(new URL('../../bin/rostersync-dev.js', import.meta.url));
const unavailable =
  process.getuid?.() !== 0
    ? 'needs root for unshare --pid'
    : spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status !== 0
      ? 'unshare --pid --fork --mount-proc is not available here'
      : undefined;
if (unavailable) console.warn(`skipping the PID-namespace lock test: ${unavailable}`);
const hostProcUnavailable =
  process.getuid?.() !== 0
    ? 'needs root for unshare --pid'
    : spawnSync('unshare', ['--pid', '--fork', 'true']).status !== 0
      ? 'unshare --pid --fork is not available here'
      : undefined;
if (hostProcUnavailable) console.warn(`skipping the lock test in a PID namespace without its own /proc: ${hostProcUnavailable}`);

const ROWS = 60;
let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator({ latencyMs: 100 });
});
afterEach(async () => {
  await emu.close();
});

describe.skipIf(unavailable !== undefined)('the lock across PID namespaces', () => {
  it('a live run in another PID namespace keeps its lock', { timeout: 120_000 }, async () => {
    const project = await makeProject(people(ROWS), { concurrency: 1 });
    const child = spawn('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, BIN, 'sync', project.pipeline, '--create-group', '--log-level', 'error'], {
      cwd: project.dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...emulatorEnv(emu) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));

    interface Lock {
      pid: number;
      processStart: string | null;
    }
    const readLock = async () => (JSON.parse((await cli(emu, project.dir, ['state', 'show', project.pipeline, '--json'])).stdout) as { lock: Lock | null }).lock;
    const lock = await waitFor(readLock, { what: 'the run in its own pid namespace to take the lock', timeoutMs: 30_000, everyMs: 100 });
    // Its pid is that of its own namespace (1: the first process there), alive here as another process.
    expect(lock?.pid).toBe(1);
    expect(lock?.processStart).toMatch(/:pid:\[\d+\]$/);

    const second = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(second.code, second.stderr).toBe(1);
    expect(second.stderr).toMatch(/locked by run .* pid 1,/);
    const forget = await cli(emu, project.dir, ['state', 'forget', project.pipeline, 'p1']);
    expect(forget.code).toBe(1);
    expect(forget.stderr).toContain('locked by run');

    expect(await exited, stderr).toBe(0);
    expect(Object.keys(groupRecords(emu))).toHaveLength(ROWS);
    const before = writes(emu).total;
    expect((await cli(emu, project.dir, ['sync', project.pipeline])).code).toBe(0);
    expect(writes(emu).total).toBe(before);
  });
});

describe.skipIf(hostProcUnavailable !== undefined)('the lock in a PID namespace that sees the host\'s /proc', () => {
  it('a second run in that namespace does not take the live run\'s lock', { timeout: 120_000 }, async () => {
    const project = await makeProject(people(ROWS), { concurrency: 1 });
    const go = join(project.dir, 'go');
    const run = `"${process.execPath}" "${BIN}" sync "${project.pipeline}" --create-group --log-level error`;
    // The shell is pid 1 of the namespace, the first run pid 2: the host's /proc/2 is another
    // process (kthreadd). The second run starts once the test saw the first one's lock.
    const script = [
      `${run} 2>first.err & first=$!`,
      'i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done',
      `${run} 2>second.err; echo "second=$?"`,
      'wait $first; echo "first=$?"',
    ].join('\n');
    const child = spawn('unshare', ['--pid', '--fork', 'sh', '-c', script], {
      cwd: project.dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...emulatorEnv(emu) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const readLock = async () => (JSON.parse((await cli(emu, project.dir, ['state', 'show', project.pipeline, '--json'])).stdout) as { lock: { pid: number } | null }).lock;
      const lock = await waitFor(readLock, { what: 'the first run to take the lock', timeoutMs: 30_000, everyMs: 100 });
      expect(lock.pid).toBe(2);
    } finally {
      writeFileSync(go, '');
    }
    expect(await exited, output).toBe(0);
    // The second run was refused while the first held the lock; the first finished alone.
    expect(output).toContain('second=1');
    expect(output).toContain('first=0');
    expect(readFileSync(join(project.dir, 'second.err'), 'utf8')).toMatch(/locked by run .* pid 2,/);
    expect(Object.keys(groupRecords(emu))).toHaveLength(ROWS);
  });
});
