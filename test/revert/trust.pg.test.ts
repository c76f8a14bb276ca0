/**
 * A revert you can trust, end to end through the CLI against the emulator, on both state backends:
 * it acts only where the run wrote, deletes only what the run created and the pipeline still
 * owns, judges the whole record, writes back the service's own values, converges, refuses what it
 * cannot know, and `last` finds the run that wrote however many plans came after.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENDPOINTS, routeKey } from '../../src/client/endpoints.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { RunReport } from '../../src/report/types.js';
import type { StateBackend } from '../../src/state/backend.js';
import { connectState } from '../../src/state/postgres/connect.js';
import { PostgresStateStore } from '../../src/state/postgres/postgres-store.js';
import { SqliteStateStore } from '../../src/state/sqlite/sqlite-store.js';
import { postgresForFile } from '../support/postgres-server.js';
import { cli, emulator, makeProject, people, person, type Project } from '../support/project.js';
import { withPassword } from '../support/state-backends.js';

const NOTES = '4f0b1e7c-5061-4293-8edf-4a5b6c7d8e95';
const COI = '7d1c6a52-6a3e-4c3b-9b8e-1f0e2d3c4b5a';
const COI_YES = '8d4b3c9f-0004-4d00-8000-000000000001';
const LEVEL = '0b6f7a3e-1c2d-4e5f-8a9b-0c1d2e3f4a51';
const EXPERT = '5a1e0f6c-0001-4a00-8000-000000000003';

const GET_AUTHOR = routeKey(ENDPOINTS.getAuthor);
const server = postgresForFile();
let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

/** Where a test's pipeline keeps its state: the CLI's environment for it, and the store opened directly. */
interface Backend {
  name: 'sqlite' | 'postgres';
  /** A new, empty state for the project; returns the CLI's environment for it. */
  fresh(project: Project): Promise<Record<string, string>>;
  open(project: Project, env: Record<string, string>): StateBackend;
}

const backends: Backend[] = [
  {
    name: 'sqlite',
    fresh: async (project) => {
      await rm(join(project.dir, '.rostersync'), { recursive: true, force: true });
      return {};
    },
    open: (project) => SqliteStateStore.open(join(project.dir, '.rostersync', 'pipeline.sqlite'), 'pipeline'),
  },
  {
    name: 'postgres',
    fresh: async (project) => {
      const env = { ROSTERSYNC_STATE_URL: await server().createDatabase('revert'), PGPASSWORD: server().password };
      const migrated = await cli(emu, project.dir, ['state', 'migrate', project.pipeline], env);
      expect(migrated.code, migrated.stderr).toBe(0);
      return env;
    },
    open: (_project, env) => withPassword(server(), () => PostgresStateStore.open(connectState(env.ROSTERSYNC_STATE_URL!, { origin: 'test', fromEnvironment: true }), 'pipeline')),
  },
];

const groupByName = (name: string) => [...emu.world.orgs[0]!.groups.values()].find((g) => g.name === name)!;
const records = (groupId: number) => structuredClone(Object.fromEntries([...emu.world.orgs[0]!.groups.get(groupId)!.records.entries()])) as Record<string, Record<string, unknown>>;
const writesSoFar = () => emu.stats.snapshot().writes.total;

/** An editor's change in the service's user interface (the emulator's UI route). */
async function uiEdit(groupId: number, clientId: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${emu.url}/_emulator/ui/groups/${groupId}/records/${clientId}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status, await res.text()).toBe(200);
}

async function uiGroup(name: string): Promise<number> {
  const res = await fetch(`${emu.url}/_emulator/ui/groups`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name }) });
  return ((await res.json()) as { authors_group_id: number }).authors_group_id;
}

/** Points the test pipeline at an existing group (`target.group_id`), as a pipeline that did not create it. */
async function pinGroup(project: Project, groupId: number, extraPolicy: string[] = []): Promise<void> {
  const text = await readFile(project.pipeline, 'utf8');
  await writeFile(project.pipeline, text.replace(/target:\n {2}group: .*\n/, `target: { group_id: ${groupId} }\n`).replace('policy:\n', ['policy:', ...extraPolicy, ''].join('\n')));
}

async function addPolicy(project: Project, lines: string[]): Promise<void> {
  await writeFile(project.pipeline, (await readFile(project.pipeline, 'utf8')).replace('policy:\n', ['policy:', ...lines, ''].join('\n')));
}

