/**
 * Every writing command handles a lost pipeline lock as `sync` does: `apply plan.json`, `revert
 * --yes` and the apply of a saved revert, each in a real process, have their lock cleared with
 * `rostersync unlock` while they write; at their next heartbeat they stop starting writes and
 * exit 2 with "lost the pipeline lock", leaving the rest for the next run.
 *
 * SQLite only: there the lock is a row, and a run learns of its loss from its heartbeat (every
 * 15 s). On PostgreSQL `unlock` ends the run's database session, which every command already
 * learns from its next state call (test/state/lock-commands.pg.test.ts).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { RunReport } from '../../src/report/types.js';
import { emulatorEnv } from '../support/cli.js';
import { cli, emulator, makeProject, people, type Project } from '../support/project.js';
import { waitFor } from '../support/wait-for.js';

const BIN = fileURLToPath(new URL('../../bin/rostersync-dev.js', import.meta.url));
/** Writes each command has to do: at 100 ms a call, one at a time, well past one heartbeat. */
const ROWS = 220;

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

function inChild(project: Project, argv: string[]) {
  const child = spawn(process.execPath, [BIN, ...argv, '--log-level', 'error'], {
    cwd: project.dir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...emulatorEnv(emu) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stderr })));
  return { pid: child.pid!, exited };
}

async function lockPid(project: Project): Promise<number | undefined> {
  const shown = await cli(emu, project.dir, ['state', 'show', project.pipeline, '--json']);
  return (JSON.parse(shown.stdout) as { lock: { pid: number } | null }).lock?.pid;
}

async function syncRun(project: Project, flags: string[] = []): Promise<string> {
  const run = await cli(emu, project.dir, ['sync', project.pipeline, '--json', '--allow-deletes', String(ROWS), ...flags]);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as RunReport).runId;
}

describe('a writing command whose lock is cleared', () => {
  it('stops starting writes and exits 2: apply plan.json, revert --yes, apply of a saved revert', { timeout: 180_000 }, async () => {
    const options = { driftSample: 0, concurrency: 1, guards: { max_deletes: 1000, max_delete_percent: 100, max_source_drop_percent: 100 } };
    // apply plan.json: a plan of ROWS creates.
    const applying = await makeProject(people(2), options);
    await syncRun(applying, ['--create-group']);
    await applying.writeRoster(people(ROWS + 2));
    expect((await cli(emu, applying.dir, ['plan', applying.pipeline, '--out', join(applying.dir, 'plan.json')])).code).toBe(0);
    // revert --yes, and a saved revert: undoing a run of ROWS creates.
    const reverting = await makeProject(people(2), options);
    await syncRun(reverting, ['--create-group']);
    await reverting.writeRoster(people(ROWS + 2));
    const revertedRun = await syncRun(reverting);
    const saving = await makeProject(people(2), options);
    await syncRun(saving, ['--create-group']);
    await saving.writeRoster(people(ROWS + 2));
    const savedRun = await syncRun(saving);
    const saved = await cli(emu, saving.dir, ['revert', saving.pipeline, savedRun, '--allow-deletes', String(ROWS), '--out', join(saving.dir, 'revert.json')]);
    expect(saved.code, saved.stderr).toBe(0);

    emu.runtime.update({ latencyMs: 100 });
    const children = [
      { project: applying, child: inChild(applying, ['apply', join(applying.dir, 'plan.json')]) },
      { project: reverting, child: inChild(reverting, ['revert', reverting.pipeline, revertedRun, '--yes', '--allow-deletes', String(ROWS)]) },
      { project: saving, child: inChild(saving, ['apply', join(saving.dir, 'revert.json')]) },
    ];
    for (const { project, child } of children) {
      await waitFor(async () => ((await lockPid(project)) === child.pid ? true : undefined), { what: 'the command to hold the lock', timeoutMs: 60_000, everyMs: 100 });
      const unlocked = await cli(emu, project.dir, ['unlock', project.pipeline]);
      expect(unlocked.code, unlocked.stderr).toBe(0);
    }
    const writesAtUnlock = emu.stats.snapshot().writes.total;
    for (const { child } of children) {
      const exit = await child.exited;
      expect(exit.stderr).toContain('lost the pipeline lock');
      expect(exit.code, exit.stderr).toBe(2);
    }
    // Each stopped at its next heartbeat, long before its ROWS writes were done.
    expect(emu.stats.snapshot().writes.total - writesAtUnlock).toBeLessThan(3 * ROWS);
  });
});
