/**
 * The plan diff a new user reads first (`rostersync plan`): the group creation shown as a planned
 * change, the group's name kept after its id is pinned, deletes without empty fields, and orphans
 * listed by name. The CLI in-process against the emulator on 127.0.0.1:0.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { RunReport } from '../../src/report/types.js';
import { cli, emulator, makeProject, people } from '../support/project.js';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

function groupIdOf(name: string): number {
  return [...emu.world.orgs[0]!.groups.values()].find((group) => group.name === name)!.id;
}

async function pinGroupId(pipeline: string, id: number): Promise<void> {
  const text = await readFile(pipeline, 'utf8');
  await writeFile(pipeline, text.replace(/ {2}group: \{[^\n]*\}/, `  group_id: ${id}`));
}

async function reportOf(stdout: string): Promise<RunReport> {
  const path = /json\s+(\S+report\.json)/.exec(stdout)?.[1];
  expect(path, stdout).toBeDefined();
  return JSON.parse(await readFile(path!, 'utf8')) as RunReport;
}

describe('the plan diff', () => {
  it('shows the group creation as a planned change with --create-group, and counts it', async () => {
    const project = await makeProject(people(2));
    const plan = await cli(emu, project.dir, ['plan', project.pipeline, '--create-group', '--detailed-exitcode']);
    expect(plan.code, plan.stderr).toBe(2);
    expect(plan.stdout).toContain(
      [
        'rostersync would make these changes to "Sync test group" (new):',
        '',
        '  + create group "Sync test group"  (--create-group; its id is known once created)',
        '      + owner_team   = "Editorial Office"',
        '',
        '  + create p1  (new in the roster; roster.csv:2)',
      ].join('\n'),
    );
    expect(plan.stdout).toContain('Plan: 1 group to create; 2 to create, 0 to update, 0 to delete, 0 unchanged.');
  });

  it('keeps the group name after the id is pinned, and a delete lists only the values it removes', async () => {
    const project = await makeProject(people(3), { mode: 'mirror' });
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    const id = groupIdOf('Sync test group');
    await pinGroupId(project.pipeline, id);
    await project.writeRoster(people(2));

    const plan = await cli(emu, project.dir, ['plan', project.pipeline]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(`rostersync would make these changes to "Sync test group" (#${id}):`);
    const block = plan.stdout.slice(plan.stdout.indexOf('- delete p3'), plan.stdout.indexOf('Plan:'));
    expect(block).toContain('- name');
    expect(block).not.toContain('orcids');
    expect(block).not.toContain('= null\n');
    expect(plan.stdout).toContain('Plan: 0 to create, 0 to update, 1 to delete, 2 unchanged.');

    const dryRun = await cli(emu, project.dir, ['sync', project.pipeline, '--dry-run']);
    const report = await reportOf(dryRun.stdout);
    expect(report.target).toMatchObject({ groupId: id, groupName: 'Sync test group' });
    const html = await readFile(/html\s+(\S+report\.html)/.exec(dryRun.stdout)![1]!, 'utf8');
    expect(html).toContain(`group ${id} <q>Sync test group</q>`);
    const show = await cli(emu, project.dir, ['state', 'show', project.pipeline]);
    expect(show.stdout).toContain(`group      ${id} "Sync test group" (created by this pipeline)\n`);
  });

  it('lists orphans by client_id and last-applied name, in the diff and the reports', async () => {
    const project = await makeProject(people(5), { mode: 'upsert' });
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    await project.writeRoster(people(3));

    const plan = await cli(emu, project.dir, ['plan', project.pipeline]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(['  Orphans kept (gone from the roster, not deleted in upsert mode):', '      p4  "Person 4"', '      p5  "Person 5"'].join('\n'));
    expect(plan.stdout).toContain('Plan: 0 to create, 0 to update, 0 to delete, 3 unchanged. 2 orphans kept (upsert mode).');
    const masked = await cli(emu, project.dir, ['plan', project.pipeline, '--mask']);
    expect(masked.stdout).toContain('      p4  (masked)');
    expect(masked.stdout).not.toContain('Person 4');

    const sync = await cli(emu, project.dir, ['sync', project.pipeline]);
    const report = await reportOf(sync.stdout);
    expect(report.orphans).toEqual(['p4', 'p5']);
    expect(report.orphanNames).toEqual({ p4: 'Person 4', p5: 'Person 5' });
    const html = await readFile(/html\s+(\S+report\.html)/.exec(sync.stdout)![1]!, 'utf8');
    expect(html).toMatch(/<td>p4<\/td><td>Person 4<\/td>/);
  });
});
