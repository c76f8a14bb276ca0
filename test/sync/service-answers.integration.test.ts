/**
 * Service answers, end to end: sync against an emulator that behaves the inconvenient
 * way (docs/emulator.md, "Quirks"). Each test fails without its fix.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { RunReport } from '../../src/report/types.js';
import { API_KEY, cli, emulator, groupRecords, makeProject, people, person } from '../support/project.js';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

async function reportOf(stdout: string): Promise<{ report: RunReport; markdown: string }> {
  const path = /json\s+(\S+report\.json)/.exec(stdout)?.[1];
  expect(path, stdout).toBeDefined();
  const report = JSON.parse(await readFile(path!, 'utf8')) as RunReport;
  const markdown = await readFile(join(path!, '..', 'report.md'), 'utf8');
  return { report, markdown };
}

/** Creates the test group in the service and pins its id in the pipeline (no group creation in the run). */
async function pinGroup(pipeline: string): Promise<number> {
  const res = await fetch(`${emu.url}/api/external/authors-group/create/`, {
    method: 'POST',
    headers: { 'X-ApiKey': API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify({ group_name: 'Sync test group', owner_team: 'Editorial Office', editor_teams: [], viewer_teams: [] }),
  });
  const { authors_group_id: id } = (await res.json()) as { authors_group_id: number };
  const text = await readFile(pipeline, 'utf8');
  await writeFile(pipeline, text.replace(/^ {2}group: \{.*\}$/m, `  group_id: ${id}`));
  return id;
}

async function setQuirks(body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${emu.url}/_emulator/quirks`, { method: 'POST', body: JSON.stringify(body) });
  expect(res.status).toBe(200);
}

describe('200 with {"ok": false}', () => {
  it('is journaled as failed with nothing written, and planned again on the next run', async () => {
    const project = await makeProject(people(5), { guards: { max_delete_percent: 100 } });
    await pinGroup(project.pipeline);
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);

    // p3 leaves the roster, p6 joins it, p2 changes: the service refuses all three with {"ok": false}.
    await setQuirks({ okFalse: ['p2', 'p3', 'p6'] });
    const rows = [...people(5).filter((r) => r.id !== 'p3'), person(6)];
    rows[1] = { ...rows[1]!, name: 'Person Two-Renamed' };
    await project.writeRoster(rows);
    const refused = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(refused.code, refused.stderr).toBe(2);
    const { report } = await reportOf(refused.stdout);
    const byId = new Map(report.records.map((r) => [r.clientId, r]));
    for (const id of ['p2', 'p3', 'p6']) {
      expect(byId.get(id)?.outcome, id).toBe('failed');
      expect(byId.get(id)?.error, id).toMatch(/"ok": false/);
    }
    expect(groupRecords(emu).p3).toBeDefined();
    expect(groupRecords(emu).p6).toBeUndefined();
    expect(groupRecords(emu).p2?.name).toBe('Person 2');

    // The service accepts them again: the next run plans and performs all three.
    await setQuirks({ okFalse: [] });
    const again = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(again.code, again.stderr).toBe(0);
    const second = (await reportOf(again.stdout)).report;
    expect(second.counts.delete.done).toBe(1);
    expect(second.counts.create.done).toBe(1);
    expect(second.counts.update.done).toBe(1);
    expect(groupRecords(emu).p3).toBeUndefined();
    expect(groupRecords(emu).p6).toMatchObject({ name: 'Person 6' });
    expect(groupRecords(emu).p2?.name).toBe('Person Two-Renamed');
  });
});

describe('a group deleted in the service UI', () => {
  it('is reported once as "group N no longer exists", not as one 404 per record', async () => {
    const project = await makeProject(people(8), { concurrency: 1 });
    await pinGroup(project.pipeline);
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    const org = emu.world.orgs[0]!;
    const group = [...org.groups.values()].find((g) => g.name === 'Sync test group')!;
    org.groups.delete(group.id);

    await project.writeRoster([...people(8).map((r) => ({ ...r, name: `${r.name} (new)` })), person(9), person(10)]);
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code, run.stderr).toBe(2);
    const { report, markdown } = await reportOf(run.stdout);
    expect(report.message).toContain(`group ${group.id} no longer exists`);
    expect(report.records.filter((r) => r.outcome === 'failed')).toEqual([]);
    expect(markdown.split(`group ${group.id} no longer exists`).length - 1).toBe(1);
    expect(markdown).not.toMatch(/answered 404/);
    // It stopped at the first sign (one worker): one record carries the reason, the rest were not tried.
    expect(report.records.filter((r) => r.error).map((r) => r.error)).toEqual([`not written: group ${group.id} no longer exists`]);
    expect(report.records.every((r) => r.outcome === 'skipped')).toBe(true);
  });
});

describe('multi-option values are sets of option ids', () => {
  const AREAS = '1c7e8b4f-2d3e-4f60-9bac-1d2e3f4a5b62';
  const WRITES = (route: string) => Object.values(emu.stats.snapshot().calls[route] ?? {}).reduce((a, b) => a + b, 0);
  const allWrites = () => emu.stats.snapshot().writes.total;

  it('a service answering options in its own order is no change, run after run of --refresh=all', async () => {
    const rows = people(6).map((r, i) => ({ ...r, areas: i % 2 ? 'Oncology; Genetics; Statistics' : 'Statistics; Cardiology' }));
    const project = await makeProject(rows);
    await pinGroup(project.pipeline);
    expect((await cli(emu, project.dir, ['sync', project.pipeline])).code).toBe(0);
    await setQuirks({ optionOrder: 'service' });
    for (let run = 0; run < 2; run++) {
      const before = allWrites();
      const refreshed = await cli(emu, project.dir, ['sync', project.pipeline, '--refresh=all']);
      expect(refreshed.code, refreshed.stderr).toBe(0);
      expect(allWrites() - before, `run ${run + 1}`).toBe(0);
    }
    expect(WRITES('GET /api/external/author-from-group/:group_id/:client_id/')).toBeGreaterThan(0);
  });

  it('a reordered roster cell is no change', async () => {
    const rows = people(4).map((r) => ({ ...r, areas: 'Oncology; Genetics' }));
    const project = await makeProject(rows);
    await pinGroup(project.pipeline);
    expect((await cli(emu, project.dir, ['sync', project.pipeline])).code).toBe(0);
    const stored = groupRecords(emu).p1?.[AREAS];
    await project.writeRoster(rows.map((r) => ({ ...r, areas: 'Genetics ; Oncology' })));
    const before = allWrites();
    const again = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(again.code, again.stderr).toBe(0);
    expect(allWrites() - before).toBe(0);
    expect(groupRecords(emu).p1?.[AREAS]).toEqual(stored);
  });
});

describe('a custom field of a kind the spec does not list', () => {
  it('is listed by `fields` and ignored by `sync` when the mapping does not use it', async () => {
    await setQuirks({ unknownKindField: true });
    const project = await makeProject(people(3));
    await pinGroup(project.pipeline);
    const fields = await cli(emu, project.dir, ['fields']);
    expect(fields.code, fields.stderr).toBe(0);
    expect(fields.stdout).toMatch(/Notes \(rich text\)\s+rich_text\s+00000000-0000-4000-8000-0000000000ff/);
    const run = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(run.code, run.stderr).toBe(0);
    expect(Object.keys(groupRecords(emu))).toHaveLength(3);
  });

  it('mapped, it is a configuration error naming the field, and nothing is written', async () => {
    await setQuirks({ unknownKindField: true });
    const project = await makeProject(people(3));
    await pinGroup(project.pipeline);
    const mapping = join(project.dir, 'mapping.yaml');
    await writeFile(mapping, `${await readFile(mapping, 'utf8')}  Notes (rich text): { column: Reviews }\n`);
    const before = emu.stats.snapshot().writes.total;
    const run = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/mapping\.yaml/);
    expect(run.stderr).toContain('custom field "Notes (rich text)" has data_kind "rich_text", which rostersync cannot write');
    expect(emu.stats.snapshot().writes.total).toBe(before);
  });
});

describe('client_ids a URL path cannot carry', () => {
  it('are rejected by validate naming the row, and never sent to a strict service', async () => {
    await setQuirks({ strictClientIds: true });
    const long = `L${'x'.repeat(300)}`;
    const rows = [person(1, { id: 'a/b' }), person(2), person(3, { id: long }), person(4, { id: '..' }), person(5)];
    const project = await makeProject(rows);
    await pinGroup(project.pipeline);
    const validate = await cli(emu, project.dir, ['validate', project.pipeline]);
    expect(validate.code, validate.stdout).toBe(2);
    expect(validate.stdout).toMatch(/roster\.csv row 2, column "ID", value "a\/b": client_id contains "\/"/);
    expect(validate.stdout).toMatch(/roster\.csv row 4, column "ID", value "Lx+…?": client_id is 301 characters long; the service accepts at most 255/);
    expect(validate.stdout).toMatch(/roster\.csv row 5, column "ID", value "\.\.": client_id "\.\." is resolved away in a URL path/);

    const run = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(run.code, run.stderr).toBe(2);
    expect(Object.keys(groupRecords(emu)).sort()).toEqual(['p2', 'p5']);
    // Only the two good ids reached the record routes with a full POST (a strict server 404s the others).
    expect(emu.stats.snapshot().calls['POST /api/external/author-from-group/:group_id/:client_id/']).toEqual({ '200': 2 });
  });
});

describe('the API key echoed back by the service', () => {
  it('is redacted, in any case and encoding, from the console, the logs and every report file', async () => {
    await setQuirks({ echoKey: true, okFalse: ['p2'] });
    const project = await makeProject(people(3));
    await pinGroup(project.pipeline);
    const run = await cli(emu, project.dir, ['sync', project.pipeline], { ROSTERSYNC_LOG_LEVEL: 'debug' });
    expect(run.code).toBe(2);
    const { report } = await reportOf(run.stdout);
    expect(report.records.find((r) => r.clientId === 'p2')?.error).toContain('refused for key [redacted]');
    const dir = join(/json\s+(\S+report\.json)/.exec(run.stdout)![1]!, '..');
    const files = await Promise.all(['report.json', 'report.md', 'report.html'].map((name) => readFile(join(dir, name), 'utf8')));
    for (const text of [run.stdout, run.stderr, ...files]) {
      expect(text.toLowerCase()).not.toContain(API_KEY.toLowerCase());
      expect(text.toLowerCase()).not.toContain(encodeURIComponent(API_KEY).toLowerCase());
    }
  });
});
