/**
 * Crash campaign, state lost between kills: a real rostersync process is SIGKILLed at a
 * seeded moment of a sync, then the state directory is deleted (a wiped disk, a fresh CI runner),
 * the operator pins the group as the refusal tells them, and the sync is killed again or resumed.
 * Every trial must converge without damage: one group (no second one created), every roster record
 * as mapped, every field an editor set in the UI still there, the new state owning exactly the
 * roster, and a further run making zero write calls.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { NOTES, recordsOf, uiSet } from '../state/helpers.js';
import { ChildPool } from './helpers/child.js';
import { campaignGroups, cli, makeProject, readReport, readState, recover, serviceEnv, type Project, type RecoveryLog } from './helpers/project.js';
import { changePerson, expectedManaged, expectedRemote, intBetween, randomPerson, rngFor, type Person, type Rng } from './helpers/roster.js';

const TRIALS = Number(process.env.CAMPAIGN_STATE_LOSS_TRIALS ?? 8);
const pool = new ChildPool();
const kills: boolean[] = [];

afterAll(async () => {
  await pool.close();
  console.info(`state-loss campaign: ${TRIALS} trials, ${kills.filter(Boolean).length}/${kills.length} kills landed mid-run`);
});

const writesSoFar = (emu: RunningEmulator) => emu.stats.snapshot().writes.total;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One sync SIGKILLed after k of about `writes` write calls (k = 0: during start-up or planning). */
async function killedSync(emu: RunningEmulator, project: Project, rng: Rng, writes: number, tag: string): Promise<void> {
  const child = pool.take();
  await child.ready;
  const base = writesSoFar(emu);
  const k = Math.floor(rng() * writes);
  await child.run(['sync', project.pipeline, '--report-dir', join(project.dir, 'reports', tag)], project.dir, serviceEnv(emu));
  let ended = false;
  void child.exited.then(() => (ended = true));
  if (k === 0) await Promise.race([sleep(intBetween(rng, 0, 120)), child.exited]);
  else while (!ended && writesSoFar(emu) - base < k) await sleep(1);
  child.kill();
  const exit = await child.exited;
  kills.push(exit.signal === 'SIGKILL');
  if (exit.signal !== 'SIGKILL') expect(exit.code, exit.stderr).toBe(0);
}

/** The state is gone; a run refuses to create a second group, and the operator pins the group's id. */
async function loseStateAndPin(emu: RunningEmulator, project: Project): Promise<void> {
  await rm(join(project.dir, '.rostersync'), { recursive: true, force: true });
  const refused = await cli(emu, project.dir, ['sync', project.pipeline, '--report-dir', join(project.dir, 'reports', 'refused')]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('knows no group id');
  const groups = campaignGroups(emu);
  expect(groups, 'one group, never a second').toHaveLength(1);
  const pinned = await cli(emu, project.dir, ['state', 'set-group', project.pipeline, String(groups[0]!.id)]);
  expect(pinned.code, pinned.stderr).toBe(0);
}

describe('crash campaign: state lost between kills', () => {
  it.each(Array.from({ length: TRIALS }, (_, i) => ({ seed: 101 + i })))('seed $seed', { timeout: 90_000, retry: 1 }, async ({ seed }) => {
    const rng = rngFor(seed);
    let id = 0;
    const initial = Array.from({ length: intBetween(rng, 30, 60) }, () => randomPerson(rng, ++id));
    const emu = await startEmulator({ latencyMs: intBetween(rng, 1, 4), seed });
    const project = await makeProject(initial, { concurrency: intBetween(rng, 2, 5) });
    const log: RecoveryLog = { reruns: 0, setGroup: 'none' };
    try {
      await recover(emu, project, [], log);
      const groupId = campaignGroups(emu)[0]!.id;
      // Editors set notes in the UI on some records; no run may wipe them.
      const notes = new Map<string, string>();
      for (const person of initial) if (rng() < 0.25) notes.set(person.id, `ui note ${person.id}`);
      for (const [clientId, note] of notes) await uiSet(emu, groupId, clientId, { [NOTES]: note });

      // The roster changes (updates and additions: after a lost state, deletions cannot be known).
      const roster = [...initial.map((p) => (rng() < 0.3 ? changePerson(rng, p) : p)), ...Array.from({ length: intBetween(rng, 1, 6) }, () => randomPerson(rng, ++id))];
      await project.writeRoster(roster);
      await killedSync(emu, project, rng, roster.filter((p, i) => p !== initial[i]).length, 'kill-1');
      await loseStateAndPin(emu, project);
      if (seed % 2 === 0) {
        // Killed again while adopting, and the state lost once more.
        await killedSync(emu, project, rng, roster.length, 'kill-2');
        await loseStateAndPin(emu, project);
      }
      const reportDir = await recover(emu, project, [], log);
      expect((await readReport(reportDir)).outcome).toBe('success');

      expect(campaignGroups(emu), 'one group').toHaveLength(1);
      const remote = recordsOf(emu, groupId);
      expect(Object.keys(remote).sort()).toEqual(roster.map((p) => p.id).sort());
      for (const person of roster) {
        const note = notes.get(person.id);
        expect(remote[person.id], `seed ${seed}: ${person.id}`).toEqual({ ...expectedRemote(person), ...(note ? { [NOTES]: note } : {}) });
      }
      const state = readState(project.stateFile);
      expect(state.groupId).toBe(groupId);
      expect([...state.records.keys()].sort()).toEqual(roster.map((p: Person) => p.id).sort());
      for (const person of roster) expect(state.records.get(person.id)).toEqual(expectedManaged(person));
      expect(state.unfinished).toEqual([]);

      const before = writesSoFar(emu);
      const again = await cli(emu, project.dir, ['sync', project.pipeline, '--report-dir', join(project.dir, 'reports', 'again')]);
      expect(again.code, again.stderr).toBe(0);
      expect(writesSoFar(emu) - before, 'a rerun after convergence writes nothing').toBe(0);
    } finally {
      await emu.close();
      await rm(project.dir, { recursive: true, force: true });
    }
  });
});
