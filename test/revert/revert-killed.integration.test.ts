/**
 * A revert of a run killed part-way: a real rostersync process is SIGKILLed in the middle of a
 * migration (creates, updates, deletes), leaving journal entries planned or sent but never
 * confirmed. Revert reads each record back and undoes what the service holds, so the group is
 * as it was before the run, whatever the kill interrupted.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ENDPOINTS, routeKey } from '../../src/client/endpoints.js';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { SqliteStateStore } from '../../src/state/sqlite/sqlite-store.js';
import { ChildPool } from '../campaign/helpers/child.js';
import { emulatorEnv } from '../support/cli.js';
import { cli, emulator, groupRecords, makeProject, people, person } from '../support/project.js';

let emu: RunningEmulator;
const pool = new ChildPool();
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});
afterAll(async () => {
  await pool.close();
});

const writesSoFar = () => emu.stats.snapshot().writes.total;
const LISTING = routeKey(ENDPOINTS.listCustomFields);
const COI = '7d1c6a52-6a3e-4c3b-9b8e-1f0e2d3c4b5a';
const COI_YES = '8d4b3c9f-0004-4d00-8000-000000000001';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('revert of a run killed part-way', () => {
  it('undoes exactly what reached the service', async () => {
    // Slow enough (40 writes a second, two in flight) that the kill lands inside the writes.
    const project = await makeProject(people(30), { driftSample: 0, maxRps: 40, concurrency: 2, guards: { max_deletes: 100, max_delete_percent: 100 } });
    const first = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(first.code, first.stderr).toBe(0);
    const before = structuredClone(groupRecords(emu));

    // 20 updates, 20 creates, then 10 deletes.
    await project.writeRoster([...people(20).map((row) => ({ ...row, name: `${row.name} (migrated)` })), ...people(20, 31)]);
    const child = pool.take();
    await child.ready;
    const base = writesSoFar();
    await child.run(['sync', project.pipeline, '--report-dir', join(project.dir, 'reports', 'killed')], project.dir, emulatorEnv(emu) as Record<string, string>);
    for (let waited = 0; writesSoFar() - base < 15 && waited < 20_000; waited += 5) await sleep(5);
    child.kill();
    const exit = await child.exited;
    expect(exit.signal).toBe('SIGKILL');
    expect(writesSoFar() - base).toBeLessThan(50);

    const store = SqliteStateStore.open(join(project.dir, '.rostersync', 'pipeline.sqlite'), 'pipeline');
    const killed = store.recentRuns(1)[0]!;
    const journal = store.runJournal(killed.id);
    store.close();
    expect(killed.finishedAt).toBeNull();
    // Journaled `sent` before its call (and its wait for the rate limiter): never confirmed.
    expect(journal.filter((entry) => entry.state !== 'done').length).toBeGreaterThan(0);

    const undone = await cli(emu, project.dir, ['revert', project.pipeline, killed.id, '--yes', '--allow-deletes', '50']);
    expect(undone.code, undone.stderr).toBe(0);
    expect(groupRecords(emu)).toEqual(before);
    // And the inventory agrees: the old roster plans nothing.
    await project.writeRoster(people(30));
    const plan = await cli(emu, project.dir, ['plan', project.pipeline]);
    expect(plan.stdout).toContain('No changes');
    expect(person(1).name).toBe('Person 1');
  });
});

describe('revert of a run killed while its create-if-absent read was in flight', () => {
  it('never deletes the record an editor had made by hand: the run had written nothing', { timeout: 60_000 }, async () => {
    // What the roster's p1 maps to, learnt from a pipeline that created it in its own group.
    const scratch = await makeProject([person(1)], { driftSample: 0 });
    expect((await cli(emu, scratch.dir, ['sync', scratch.pipeline, '--create-group'])).code).toBe(0);
    const mapped = structuredClone(groupRecords(emu).p1!);
    // Another group, where an editor added p1 by hand, flagged as conflicted.
    const made = await fetch(`${emu.url}/_emulator/ui/groups`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Editorial picks' }) });
    const groupId = ((await made.json()) as { authors_group_id: number }).authors_group_id;
    const byHand = { ...mapped, [COI]: COI_YES };
    const added = await fetch(`${emu.url}/_emulator/ui/groups/${groupId}/records/p1`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(byHand) });
    expect(added.status).toBe(200);
    const handMade = structuredClone(emu.world.orgs[0]!.groups.get(groupId)!.records.get('p1'));

    const project = await makeProject([person(1)], { driftSample: 0 });
    await writeFile(project.pipeline, (await readFile(project.pipeline, 'utf8')).replace(/target:\n {2}group: .*\n/, `target: { group_id: ${groupId} }\n`));
    // Every call slow: the run is killed while it reads p1 (create-if-absent), after the listing.
    emu.runtime.update({ latencyMs: 2_000 });
    const listings = () => emu.stats.count(LISTING);
    const base = listings();
    const child = pool.take();
    await child.ready;
    await child.run(['sync', project.pipeline], project.dir, emulatorEnv(emu) as Record<string, string>);
    for (let waited = 0; listings() === base && waited < 30_000; waited += 5) await sleep(5);
    await sleep(700);
    child.kill();
    expect((await child.exited).signal).toBe('SIGKILL');
    emu.runtime.update({ latencyMs: 0 });

    const undone = await cli(emu, project.dir, ['revert', project.pipeline, 'last', '--yes']);
    expect(emu.world.orgs[0]!.groups.get(groupId)!.records.get('p1'), `revert exited ${undone.code}: ${undone.stderr}`).toEqual(handMade);
    expect(undone.code).toBe(1);
  });
});

describe('a revert killed part-way, run again as it was typed', () => {
  it('`revert last` finishes undoing the run, never undoes the half-done revert', { timeout: 90_000 }, async () => {
    const project = await makeProject(people(30), { driftSample: 0, maxRps: 40, concurrency: 2, guards: { max_deletes: 100, max_delete_percent: 100 } });
    const first = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(first.code, first.stderr).toBe(0);
    const before = structuredClone(groupRecords(emu));
    await project.writeRoster([...people(20).map((row) => ({ ...row, name: `${row.name} (migrated)` })), ...people(20, 31)]);
    const migrated = await cli(emu, project.dir, ['sync', project.pipeline, '--allow-deletes', '50']);
    expect(migrated.code, migrated.stderr).toBe(0);

    const child = pool.take();
    await child.ready;
    const base = writesSoFar();
    await child.run(['revert', project.pipeline, 'last', '--yes', '--allow-deletes', '50'], project.dir, emulatorEnv(emu) as Record<string, string>);
    for (let waited = 0; writesSoFar() - base < 15 && waited < 20_000; waited += 5) await sleep(5);
    child.kill();
    expect((await child.exited).signal).toBe('SIGKILL');
    expect(writesSoFar() - base).toBeLessThan(50);
    expect(groupRecords(emu)).not.toEqual(before);

    const again = await cli(emu, project.dir, ['revert', project.pipeline, 'last', '--yes', '--allow-deletes', '50']);
    expect(again.code, again.stderr).toBe(0);
    expect(groupRecords(emu)).toEqual(before);
  });
});
