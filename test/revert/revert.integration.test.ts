/**
 * `rostersync revert <pipeline> <run-id>` end to end, against the emulator over real HTTP: a
 * migration run with creates, updates and deletes is undone and the group is back as it was;
 * a later run, or an edit in the service, makes revert refuse that record until told per record;
 * the undo can itself be undone; a saved revert goes through `apply`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { RunReport } from '../../src/report/types.js';
import { API_KEY, cli, emulator, groupRecords as liveRecords, makeProject, people, person, type Project, type RosterRow } from '../support/project.js';

const NOTES = '4f0b1e7c-5061-4293-8edf-4a5b6c7d8e95';
const LEVEL = '0b6f7a3e-1c2d-4e5f-8a9b-0c1d2e3f4a51';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

const groupId = () => [...emu.world.orgs[0]!.groups.values()].find((g) => g.name === 'Sync test group')!.id;
/** A copy of the group's records (the emulator's own objects change with later writes). */
const groupRecords = (running: RunningEmulator) => structuredClone(liveRecords(running));
const writesSoFar = () => emu.stats.snapshot().writes.total;

/** An editor's partial POST in the service (what its UI does). */
async function edit(clientId: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${emu.url}/api/external/author-from-group/${groupId()}/${clientId}/partial/`, {
    method: 'POST',
    headers: { 'X-ApiKey': API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
}

async function syncJson(project: Project, flags: string[] = []): Promise<RunReport> {
  const run = await cli(emu, project.dir, ['sync', project.pipeline, '--json', ...flags]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as RunReport;
}

async function revert(project: Project, runId: string, flags: string[] = []) {
  return cli(emu, project.dir, ['revert', project.pipeline, runId, ...flags]);
}

/** The migration of the tests: p7, p8 new; p2 renamed, p3's level changed; p5, p6 gone. */
function migrated(): RosterRow[] {
  return [person(1), person(2, { name: 'Person Two Renamed' }), person(3, { level: 'Expert' }), person(4), person(7), person(8)];
}

describe('rostersync revert', () => {
  it('undoes a run of creates, updates and deletes, then undoes the undo', async () => {
    const project = await makeProject(people(6), { driftSample: 0 });
    await syncJson(project, ['--create-group']);
    // Fields rostersync does not manage, set by an editor: kept on an updated record, lost on a deleted one.
    await edit('p2', { [NOTES]: 'prefers short papers' });
    await edit('p5', { [NOTES]: 'on leave' });
    const before = groupRecords(emu);
    expect(person(3).level).not.toBe('Expert');

    await project.writeRoster(migrated());
    const migration = await syncJson(project, ['--allow-deletes', '2']);
    expect(migration.counts).toMatchObject({ create: { done: 2 }, update: { done: 2 }, delete: { done: 2 } });
    const after = groupRecords(emu);

    // Without --yes: the diff, nothing written.
    const writes = writesSoFar();
    const shown = await revert(project, migration.runId, ['--allow-deletes', '2']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/- delete p7/);
    expect(shown.stdout).toMatch(/\+ create p5/);
    expect(shown.stdout).toMatch(/~ update p2/);
    expect(shown.stderr).toContain('run again with --yes');
    expect(writesSoFar()).toBe(writes);

    // Two deletes (p7, p8) above the delete limit: the guard applies to a revert too.
    const guarded = await revert(project, migration.runId, ['--yes']);
    expect(guarded.code).toBe(3);
    expect(guarded.stdout).toContain('--allow-deletes 2');
    expect(writesSoFar()).toBe(writes);

    const undone = await revert(project, migration.runId, ['--yes', '--allow-deletes', '2', '--json']);
    expect(undone.code, undone.stderr).toBe(0);
    const report = JSON.parse(undone.stdout) as RunReport;
    expect(report.revertOf).toBe(migration.runId);
    expect(report.counts).toMatchObject({ create: { done: 2 }, update: { done: 2 }, delete: { done: 2 } });
    expect(report.notes.join(' ')).toMatch(/cannot be restored/);
    // Every record as before the run, the editor's note on p2 included; p5's note was never read.
    const restored = groupRecords(emu);
    const { [NOTES]: lostNote, ...p5Managed } = before.p5!;
    expect(lostNote).toBe('on leave');
    expect({ ...restored, p5: Object.fromEntries(Object.entries(restored.p5!).filter(([field]) => field !== NOTES)) }).toEqual({ ...before, p5: p5Managed });
    expect(restored.p2![NOTES]).toBe('prefers short papers');

    // The inventory follows: a sync of the old roster now has nothing to do.
    await project.writeRoster(people(6));
    const plan = await cli(emu, project.dir, ['plan', project.pipeline]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('No changes');

    // Undo the undo: the group is as the migration left it.
    const redone = await revert(project, report.runId, ['--yes', '--allow-deletes', '2']);
    expect(redone.code, redone.stderr).toBe(0);
    expect(groupRecords(emu)).toEqual(after);

    // The migration run itself can no longer be undone as it stands: later runs wrote its records.
    const again = await revert(project, migration.runId, ['--yes', '--allow-deletes', '2']);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(new RegExp(`p7: written again by the later run ${report.runId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}|p7: .*later run`));
  });

  it('refuses a record changed in the service since, names it and the field; --skip-record and --force-record decide per record', async () => {
    const project = await makeProject(people(4), { driftSample: 0 });
    await syncJson(project, ['--create-group']);
    const before = groupRecords(emu);
    await project.writeRoster([person(1, { level: 'Expert' }), person(2, { name: 'Someone Else' }), person(3), person(4)]);
    const change = await syncJson(project);
    // An editor changes p1's level in the service after the run.
    await edit('p1', { [LEVEL]: '5a1e0f6c-0001-4a00-8000-000000000001' });
    const edited = groupRecords(emu).p1;

    const writes = writesSoFar();
    const refused = await revert(project, change.runId, ['--yes']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/p1: changed in the service since the run: Expertise level no longer holds what the run wrote/);
    expect(refused.stderr).not.toMatch(/p2:/);
    expect(refused.stderr).toContain('--force-record');
    expect(writesSoFar()).toBe(writes);

    // Skipped: p2 is undone, p1 keeps the editor's change.
    const skipped = await revert(project, change.runId, ['--skip-record', 'p1']);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stdout).toMatch(/~ update p2/);
    expect(skipped.stdout).not.toMatch(/update p1/);

    // Forced: both are undone, the editor's change is lost as the flag says.
    const forced = await revert(project, change.runId, ['--yes', '--force-record', 'p1']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(groupRecords(emu)).toEqual(before);
    expect(edited).not.toEqual(before.p1);

    // A client_id the run did not write is a mistake, said as such.
    const unknown = await revert(project, change.runId, ['--force-record', 'p9']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('wrote no record p9');
  });

  it('refuses a record a later run wrote', async () => {
    const project = await makeProject(people(3), { driftSample: 0 });
    await syncJson(project, ['--create-group']);
    await project.writeRoster([person(1, { name: 'First Change' }), person(2), person(3)]);
    const first = await syncJson(project);
    await project.writeRoster([person(1, { name: 'Second Change' }), person(2), person(3)]);
    const second = await syncJson(project);
    const refused = await revert(project, first.runId);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`p1: written again by the later run ${second.runId}`);
  });

  it('a saved revert goes through apply, and is refused there once the record changed', async () => {
    const project = await makeProject(people(3), { driftSample: 0 });
    await syncJson(project, ['--create-group']);
    const before = groupRecords(emu);
    await project.writeRoster([person(1, { name: 'Changed' }), person(2), person(3), person(4)]);
    const change = await syncJson(project);
    const planFile = join(project.dir, 'revert.json');

    const saved = await revert(project, change.runId, ['--out', planFile]);
    expect(saved.code, saved.stderr).toBe(0);
    expect(JSON.parse(await readFile(planFile, 'utf8')).revert).toEqual({ runId: change.runId, forceRecords: [], skipRecords: [] });
    await edit('p4', { name: 'Edited in the UI' });
    const stale = await cli(emu, project.dir, ['apply', planFile]);
    expect(stale.code).toBe(3);
    expect(stale.stderr).toMatch(/p4: changed in the service since the run: name no longer holds/);

    await edit('p4', { name: 'Person 4' });
    const applied = await cli(emu, project.dir, ['apply', planFile]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(groupRecords(emu)).toEqual(before);
  });

  it('says plainly when the run does not exist or wrote nothing', async () => {
    const project = await makeProject(people(2), { driftSample: 0 });
    const first = await syncJson(project, ['--create-group']);
    const missing = await revert(project, 'no-such-run');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('has no run no-such-run');
    expect(missing.stderr).toContain(first.runId);
    const dry = await cli(emu, project.dir, ['plan', project.pipeline, '--json']);
    const dryRun = (JSON.parse(dry.stdout) as RunReport).runId;
    const nothing = await revert(project, dryRun);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain('was a dry run');
  });
});
