/**
 * A write the service performed but the client never learned of (a kill after the call, an outage,
 * a fault after the handler ran) is journaled `sent` or `failed` and is not in the inventory. If
 * its row then leaves the roster before the next run, a mirror sync must still remove it: the
 * pipeline created it. Today the planner only deletes inventoried records (plan/build.ts iterates
 * `classification.missing`, which comes from the inventory), so the record stays in the group,
 * owned by nobody, for ever.
 *
 * KNOWN BUG (reported by the crash campaign): this test is marked `fails` until the planner also
 * considers unfinished or failed writes of client_ids that are neither owned nor in the roster.
 * When the engine is fixed, vitest reports this test as unexpectedly passing: drop `.fails` then.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { campaignGroups, cli, makeProject, readState } from './helpers/project.js';
import { randomPerson, rngFor } from './helpers/roster.js';

describe('writes the client never learned of', () => {
  /** Filled by the first test: the group's client_ids after the final sync, and the roster's. */
  let outcome: { remote: string[]; roster: string[] } | undefined;

  it('sets the case up: three creates performed remotely, unknown to the client, then dropped from the roster', async () => {
    const rng = rngFor(77);
    const kept = Array.from({ length: 10 }, (_, i) => randomPerson(rng, i + 1));
    const extra = Array.from({ length: 3 }, (_, i) => randomPerson(rng, 100 + i));
    const emu = await startEmulator({ seed: 77 });
    const project = await makeProject(kept);
    try {
      const fieldsFile = join(project.dir, 'fields.json');
      const fields = await cli(emu, project.dir, ['fields', '--json']);
      expect(fields.code, fields.stderr).toBe(0);
      await writeFile(fieldsFile, fields.stdout);
      const sync = (tag: string) => cli(emu, project.dir, ['sync', project.pipeline, '--fields-file', fieldsFile, '--report-dir', join(project.dir, 'reports', tag)]);

      expect((await sync('first')).code).toBe(0);

      // Three new rows; every call is performed by the service and then answered 502.
      await project.writeRoster([...kept, ...extra]);
      emu.runtime.update({ faults: { status502: 1 }, faultPhase: 'after' });
      const blind = await sync('blind');
      expect(blind.code).not.toBe(0);
      emu.runtime.update({ faults: { status502: 0 } });
      const group = campaignGroups(emu)[0]!;
      for (const p of extra) expect(group.records.has(p.id), `${p.id} was created remotely`).toBe(true);
      for (const p of extra) expect(readState(project.stateFile).records.has(p.id), `${p.id} is not inventoried`).toBe(false);

      // The rows leave the roster before the next run: mirror mode must remove what it created.
      await project.writeRoster(kept);
      const after = await sync('after');
      expect(after.code, after.stderr).toBe(0);
      outcome = { remote: [...group.records.keys()].sort(), roster: kept.map((p) => p.id).sort() };
    } finally {
      await emu.close();
      await rm(project.dir, { recursive: true, force: true });
    }
  }, 60_000);

  it.fails('a mirror sync removes records an earlier run created without recording them, once their rows are gone', () => {
    expect(outcome, 'the setup test above must pass').toBeDefined();
    expect(outcome!.remote).toEqual(outcome!.roster);
  });
});
