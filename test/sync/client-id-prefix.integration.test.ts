/**
 * A change of the client_id prefix turns every owned record into a create under a new id. In
 * upsert mode the old records stay, so the group would hold everyone twice: the identity-change
 * guard refuses it (exit 3, dry runs too) and names the flag; the documented rename (mirror mode
 * with --allow-deletes) still moves the records, and one person's new id stays an ordinary change.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { cli, emulator, groupRecords, makeProject, people, writes } from '../support/project.js';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

async function setPrefix(dir: string, prefix: string): Promise<void> {
  const mapping = join(dir, 'mapping.yaml');
  await writeFile(mapping, (await readFile(mapping, 'utf8')).replace(/client_id: \{[^}]*\}/, `client_id: { column: ID, prefix: "${prefix}" }`));
}

describe('a change of the client_id prefix', () => {
  it('is refused in upsert mode (dry run too) with the flag that allows it', async () => {
    const project = await makeProject(people(20), { mode: 'upsert' });
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    const before = writes(emu).total;
    await setPrefix(project.dir, 'rev-');
    for (const argv of [['sync', project.pipeline, '--dry-run'], ['sync', project.pipeline]]) {
      const refused = await cli(emu, project.dir, argv);
      expect(refused.code, refused.stderr).toBe(3);
      expect(refused.stdout + refused.stderr).toContain('--allow-identity-changes 20');
    }
    const report = JSON.parse((await cli(emu, project.dir, ['sync', project.pipeline, '--json'])).stdout) as { guards: { guard: string; tripped: boolean; message: string }[] };
    expect(report.guards.find((g) => g.tripped)?.message).toMatch(/20 owned records reappear under new client_ids .* p1 → rev-p1/);
    expect(writes(emu).total).toBe(before);
    expect(Object.keys(groupRecords(emu))).toHaveLength(20);

    // Allowed on purpose: the creates go ahead (the old records stay, as upsert keeps them).
    const allowed = await cli(emu, project.dir, ['sync', project.pipeline, '--allow-identity-changes', '20']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(Object.keys(groupRecords(emu))).toHaveLength(40);
  });

  it('in mirror mode renames with --allow-deletes, as documented; one changed id needs no flag', async () => {
    const project = await makeProject(people(20), { mode: 'mirror', guards: { max_deletes: 50, max_delete_percent: 10 } });
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    await setPrefix(project.dir, 'rev-');
    const refused = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(refused.code).toBe(3);
    const renamed = await cli(emu, project.dir, ['sync', project.pipeline, '--allow-deletes', '20']);
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(Object.keys(groupRecords(emu)).sort()).toEqual(people(20).map((p) => `rev-${p.id}`).sort());

    // Upsert, one person's id changes: an ordinary create (the old record an orphan), no guard.
    const upsert = await makeProject(people(20), { mode: 'upsert' });
    expect((await cli(emu, upsert.dir, ['sync', upsert.pipeline, '--create-group'])).code).toBe(0);
    await upsert.writeRoster([...people(19), { ...people(1, 20)[0]!, id: 'p20-new' }]);
    const one = await cli(emu, upsert.dir, ['sync', upsert.pipeline]);
    expect(one.code, one.stderr).toBe(0);
  });
});
