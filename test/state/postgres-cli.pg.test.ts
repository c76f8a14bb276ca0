/**
 * The PostgreSQL state backend end to end through the CLI, against the emulator and a real
 * PostgreSQL server: explicit migrations, the backend chosen by URL, and moving a pipeline's state
 * from SQLite to PostgreSQL with `state export` / `state import --jsonl` without adopting again.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { postgresForFile } from '../support/postgres-server.js';
import { cli, emulator, groupRecords, makeProject, people, writes } from '../support/project.js';

const server = postgresForFile();
let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

const pgEnv = (url: string) => ({ ROSTERSYNC_STATE_URL: url, PGPASSWORD: server().password });

describe('PostgreSQL state through the CLI', () => {
  it('refuses a run until `state migrate`, then syncs with the state in PostgreSQL', async () => {
    const url = await server().createDatabase('cli');
    const project = await makeProject(people(5));
    const refused = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'], pgEnv(url));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('rostersync state migrate');
    expect(writes(emu).total).toBe(0);

    const migrated = await cli(emu, project.dir, ['state', 'migrate', project.pipeline], pgEnv(url));
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/applied migration 1: /);
    expect(migrated.stdout).not.toContain(server().password);
    const again = await cli(emu, project.dir, ['state', 'migrate', project.pipeline], pgEnv(url));
    expect(again.stdout).toContain('schema already at version');

    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'], pgEnv(url));
    expect(run.code, run.stderr).toBe(0);
    expect(Object.keys(groupRecords(emu))).toHaveLength(5);
    const shown = JSON.parse((await cli(emu, project.dir, ['state', 'show', project.pipeline, '--json'], pgEnv(url))).stdout) as { owned: number; path: string };
    expect(shown.owned).toBe(5);
    expect(shown.path).toContain(`127.0.0.1:${server().port}`);
    // Nothing in the state directory: the state is in the database.
    expect(() => statSync(join(project.dir, '.rostersync', 'pipeline.sqlite'))).toThrow();
    const before = writes(emu).total;
    const rerun = await cli(emu, project.dir, ['sync', project.pipeline], pgEnv(url));
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(writes(emu).total).toBe(before);
  });

  it('refuses a password written in the pipeline file, and a wrong password with a hint', async () => {
    const url = await server().createDatabase('pw');
    const project = await makeProject(people(2));
    const withPassword = url.replace('rostersync@', 'rostersync:secret@');
    writeFileSync(project.pipeline, `${readFileSync(project.pipeline, 'utf8')}state: ${withPassword}\n`);
    const refused = await cli(emu, project.dir, ['state', 'migrate', project.pipeline], { PGPASSWORD: server().password });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('carries a password');
    expect(refused.stderr).not.toContain('secret');

    writeFileSync(project.pipeline, readFileSync(project.pipeline, 'utf8').replace(withPassword, url));
    const wrong = await cli(emu, project.dir, ['state', 'migrate', project.pipeline], { PGPASSWORD: 'not-the-password' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/password/i);
    expect(wrong.stderr).not.toContain('not-the-password');

    // From a password file (a mounted secret), with the URL from the pipeline file.
    const secret = join(project.dir, 'pg-password');
    writeFileSync(secret, `${server().password}\n`, { mode: 0o600 });
    const fromFile = await cli(emu, project.dir, ['state', 'migrate', project.pipeline], { ROSTERSYNC_STATE_PASSWORD_FILE: secret });
    expect(fromFile.code, fromFile.stderr).toBe(0);
  });

  it('moves a pipeline from SQLite to PostgreSQL with export/import: the next run writes nothing', async () => {
    const project = await makeProject(people(12));
    const first = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(first.code, first.stderr).toBe(0);
    // One unconfirmed write travels too: it is written again by the next run.
    const exportFile = join(project.dir, 'state.jsonl');
    const exported = await cli(emu, project.dir, ['state', 'export', project.pipeline, '--out', exportFile]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toContain('exported 12 records');
    expect(statSync(exportFile).mode & 0o777).toBe(0o600);

    const url = await server().createDatabase('moved');
    expect((await cli(emu, project.dir, ['state', 'migrate', project.pipeline], pgEnv(url))).code).toBe(0);
    const imported = await cli(emu, project.dir, ['state', 'import', project.pipeline, '--jsonl', exportFile], pgEnv(url));
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('imported 12 records');
    // Importing twice is refused: the state is not empty any more.
    const twice = await cli(emu, project.dir, ['state', 'import', project.pipeline, '--jsonl', exportFile], pgEnv(url));
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('not empty');

    const sqlite = JSON.parse((await cli(emu, project.dir, ['state', 'show', project.pipeline, '--json'])).stdout) as Record<string, unknown>;
    const postgres = JSON.parse((await cli(emu, project.dir, ['state', 'show', project.pipeline, '--json'], pgEnv(url))).stdout) as Record<string, unknown>;
    expect(postgres.owned).toBe(sqlite.owned);
    expect(postgres.groupId).toBe(sqlite.groupId);
    // The source row of each record is display only and does not travel.
    const essentials = (records: unknown) => (records as { clientId: string; hash: string; runId: string }[]).map(({ clientId, hash, runId }) => ({ clientId, hash, runId }));
    expect(essentials(postgres.records)).toEqual(essentials(sqlite.records));
    expect((postgres.runs as { id: string }[]).map((r) => r.id)).toEqual((sqlite.runs as { id: string }[]).map((r) => r.id));

    const before = writes(emu).total;
    await project.writeRoster([...people(11), { ...people(1, 12)[0]!, name: 'Renamed Twelve' }]);
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--json'], pgEnv(url));
    expect(run.code, run.stderr).toBe(0);
    // Only the one changed record is written: nothing re-adopted, no full POST of the others.
    expect(writes(emu).total - before).toBe(1);
    expect(Object.keys(groupRecords(emu))).toHaveLength(12);
  });

  it('refuses a cut-short export and imports nothing', async () => {
    const project = await makeProject(people(3));
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    const exportFile = join(project.dir, 'state.jsonl');
    expect((await cli(emu, project.dir, ['state', 'export', project.pipeline, '--out', exportFile])).code).toBe(0);
    const lines = readFileSync(exportFile, 'utf8').trimEnd().split('\n');
    writeFileSync(exportFile, `${lines.slice(0, -2).join('\n')}\n`);
    const url = await server().createDatabase('cut');
    expect((await cli(emu, project.dir, ['state', 'migrate', project.pipeline], pgEnv(url))).code).toBe(0);
    const imported = await cli(emu, project.dir, ['state', 'import', project.pipeline, '--jsonl', exportFile], pgEnv(url));
    expect(imported.code).toBe(1);
    expect(imported.stderr).toContain('cut short');
    const shown = JSON.parse((await cli(emu, project.dir, ['state', 'show', project.pipeline, '--json'], pgEnv(url))).stdout) as { owned: number };
    expect(shown.owned).toBe(0);
  });
});
