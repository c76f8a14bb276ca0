/**
 * With the emulator injecting 10 % faults (500, 502, 503, 429 and connection
 * resets, before or after the handler ran) under a rate limit, a single sync of 2,000 records
 * converges with no failed record, using the client's default retry policy (real delays).
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { cli, expectConverged, makeProject, readReport } from './helpers/project.js';
import { randomPerson, rngFor } from './helpers/roster.js';

const RECORDS = 2000;

describe('10 % faults and a rate limit', () => {
  it(`a single sync of ${RECORDS} records ends with exit 0 and no failed record`, async () => {
    const rng = rngFor(2000);
    const roster = Array.from({ length: RECORDS }, (_, i) => randomPerson(rng, i + 1));
    // 429 faults pause the whole client for their Retry-After (1 s), so they are the rarest kind.
    const emu = await startEmulator({
      rps: 600,
      burst: 60,
      faults: { status500: 0.025, status502: 0.025, status503: 0.0225, reset: 0.025, status429: 0.0025 },
      faultPhase: 'mixed',
      seed: 42,
    });
    const project = await makeProject(roster, { maxRps: 500, burst: 20, concurrency: 8 });
    try {
      const started = Date.now();
      const reportDir = join(project.dir, 'reports', 'faults');
      const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group', '--report-dir', reportDir]);
      const elapsed = Date.now() - started;
      const stats = emu.stats.snapshot();
      const injected = Object.entries(stats.faults).filter(([kind]) => kind !== 'slow').reduce((n, [, count]) => n + count, 0);
      console.info(`faults: ${RECORDS} records in ${elapsed} ms, ${stats.total} calls, ${injected} injected faults ${JSON.stringify(stats.faults)}, ${stats.rateLimited} rate-limited`);
      expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
      // The faults really happened: about 10 % of the calls.
      expect(injected).toBeGreaterThan(RECORDS * 0.07);
      const report = await readReport(reportDir);
      expect(report.outcome).toBe('success');
      expect(report.counts.create).toEqual({ done: RECORDS });
      expectConverged(emu, project, roster, 'faults');
    } finally {
      await emu.close();
      await rm(project.dir, { recursive: true, force: true });
    }
  }, 120_000);
});
