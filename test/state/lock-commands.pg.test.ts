/**
 * State-maintenance commands take the pipeline's lock, as a run does: against a live sync in
 * another process (SQLite and PostgreSQL), `set-group`, `rebind`, `forget`, `import` and `export`
 * are refused naming the run's process, and the run finishes on the state it started with.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { postgresForFile } from '../support/postgres-server.js';
import { emulatorEnv } from '../support/cli.js';
import { cli, emulator, groupRecords, makeProject, people, writes } from '../support/project.js';
import { waitFor } from '../support/wait-for.js';

const BIN = fileURLToPath(new URL('../../bin/rostersync-dev.js', import.meta.url));
const server = postgresForFile();
const ROWS = 60;

let emu: RunningEmulator;
beforeEach(async () => {
  // Slow enough that the run holds its lock for several seconds.
  emu = await emulator({ latencyMs: 100 });
});
afterEach(async () => {
  await emu.close();
});

interface Shown {
  groupId: number | null;
  service: string | null;
  owned: number;
  lock: { pid: number } | null;
  records: { clientId: string }[];
}

/** A sync of the project in a child process (the real bin), with its exit code and stderr. */
function syncInChild(project: { dir: string; pipeline: string }, env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, 'sync', project.pipeline, '--create-group', '--log-level', 'error'], {
    cwd: project.dir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...emulatorEnv(emu, env) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stderr })));
  return { pid: child.pid!, exited };
}

/** Waits until the run holds the lock and knows its group. */
function untilLocked(show: () => Promise<Shown>): Promise<Shown> {
  return waitFor(
    async () => {
      const live = await show();
      return live.lock && live.groupId !== null ? live : undefined;
    },
    { what: 'the run to hold the lock and know its group', timeoutMs: 30_000, everyMs: 100 },
  );
}

describe.each(['sqlite', 'postgres'] as const)('state commands against a live run on %s', (backend) => {
  it('are refused naming the run, and change nothing', { timeout: 120_000 }, async () => {
    const project = await makeProject(people(ROWS), { concurrency: 1 });
    let env: Record<string, string> = {};
    if (backend === 'postgres') {
      env = { ROSTERSYNC_STATE_URL: await server().createDatabase('locks'), PGPASSWORD: server().password };
      expect((await cli(emu, project.dir, ['state', 'migrate'], env)).code).toBe(0);
    }
    const show = async () => JSON.parse((await cli(emu, project.dir, ['state', 'show', project.pipeline, '--json'], env)).stdout) as Shown;

    const child = syncInChild(project, env);
    const live = await untilLocked(show);
    expect(live.lock?.pid).toBe(child.pid);
    const groupId = live.groupId!;

    const exportFile = join(project.dir, 'other.jsonl');
    writeFileSync(exportFile, '');
    const ids = join(project.dir, 'ids.txt');
    writeFileSync(ids, 'p1\n');
    const attempts = [
      ['state', 'set-group', project.pipeline, String(groupId + 1000), '--release-owned'],
      ['state', 'set-group', project.pipeline, '--clear'],
      ['state', 'rebind', project.pipeline, '--base-url', 'http://127.0.0.1:1', '--release-owned'],
      ['state', 'forget', project.pipeline, 'p1'],
      ['state', 'import', project.pipeline, '--jsonl', exportFile],
      ['state', 'import', project.pipeline, '--file', ids],
      ['state', 'export', project.pipeline, '--out', join(project.dir, 'export.jsonl')],
    ];
    for (const argv of attempts) {
      const refused = await cli(emu, project.dir, argv, env);
      expect(refused.code, `${argv.join(' ')}: ${refused.stderr}`).toBe(1);
      expect(refused.stderr, argv.join(' ')).toMatch(new RegExp(`locked by run .*pid ${child.pid}`));
    }
    const exit = await child.exited;
    expect(exit.code, exit.stderr).toBe(0);

    // The run ended on the state it started with: same service and group, every record owned.
    const after = await show();
    expect(after.groupId).toBe(groupId);
    expect(after.service).toBe(emu.url);
    expect(after.owned).toBe(ROWS);
    expect(after.records.map((r) => r.clientId)).toContain('p1');
    expect(Object.keys(groupRecords(emu))).toHaveLength(ROWS);
    const before = writes(emu).total;
    const again = await cli(emu, project.dir, ['sync', project.pipeline], env);
    expect(again.code, again.stderr).toBe(0);
    expect(writes(emu).total).toBe(before);
  });
});

describe('unlock of a live run on PostgreSQL', () => {
  it('makes the run stop with exit 2 "lock taken", not "database unreachable"', { timeout: 120_000 }, async () => {
    const project = await makeProject(people(ROWS), { concurrency: 1 });
    const env = { ROSTERSYNC_STATE_URL: await server().createDatabase('unlock'), PGPASSWORD: server().password };
    expect((await cli(emu, project.dir, ['state', 'migrate'], env)).code).toBe(0);
    const show = async () => JSON.parse((await cli(emu, project.dir, ['state', 'show', project.pipeline, '--json'], env)).stdout) as Shown;
    const child = syncInChild(project, env);
    expect((await untilLocked(show)).lock?.pid).toBe(child.pid);
    const unlocked = await cli(emu, project.dir, ['unlock', project.pipeline], env);
    expect(unlocked.code, unlocked.stderr).toBe(0);
    expect(unlocked.stdout).toContain('NOT stale');
    const exit = await child.exited;
    expect(exit.stderr).toContain('lost the pipeline lock');
    expect(exit.stderr).not.toContain('unreachable');
    expect(exit.code, exit.stderr).toBe(2);
    // The next run converges.
    const again = await cli(emu, project.dir, ['sync', project.pipeline], env);
    expect(again.code, again.stderr).toBe(0);
    expect(Object.keys(groupRecords(emu))).toHaveLength(ROWS);
  });
});