describe.each(backends)('revert on $name', (backend) => {
  async function setUp(rows = people(4), options: Parameters<typeof makeProject>[1] = {}) {
    const project = await makeProject(rows, { driftSample: 0, ...options });
    const env = await backend.fresh(project);
    const run = (argv: string[]) => cli(emu, project.dir, argv, env);
    const sync = async (flags: string[] = []) => {
      const done = await run(['sync', project.pipeline, '--json', ...flags]);
      expect(done.code, done.stderr).toBe(0);
      return JSON.parse(done.stdout) as RunReport;
    };
    return { project, env, run, sync };
  }

  it('acts only on the group the run wrote to: after set-group to another group it refuses, and deletes nothing there', async () => {
    const { project, run, sync } = await setUp(people(10));
    await sync(['--create-group']);
    const first = groupByName('Sync test group').id;
    await project.writeRoster(people(20));
    const grown = await sync();
    // Another team's group holding records of the same client_ids, which the pipeline is moved to.
    const other = await uiGroup('Another team');
    for (let n = 11; n <= 20; n++) await uiEdit(other, `p${n}`, { name: `Their person ${n}` });
    const theirs = records(other);
    expect((await run(['state', 'set-group', project.pipeline, String(other), '--release-owned'])).code).toBe(0);
    await pinGroup(project, other);

    const writes = writesSoFar();
    const refused = await run(['revert', project.pipeline, grown.runId, '--yes', '--allow-deletes', '10']);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(`it wrote to group ${first} of`);
    expect(writesSoFar()).toBe(writes);
    expect(records(other)).toEqual(theirs);
    expect(Object.keys(records(first))).toHaveLength(20);
  });

  it('never deletes a record the pipeline no longer owns (state forget); --skip-record leaves it and undoes the rest', async () => {
    const { project, run, sync } = await setUp(people(4));
    await sync(['--create-group']);
    const groupId = groupByName('Sync test group').id;
    const before = records(groupId);
    await project.writeRoster(people(6));
    const grown = await sync();
    expect((await run(['state', 'forget', project.pipeline, 'p6'])).code).toBe(0);

    const refused = await run(['revert', project.pipeline, grown.runId, '--yes']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/p6: no longer claimed by this pipeline .*never deletes it/);
    expect(refused.stderr).not.toMatch(/p5:/);
    const forced = await run(['revert', project.pipeline, grown.runId, '--yes', '--force-record', 'p6']);
    expect(forced.code).toBe(3);
    expect(records(groupId).p6).toBeDefined();

    const skipped = await run(['revert', project.pipeline, grown.runId, '--yes', '--skip-record', 'p6']);
    expect(skipped.code, skipped.stderr).toBe(0);
    const after = records(groupId);
    expect(after.p5).toBeUndefined();
    expect(after.p6).toBeDefined();
    delete after.p6;
    expect(after).toEqual(before);
  });

  it('judges the whole record: fields editors set since the run are a conflict, and the revert of a forced revert brings them back', async () => {
    const { project, run, sync } = await setUp(people(3));
    await sync(['--create-group']);
    const groupId = groupByName('Sync test group').id;
    await project.writeRoster(people(4));
    const grown = await sync();
    await uiEdit(groupId, 'p4', { [COI]: COI_YES, [NOTES]: 'conflicted with the editor' });
    const flagged = records(groupId).p4;

    const refused = await run(['revert', project.pipeline, grown.runId, '--yes']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/p4: changed in the service since the run: (Conflict of interest, Notes|Notes, Conflict of interest) no longer hold what the run wrote/);
    expect(records(groupId).p4).toEqual(flagged);

    const forced = await run(['revert', project.pipeline, grown.runId, '--yes', '--force-record', 'p4', '--json']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(records(groupId).p4).toBeUndefined();
    const back = await run(['revert', project.pipeline, (JSON.parse(forced.stdout) as RunReport).runId, '--yes']);
    expect(back.code, back.stderr).toBe(0);
    expect(records(groupId).p4).toEqual(flagged);
  });

  it('writes back what the service held before the run (a field written if_empty, an editor\'s value), not the last-applied values', async () => {
    const project = await makeProject([], { driftSample: 0 });
    const env = await backend.fresh(project);
    await writeFile(join(project.dir, 'mapping.yaml'), ['client_id: { column: ID }', 'fields:', '  name: { column: Full name }', 'custom_fields:', '  Expertise level: { column: Level }', '  Notes: { column: Notes, write: if_empty }', ''].join('\n'));
    const roster = (level: string, notes: string) => writeFile(join(project.dir, 'roster.csv'), `ID,Full name,Level,Notes\np1,Person 1,${level},${notes}\np2,Person 2,Junior,\n`);
    await roster('Junior', '');
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'], env)).code).toBe(0);
    const groupId = groupByName('Sync test group').id;
    await uiEdit(groupId, 'p1', { [LEVEL]: EXPERT });
    const before = records(groupId);

    await roster('Senior', 'roster B');
    const changed = await cli(emu, project.dir, ['sync', project.pipeline, '--json'], env);
    expect(changed.code, changed.stderr).toBe(0);
    expect(records(groupId).p1![NOTES]).toBe('roster B');

    const undone = await cli(emu, project.dir, ['revert', project.pipeline, 'last', '--yes'], env);
    expect(undone.code, undone.stderr).toBe(0);
    expect(records(groupId)).toEqual(before);
  });

  it('converges: reverting the same run again after a partial revert finishes the job instead of refusing it', async () => {
    const { project, run, sync } = await setUp(people(4));
    await sync(['--create-group']);
    const groupId = groupByName('Sync test group').id;
    const before = records(groupId);
    await project.writeRoster([person(1, { name: 'One Renamed' }), person(2, { name: 'Two Renamed' }), person(3), person(4), person(5)]);
    const changed = await sync();

    const part = await run(['revert', project.pipeline, changed.runId, '--yes', '--skip-record', 'p2']);
    expect(part.code, part.stderr).toBe(0);
    expect(records(groupId).p2!.name).toBe('Two Renamed');
    const rest = await run(['revert', project.pipeline, changed.runId, '--yes', '--json']);
    expect(rest.code, rest.stderr).toBe(0);
    expect((JSON.parse(rest.stdout) as RunReport).counts).toMatchObject({ update: { done: 1 }, create: {}, delete: {} });
    expect(records(groupId)).toEqual(before);
    // Once more: nothing left to write, and it says so.
    const writes = writesSoFar();
    const again = await run(['revert', project.pipeline, changed.runId, '--yes', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as RunReport).notes.join(' ')).toMatch(/already as before run/);
    expect(writesSoFar()).toBe(writes);
  });

  it('refuses with exit 1 a run whose journal did not travel (state export / import), and deletes nothing', async () => {
    const { project, env, run, sync } = await setUp(people(3));
    await sync(['--create-group']);
    const groupId = groupByName('Sync test group').id;
    await project.writeRoster(people(4));
    await sync();
    const file = join(project.dir, 'state.jsonl');
    expect((await run(['state', 'export', project.pipeline, '--out', file])).code).toBe(0);
    const moved = await backend.fresh(project);
    const imported = await cli(emu, project.dir, ['state', 'import', project.pipeline, '--jsonl', file], moved);
    expect(imported.code, imported.stderr).toBe(0);
    expect(env).toBeDefined();

    const refused = await cli(emu, project.dir, ['revert', project.pipeline, 'last', '--yes'], moved);
    expect(refused.code, refused.stdout).toBe(1);
    expect(refused.stderr).toMatch(/holds no journal of them/);
    expect(records(groupId).p4).toBeDefined();
  });

  it('`last` is the latest run that wrote, however many plans came after it', async () => {
    const { project, env, run, sync } = await setUp(people(3));
    await sync(['--create-group']);
    const groupId = groupByName('Sync test group').id;
    await project.writeRoster(people(4));
    const grown = await sync();
    const store = backend.open(project, env);
    try {
      for (let n = 0; n < 60; n++) {
        const id = `${grown.runId}-plan-${String(n).padStart(2, '0')}`;
        store.startRun({ id, dryRun: true, sourceSha256: 'x' });
        store.finishRun({ id, outcome: 'dry_run', validRecords: 4, counts: { create: { planned: 1 }, update: {}, delete: {}, noop: { planned: 3 } } });
      }
      // And a sync that found nothing to do.
      store.startRun({ id: `${grown.runId}-z-noop`, dryRun: false, sourceSha256: 'x' });
      store.finishRun({ id: `${grown.runId}-z-noop`, outcome: 'success', validRecords: 4, counts: { create: {}, update: {}, delete: {}, noop: { done: 4 } } });
    } finally {
      store.close();
    }
    const undone = await run(['revert', project.pipeline, 'last', '--yes', '--json']);
    expect(undone.code, undone.stderr).toBe(0);
    expect((JSON.parse(undone.stdout) as RunReport).revertOf).toBe(grown.runId);
    expect(records(groupId).p4).toBeUndefined();
  });

  it('policy.undo: exact reads each record before changing it (counted by the estimate), and the revert restores it whole', async () => {
    const { project, run, sync } = await setUp(people(6), { guards: { max_delete_percent: 100 } });
    await addPolicy(project, ['  undo: exact']);
    await sync(['--create-group']);
    const groupId = groupByName('Sync test group').id;
    // Editors' work the pipeline does not manage, and one value of a field it does.
    await uiEdit(groupId, 'p5', { [NOTES]: 'on leave', [COI]: COI_YES });
    await uiEdit(groupId, 'p1', { [LEVEL]: EXPERT });
    const before = records(groupId);

    await project.writeRoster([person(1, { level: 'Junior' }), person(2, { name: 'Two Renamed' }), person(3), person(4)]);
    const planned = await run(['plan', project.pipeline, '--json', '--allow-deletes', '2']);
    const estimate = (JSON.parse(planned.stdout) as RunReport).estimate!;
    expect(estimate).toMatchObject({ undoReads: 4, calls: 8 });
    const gets = () => emu.stats.count(GET_AUTHOR);
    const getsBefore = gets();
    const changed = await sync(['--allow-deletes', '2']);
    expect(gets() - getsBefore).toBe(4);
    expect(changed.counts).toMatchObject({ update: { done: 2 }, delete: { done: 2 } });

    const undone = await run(['revert', project.pipeline, changed.runId, '--yes', '--allow-deletes', '2']);
    expect(undone.code, undone.stderr).toBe(0);
    expect(records(groupId)).toEqual(before);
  });
});
