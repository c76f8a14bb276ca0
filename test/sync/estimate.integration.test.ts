/** The estimate counts every call the writes make, create-if-absent included, and the report compares it with the calls made. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { RunReport } from '../../src/report/types.js';
import { API_KEY, cli, emulator, FULL, makeProject, PARTIAL, people } from '../support/project.js';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

const GET = 'GET /api/external/author-from-group/:group_id/:client_id/';
const calls = (route: string) => Object.values(emu.stats.snapshot().calls[route] ?? {}).reduce((sum, n) => sum + n, 0);

describe('the estimate', () => {
  it('counts create-if-absent twice on a first sync into an existing group, and the report says how many calls were made', async () => {
    // A group the pipeline did not create, with one of the roster's records already in it.
    const created = await fetch(`${emu.url}/api/external/authors-group/create/`, {
      method: 'POST',
      headers: { 'X-ApiKey': API_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ group_name: 'Sync test group', owner_team: 'Editorial Office', editor_teams: [], viewer_teams: [] }),
    });
    const { authors_group_id: groupId } = (await created.json()) as { authors_group_id: number };
    const put = await fetch(`${emu.url}/api/external/author-from-group/${groupId}/p1/`, {
      method: 'POST',
      headers: { 'X-ApiKey': API_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Person 1' }),
    });
    expect(put.status).toBe(200);
    await put.text();
    const project = await makeProject(people(5));
    expect((await cli(emu, project.dir, ['state', 'set-group', project.pipeline, String(groupId)])).code).toBe(0);

    const dry = await cli(emu, project.dir, ['sync', project.pipeline, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('10 calls (5 create-if-absent counted twice');

    const reportDir = join(project.dir, 'report');
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--report-dir', reportDir]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(await readFile(join(reportDir, 'report.json'), 'utf8')) as RunReport;
    // Each is read first: p1 existed (GET, then a partial POST adopts it); the four others: GET
    // answered 404, then a full POST. The estimate is exact. (The dry run read p1 back once to
    // confirm the group, in which the pipeline owned nothing yet: the sixth GET.)
    expect(calls(GET)).toBe(5 + 1);
    expect(calls(PARTIAL)).toBe(1);
    expect(calls(FULL) - 1).toBe(4);
    expect(report.estimate).toMatchObject({ calls: 10, ifAbsent: 5, made: 10 });
    expect(report.estimate?.text).toContain('; 10 made');
  });
});
