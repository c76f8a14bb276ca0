/**
 * A write the service performed but the client never learned of (a kill after the call, an outage,
 * a fault after the handler ran) is journaled `sent` or `failed` and is not in the inventory. If
 * its row then leaves the roster before the next run, a mirror sync must still remove it: the
 * pipeline created it.
 * The campaign found that the planner only deleted inventoried records, so such a record stayed
 * in the group, owned by nobody; prepareRun now counts these client_ids as gone from the roster.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { campaignGroups, cli, makeProject, readState } from './helpers/project.js';
import { randomPerson, rngFor } from './helpers/roster.js';

describe('writes the client never learned of', () => {
  it('a mirror sync removes records an earlier run created without recording them, once their rows are gone', async () => {
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
      const sync = (tag: string, ...flags: string[]) =>
        cli(emu, project.dir, ['sync', project.pipeline, '--create-group', '--fields-file', fieldsFile, '--report-dir', join(project.dir, 'reports', tag), ...flags]);

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
      // Three deletes of ten owned records is past the 10 % guard, which still applies to them.
      expect((await sync('guarded')).code).toBe(3);
      const after = await sync('after', '--allow-deletes', '3');
      expect(after.code, after.stderr).toBe(0);
      expect([...group.records.keys()].sort()).toEqual(kept.map((p) => p.id).sort());
      expect([...readState(project.stateFile).records.keys()].sort()).toEqual(kept.map((p) => p.id).sort());
      expect(readState(project.stateFile).unfinished).toEqual([]);
    } finally {
      await emu.close();
      await rm(project.dir, { recursive: true, force: true });
    }
  }, 60_000);

});
