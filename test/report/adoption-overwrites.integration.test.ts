/**
 * An adoption (create-if-absent over a record that exists in the group) that replaces values the
 * service held in managed fields is called out in the report with the old values; one whose
 * managed fields already held the roster's values is not. Against the emulator, through the CLI.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { renderHtml } from '../../src/report/html.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { maskReport } from '../../src/report/mask.js';
import type { RunReport } from '../../src/report/types.js';
import { API_KEY, cli, emulator as startEmulator, groupRecords, makeProject, person, writes, type Project } from '../support/project.js';

let running: RunningEmulator;
let project: Project;
const projects: Project[] = [];

async function call(path: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${running.url}${path}`, { method: 'POST', headers: { 'X-ApiKey': API_KEY, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return res.json();
}

/** Someone filled a group before rostersync: p1 with a name typed in the UI, p2 as the roster has it. */
async function filledGroup(): Promise<Project> {
  const { authors_group_id: groupId } = (await call('/api/external/authors-group/create/', { group_name: 'Sync test group', owner_team: 'Editorial Office', editor_teams: [], viewer_teams: [] })) as { authors_group_id: number };
  await call(`/api/external/author-from-group/${groupId}/p1/`, { name: 'Dr. P. One (prefers email)', emails: ['person1@example.org'] });
  const made = await makeProject([person(1, { level: '', areas: '', reviews: '' }), person(2, { level: '', areas: '', reviews: '' }), person(3, { level: '', areas: '', reviews: '' })]);
  await call(`/api/external/author-from-group/${groupId}/p2/`, { name: 'Person 2', emails: ['person2@example.org'] });
  expect((await cli(running, made.dir, ['state', 'set-group', made.pipeline, String(groupId)])).code).toBe(0);
  projects.push(made);
  return made;
}

beforeAll(async () => {
  running = await startEmulator();
  project = await filledGroup();
});

afterAll(async () => {
  await running.close();
  for (const made of projects) await rm(made.dir, { recursive: true, force: true });
});

describe('adoptions that overwrite values set in the service', () => {
  it('are listed with the old value; an adoption that changes no value is not listed', async () => {
    const before = writes(running).total;
    const run = await cli(running, project.dir, ['sync', project.pipeline, '--report-dir', 'out']);
    expect(run.code, run.stderr).toBe(0);
    expect(groupRecords(running)['p1']!['name']).toBe('Person 1');
    // p1 and p2: one partial POST each (adopted); p3: one full POST after a GET answered 404.
    expect(writes(running).total - before).toBe(3);
    const report = JSON.parse(await readFile(join(project.dir, 'out', 'report.json'), 'utf8')) as { records: { clientId: string; adopted?: boolean; overwritten?: unknown }[]; notes: string[] };
    const byId = Object.fromEntries(report.records.map((record) => [record.clientId, record]));
    expect(byId['p1']).toMatchObject({ adopted: true, overwritten: [{ field: 'name', label: expect.any(String), before: 'Dr. P. One (prefers email)', after: 'Person 1' }] });
    expect(byId['p2']).toMatchObject({ adopted: true });
    expect(byId['p2']!.overwritten).toBeUndefined();
    expect(byId['p3']!.adopted).toBeUndefined();
    expect(report.notes.join('\n')).toMatch(/1 adoption overwrote values the service held in managed fields.*p1 \(/);
    const html = await readFile(join(project.dir, 'out', 'report.html'), 'utf8');
    expect(html).toContain('Adoptions that overwrote values');
    expect(html).toContain('Dr. P. One (prefers email)');
  });

  it('report.md names the record and field; masked (as --mask writes it), no file holds the values', async () => {
    // `--mask` is a plan option and a plan adopts nothing: the masking of a real sync's report is checked.
    const made = await filledGroup();
    const run = await cli(running, made.dir, ['sync', made.pipeline, '--report-dir', 'out']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(await readFile(join(made.dir, 'out', 'report.json'), 'utf8')) as RunReport;
    expect(await readFile(join(made.dir, 'out', 'report.md'), 'utf8')).toMatch(/1 adoption overwrote values the service held in managed fields.*p1 \(name\)/);
    const masked = maskReport(report);
    expect(masked.records.find((record) => record.clientId === 'p1')?.overwritten).toEqual([{ field: 'name', label: expect.any(String), before: '(masked)', after: '(masked)' }]);
    const html = renderHtml(masked);
    expect(html).toContain('Adoptions that overwrote values');
    for (const text of [JSON.stringify(masked), html, renderMarkdown(masked)]) expect(text).not.toContain('Dr. P. One');
  });
});
