/**
 * Two hosts, one pipeline, one PostgreSQL state database: two rostersync processes with different
 * host names start the same pipeline at the same moment. Exactly one runs; the other refuses
 * before any call, naming the holder's host, pid and start time. The holder's lock is its
 * database session: when that process dies, the lock is free at once (no stale lock to wait for).
 */
import { copyFile, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { WarmChild } from './helpers/child.js';
import { campaignGroups, makeProject, serviceEnv } from './helpers/project.js';
import { randomPerson, rngFor, rosterCsv } from './helpers/roster.js';
import { postgresForFile } from '../support/postgres-server.js';
import { cli } from '../support/project.js';

const server = postgresForFile();

/** The same pipeline file in another directory: what a second host has checked out. */
async function cloneProject(dir: string): Promise<{ dir: string; pipeline: string }> {
  const other = await mkdtemp(join(tmpdir(), 'rostersync-host-b-'));
  for (const file of ['pipeline.yaml', 'mapping.yaml', 'roster.csv']) await copyFile(join(dir, file), join(other, file));
  return { dir: other, pipeline: join(other, 'pipeline.yaml') };
}

describe('two hosts contend for one pipeline in PostgreSQL', () => {
  it('exactly one runs; the other refuses naming the holder, and writes nothing', { timeout: 60_000 }, async () => {
    const rng = rngFor(4242);
    const roster = Array.from({ length: 40 }, (_, i) => randomPerson(rng, i + 1));
    // Slow enough that the two runs overlap whatever the machine's load.
    const emu: RunningEmulator = await startEmulator({ latencyMs: 25, seed: 1 });
    try {
      const hostA = await makeProject(roster, { maxRps: 30, concurrency: 2 });
      const hostB = await cloneProject(hostA.dir);
      const url = await server().createDatabase('hosts');
      const env = (host: string) => ({ ...serviceEnv(emu), ROSTERSYNC_STATE_URL: url, PGPASSWORD: server().password, ROSTERSYNC_HOSTNAME: host, ROSTERSYNC_LOG_FORMAT: 'human' });
      expect((await cli(emu, hostA.dir, ['state', 'migrate', hostA.pipeline], env('host-a'))).code).toBe(0);

      const a = new WarmChild();
      const b = new WarmChild();
      await Promise.all([a.ready, b.ready]);
      await Promise.all([
        a.run(['sync', hostA.pipeline, '--create-group'], hostA.dir, env('host-a')),
        b.run(['sync', hostB.pipeline, '--create-group'], hostB.dir, env('host-b')),
      ]);
      const [exitA, exitB] = await Promise.all([a.exited, b.exited]);
      const exits = [
        { host: 'host-a', pid: a.pid, ...exitA },
        { host: 'host-b', pid: b.pid, ...exitB },
      ];
      const winners = exits.filter((e) => e.code === 0);
      const losers = exits.filter((e) => e.code !== 0);
      expect(winners, JSON.stringify(exits.map((e) => [e.host, e.code, e.stderr.slice(-400)]))).toHaveLength(1);
      expect(losers).toHaveLength(1);
      const [winner, loser] = [winners[0]!, losers[0]!];
      expect(loser.code).toBe(1);
      expect(loser.stderr).toMatch(new RegExp(`pipeline "pipeline" is locked by run \\S+: \\S+ on ${winner.host}, pid ${winner.pid}, since \\d{4}-\\d\\d-\\d\\dT`));
      expect(loser.stderr).toContain('releases it the moment that process exits');
      // The loser made no call: one group and each record written once, all by the winner.
      expect(campaignGroups(emu)).toHaveLength(1);
      expect(campaignGroups(emu)[0]!.records.size).toBe(roster.length);
      expect(emu.stats.snapshot().writes.total).toBe(roster.length + 1);

      // The holder died without releasing anything (SIGKILL mid-run): the other host runs at once.
      const grown = rosterCsv([...roster, ...Array.from({ length: 12 }, (_, i) => randomPerson(rng, 100 + i))]);
      for (const dir of [hostA.dir, hostB.dir]) await writeFile(join(dir, 'roster.csv'), grown);
      const killed = new WarmChild();
      await killed.ready;
      await killed.run(['sync', hostA.pipeline], hostA.dir, env('host-a'));
      const base = emu.stats.snapshot().writes.total;
      while (emu.stats.snapshot().writes.total < base + 3) await new Promise((resolve) => setTimeout(resolve, 2));
      killed.kill();
      expect((await killed.exited).signal).toBe('SIGKILL');
      const after = await cli(emu, hostB.dir, ['sync', hostB.pipeline], env('host-b'));
      expect(after.code, after.stderr).toBe(0);
      expect(campaignGroups(emu)[0]!.records.size).toBe(roster.length + 12);
    } finally {
      await emu.close();
    }
  });
});
