/**
 * The service dies mid-run: the emulator is closed (server and sockets) while a real
 * `bin/rostersync.js sync` process is writing. The client must give up cleanly — exit 5, a report
 * whose outcome is `failed`, no stack trace — and once the service is back (a new emulator on the
 * same port serving the same world), the next run must converge.
 */
import { spawn } from 'node:child_process';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors/user-facing-error.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { cli, expectConverged, makeProject, readReport, recover, serviceEnv, type RecoveryLog } from './helpers/project.js';
import { changePerson, intBetween, randomPerson, rngFor } from './helpers/roster.js';

const BIN = fileURLToPath(new URL('../../bin/rostersync-dev.js', import.meta.url));
const writesSoFar = (emu: RunningEmulator) => emu.stats.snapshot().writes.total;

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('emulator killed and restarted mid-run', () => {
  it.concurrent.each([
    { seed: 101, scenario: 'first' },
    { seed: 102, scenario: 'update' },
    { seed: 103, scenario: 'first' },
  ])('seed $seed: $scenario', async ({ seed, scenario }) => {
    const rng = rngFor(seed);
    let roster = Array.from({ length: intBetween(rng, 60, 100) }, (_, i) => randomPerson(rng, i + 1));
    let emu = await startEmulator({ latencyMs: 5, seed });
    const project = await makeProject(roster, { maxRps: 300 });
    const log: RecoveryLog = { reruns: 0, setGroup: 'none' };
    try {
      let writes = roster.length + 1;
      if (scenario === 'update') {
        const setup = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group', '--report-dir', join(project.dir, 'reports', 'setup')]);
        expect(setup.code, setup.stderr).toBe(0);
        roster = roster.map((p) => (rng() < 0.5 ? changePerson(rng, p) : p));
        writes = roster.filter((p, i) => p !== roster[i]).length || 1;
        await project.writeRoster(roster);
      }

      const reportDir = join(project.dir, 'reports', 'outage');
      const child = spawn(process.execPath, [BIN, 'sync', project.pipeline, '--create-group', '--report-dir', reportDir], {
        cwd: project.dir,
        env: { ...process.env, ...serviceEnv(emu) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const exited = new Promise<Exit>((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));

      // Kill the service after a seeded number of this run's writes (at least one: mid-apply).
      const base = writesSoFar(emu);
      const k = 1 + Math.floor(rng() * Math.max(1, Math.floor(writes * 0.7)));
      let finished = false;
      void exited.then(() => (finished = true));
      while (!finished && writesSoFar(emu) - base < k) await new Promise((r) => setTimeout(r, 1));
      expect(finished, 'the run must still be going when the service dies').toBe(false);
      const { port, world } = emu;
      await emu.close();

      const exit = await exited;
      expect(exit.code, exit.stderr).toBe(EXIT.unavailable);
      expect(exit.stderr + exit.stdout).not.toMatch(/\n\s+at .+:\d+:\d+/); // no stack trace
      await stat(join(reportDir, 'report.json'));
      const report = await readReport(reportDir);
      expect(report.outcome).toBe('failed');
      expect(report.exitCode).toBe(EXIT.unavailable);
      // Each failed record went through the retry budget, and the report says how many attempts it took.
      const failed = report.records.filter((r) => r.outcome === 'failed');
      expect(failed.length).toBeGreaterThan(0);
      for (const record of failed) expect(record.attempts, record.clientId).toBeGreaterThan(1);

      // The service comes back with the same data; the next runs converge.
      emu = await startEmulator({ port, world, latencyMs: 5, seed });
      await recover(emu, project, [], log);
      expectConverged(emu, project, roster, `seed ${seed}`);
    } finally {
      await emu.close();
      await rm(project.dir, { recursive: true, force: true });
    }
  }, 90_000);
});
