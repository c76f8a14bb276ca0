/**
 * Another local user cannot stall a run through the shared budget folder (src/rate-limit/,
 * src/personal-data/private-dir.ts): `<TMPDIR>/rostersync-budget-<uid>` made first by another user, with a pace
 * in it whose next turn is 30 days away, is refused with the reason, and the run paces alone and
 * finishes. Run as root with the `nobody` user as the other one; skipped, with the reason printed,
 * where that is impossible.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initialPaceState } from '../../src/rate-limit/rate-limiter.js';
import { budgetFile, encodePace } from '../../src/rate-limit/budget-same-host.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { DEMO_API_KEY, emulatorEnv } from '../support/cli.js';
import { emulator, groupRecords, makeProject, people } from '../support/project.js';

const BIN = fileURLToPath(new URL('../../bin/rostersync-dev.js', import.meta.url));
const OTHER = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' });
const otherUid = OTHER.status === 0 ? Number(OTHER.stdout.trim()) : undefined;
const unavailable = process.getuid?.() !== 0 ? 'needs root to make a folder owned by another user' : otherUid === undefined ? 'no `nobody` user to stand for the other user' : undefined;
if (unavailable) console.warn(`skipping the shared budget folder test: ${unavailable}`);

let emu: RunningEmulator;
let shared: string;
beforeEach(async () => {
  emu = await emulator();
  // A temporary folder shared by every user, as /tmp is (sticky, writable by all).
  shared = mkdtempSync(join(tmpdir(), 'shared-tmp-'));
  chmodSync(shared, 0o1777);
});
afterEach(async () => {
  await emu.close();
  rmSync(shared, { recursive: true, force: true });
});

function syncInChild(project: { dir: string; pipeline: string }): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, 'sync', project.pipeline, '--create-group', '--log-level', 'warn'], {
      cwd: project.dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: shared, ...emulatorEnv(emu) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Obeying the planted pace would wait 30 days: stopped well before the test's timeout.
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.once('error', fail);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, stderr });
    });
  });
}

describe.skipIf(unavailable !== undefined)('the shared budget folder', () => {
  it('made first by another user, with a pace that says wait 30 days, is refused and the run finishes', { timeout: 60_000 }, async () => {
    const dir = join(shared, `rostersync-budget-${process.getuid!()}`);
    mkdirSync(dir, { mode: 0o777 });
    chmodSync(dir, 0o777);
    const file = budgetFile(dir, emu.url, DEMO_API_KEY);
    const db = new Database(file);
    db.exec('CREATE TABLE pace (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL, updated_at REAL NOT NULL)');
    const days30 = 30 * 24 * 3600_000;
    db.prepare('INSERT INTO pace (id, state, updated_at) VALUES (1, ?, ?)').run(encodePace({ ...initialPaceState(4), nextSlotAt: Date.now() + days30 }), Date.now());
    db.close();
    for (const path of [dir, file]) chownSync(path, otherUid!, otherUid!);

    const project = await makeProject(people(5));
    const run = await syncInChild(project);
    expect(run.code, run.stderr).toBe(0);
    expect(Object.keys(groupRecords(emu))).toHaveLength(5);
    expect(run.stderr).toContain(`${dir} is not a folder of this user that no one else can write (owner ${otherUid}, mode 777): remove it, or set ROSTERSYNC_BUDGET_DIR to a folder of your own`);
    expect(run.stderr).toContain('this run paces alone');
  });
});
