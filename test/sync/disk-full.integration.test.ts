/**
 * A full disk under the state (a tmpfs of a few hundred KiB, in a mount namespace of its own) is
 * named as a full disk with the right exit code, whether it fills before the first write (exit 1,
 * nothing written) or after some (exit 7): never "unexpected failure", and the lock's release in
 * `finally` (which hits the full disk too) never replaces the error that ended the run.
 * Needs root and unshare (Linux); skipped with the reason printed elsewhere.
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { emulatorEnv } from '../support/cli.js';
import { emulator, makeProject, people } from '../support/project.js';

const BIN = fileURLToPath(new URL('../../bin/rostersync-dev.js', import.meta.url));
const unavailable =
  process.getuid?.() !== 0 ? 'needs root to mount a tmpfs' : spawnSync('unshare', ['--mount', 'true']).status !== 0 ? 'unshare --mount is not available here' : undefined;
if (unavailable) console.warn(`skipping the full-disk tests: ${unavailable}`);

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

/** `sync` with its state directory on a tmpfs of `size`, in a mount namespace of its own. */
function syncOnSmallDisk(dir: string, size: string): Promise<{ code: number | null; stderr: string }> {
  const script = `mkdir -p state && mount -t tmpfs -o size=${size},mode=0700 tmpfs state && exec "${process.execPath}" "${BIN}" sync pipeline.yaml --create-group --state-dir state --log-level error`;
  return new Promise((resolve) => {
    const child = spawn('unshare', ['--mount', 'sh', '-c', script], { cwd: dir, env: { PATH: process.env.PATH, ...emulatorEnv(emu) }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe.skipIf(unavailable !== undefined)('a full disk under the state', () => {
  it('after writes began: exit 7 naming the full disk, not an unexpected failure', { timeout: 120_000 }, async () => {
    const project = await makeProject(people(400));
    const run = await syncOnSmallDisk(project.dir, '400k');
    const writes = emu.stats.snapshot().writes.total;
    expect(writes).toBeGreaterThan(1);
    expect(run.stderr).toContain('no space left on the device (SQLITE_FULL)');
    expect(run.stderr).not.toContain('unexpected failure');
    expect(run.code, run.stderr).toBe(7);
  });

  it('before any write: exit 1 naming the full disk', { timeout: 120_000 }, async () => {
    const project = await makeProject(people(10));
    const run = await syncOnSmallDisk(project.dir, '200k');
    expect(run.stderr).toContain('no space left on the device (SQLITE_FULL)');
    expect(run.stderr).not.toContain('unexpected failure');
    expect(run.code, run.stderr).toBe(1);
  });
});
