/**
 * Group checks give one answer in `plan`, `sync --dry-run` and `sync`: a mistyped group_id is
 * named in every one of them, the real run says the group does not exist (not "no longer") and
 * leaves the state unbound, and after a deleted group is replaced with `state set-group` no hint
 * sends the pipeline back to the deleted group.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { API_KEY, cli, emulator, groupRecords, makeProject, people } from '../support/project.js';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

async function createGroup(name = 'Sync test group'): Promise<number> {
  const res = await fetch(`${emu.url}/api/external/authors-group/create/`, {
    method: 'POST',
    headers: { 'X-ApiKey': API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify({ group_name: name, owner_team: 'Editorial Office', editor_teams: [], viewer_teams: [] }),
  });
  return ((await res.json()) as { authors_group_id: number }).authors_group_id;
}

async function pin(pipeline: string, id: number): Promise<void> {
  const text = await readFile(pipeline, 'utf8');
  await writeFile(pipeline, text.replace(/^ {2}(group: \{.*\}|group_id: \d+)$/m, `  group_id: ${id}`));
}

describe('a mistyped group_id', () => {
  it('is named by plan and --dry-run; the real run says it does not exist, writes nothing and binds nothing', async () => {
    const project = await makeProject(people(4));
    await pin(project.pipeline, 9999);
    for (const argv of [['plan', project.pipeline], ['sync', project.pipeline, '--dry-run']]) {
      const run = await cli(emu, project.dir, argv);
      expect(run.stdout + run.stderr, argv.join(' ')).toContain('group 9999 could not be confirmed');
      expect(run.stdout + run.stderr).toContain('check target.group_id');
    }
    const records = () => [...emu.world.orgs[0]!.groups.values()].reduce((n, g) => n + g.records.size, 0);
    const before = records();
    const real = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(real.code, real.stderr).toBe(2);
    expect(real.stdout + real.stderr).toContain('group 9999 does not exist in the service');
    expect(real.stdout + real.stderr).not.toContain('no longer exists');
    expect(records()).toBe(before);

    // The typo fixed, the next run goes ahead: no `state rebind` needed.
    const id = await createGroup();
    await pin(project.pipeline, id);
    const fixed = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
    expect(Object.keys(groupRecords(emu))).toHaveLength(4);
  });
});

describe('a deleted group replaced with state set-group', () => {
  it('the refusal names the new group, never a rebind to the deleted one', async () => {
    const project = await makeProject(people(4));
    const old = await createGroup();
    await pin(project.pipeline, old);
    expect((await cli(emu, project.dir, ['sync', project.pipeline])).code).toBe(0);
    emu.world.orgs[0]!.groups.delete(old);
    // plan and --dry-run give the real run's answer: the group is gone.
    const answers = [];
    for (const argv of [['plan', project.pipeline], ['sync', project.pipeline, '--dry-run'], ['sync', project.pipeline]]) {
      const run = await cli(emu, project.dir, argv);
      answers.push({ code: run.code, gone: run.stderr.includes(`authors group ${old} looks deleted`) });
    }
    expect(answers).toEqual(Array.from({ length: 3 }, () => ({ code: 1, gone: true })));

    const next = await createGroup('Sync test group 2');
    const moved = await cli(emu, project.dir, ['state', 'set-group', project.pipeline, String(next), '--release-owned']);
    expect(moved.code, moved.stderr).toBe(0);
    const refused = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`group_id: ${next}`);
    expect(refused.stderr).not.toContain(`--group-id ${old}`);
  });
});
