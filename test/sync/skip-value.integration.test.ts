/**
 * `on_invalid: skip_value` end to end against the emulator: a row whose ORCID cell is invalid is
 * synced without it. The record keeps the ORCID the service holds, both when the run creates it
 * (a record that already existed in the group is adopted) and when it updates it; its other fields
 * sync; the warning names the cell in report.json, report.html and rejected.csv; and the run is not
 * "partial", since no row was rejected.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { API_KEY, cli, emulator, groupRecords, makeProject, person, writes, type Project } from '../support/project.js';

const CARBERRY = '0000-0002-1825-0097';
const OTHER = '0000-0001-5109-3700';
/** Carberry's iD with its check digit off by one. */
const TYPO = '0000-0002-1825-0098';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

async function call(path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${emu.url}${path}`, { method: 'POST', headers: { 'X-ApiKey': API_KEY, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** A pipeline on a group made in the service beforehand, holding p1 with Carberry's ORCID: the pipeline owns nothing yet. */
async function projectOnExistingGroup(): Promise<Project> {
  const project = await makeProject([]);
  const { authors_group_id: groupId } = await call('/api/external/authors-group/create/', { group_name: 'Sync test group', owner_team: 'Editorial Office', editor_teams: [], viewer_teams: [] });
  await call(`/api/external/author-from-group/${String(groupId)}/p1/`, { name: 'Person One', orcids: [CARBERRY], emails: ['old@example.org'] });
  await writeFile(project.pipeline, (await readFile(project.pipeline, 'utf8')).replace(/^ {2}group: \{.*\}$/m, `  group_id: ${String(groupId)}`));
  const mapping = join(project.dir, 'mapping.yaml');
  await writeFile(mapping, (await readFile(mapping, 'utf8')).replace('transforms: [orcid] }', 'transforms: [orcid], on_invalid: skip_value }'));
  return project;
}

interface Report {
  outcome: string;
  exitCode: number;
  input: { rejected: number };
  warnings?: { provenance: { row: number }; clientId: string; problems: { code: string; column: string; value: string; message: string }[] }[];
}

async function sync(project: Project, name: string): Promise<{ code: number; report: Report; html: string; csv: string; stdout: string }> {
  const dir = join(project.dir, name);
  const run = await cli(emu, project.dir, ['sync', project.pipeline, '--report-dir', dir]);
  const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as Report;
  const csv = await readFile(join(dir, 'rejected.csv'), 'utf8').catch(() => '');
  return { code: run.code, report, html: await readFile(join(dir, 'report.html'), 'utf8'), csv, stdout: run.stdout };
}

it('an invalid ORCID is skipped: the service keeps its ORCID on create and on update, the rest syncs, and the warning is reported', async () => {
  const project = await projectOnExistingGroup();

  // Create: p1 exists in the group (not owned), its roster ORCID has a typo; p2 is new.
  await project.writeRoster([person(1, { name: 'Person One Renamed', email: 'one@example.org', orcid: TYPO }), person(2, { orcid: OTHER })]);
  const first = await sync(project, 'r1');
  // The console says a value was skipped, naming the row, not the value.
  expect(first.stdout).toMatch(/warning: 1 invalid value skipped \(on_invalid: skip_value\) in row \d+/);
  expect(first.stdout).not.toContain(TYPO);
  expect(first.code).toBe(0);
  expect(first.report.outcome).toBe('success');
  expect(first.report.input.rejected).toBe(0);
  let records = groupRecords(emu);
  expect(records.p1).toMatchObject({ name: 'Person One Renamed', emails: ['one@example.org'], orcids: [CARBERRY] });
  expect(records.p2).toMatchObject({ orcids: [OTHER] });
  expect(first.report.warnings).toHaveLength(1);
  const [warned] = first.report.warnings!;
  expect(warned).toMatchObject({ clientId: 'p1', provenance: { row: 2 } });
  expect(warned!.problems[0]).toMatchObject({ code: 'invalid_orcid', column: 'ORCID', value: TYPO });
  expect(warned!.problems[0]!.message).toMatch(/skip_value.*keeps its orcids/);
  expect(first.html).toContain('id="warnings"');
  expect(first.html).toContain(TYPO);
  const lines = first.csv.replace(/^\uFEFF/, '').trim().split('\r\n');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toMatch(/^p1,Person One Renamed,/);
  expect(lines[1]).toContain('warning:invalid_orcid');

  // Update: p2's ORCID gets a typo and its name changes; p1 is unchanged.
  await project.writeRoster([person(1, { name: 'Person One Renamed', email: 'one@example.org', orcid: TYPO }), person(2, { name: 'Person Two Renamed', orcid: '0000-0001-5109-3701' })]);
  const second = await sync(project, 'r2');
  expect(second.code).toBe(0);
  records = groupRecords(emu);
  expect(records.p2).toMatchObject({ name: 'Person Two Renamed', orcids: [OTHER] });
  expect(records.p1).toMatchObject({ name: 'Person One Renamed', orcids: [CARBERRY] });
  expect(second.report.warnings?.map((w) => w.clientId)).toEqual(['p1', 'p2']);

  // Same roster again: nothing to write, and the warnings are reported again (the rows took no fast path).
  const before = writes(emu).total;
  const third = await sync(project, 'r3');
  expect(third.code).toBe(0);
  expect(writes(emu).total).toBe(before);
  expect(third.report.warnings?.map((w) => w.clientId)).toEqual(['p1', 'p2']);

  // The inventory claims no ORCID it did not write: fixing p1's cell to the value the service
  // already holds is still sent (p1's ORCID was never written by this pipeline), and p2's too.
  await project.writeRoster([person(1, { name: 'Person One Renamed', email: 'one@example.org', orcid: CARBERRY }), person(2, { name: 'Person Two Renamed', orcid: CARBERRY })]);
  const fourth = await sync(project, 'r4');
  expect(fourth.code).toBe(0);
  expect(fourth.report.warnings).toBeUndefined();
  records = groupRecords(emu);
  expect(records.p2).toMatchObject({ orcids: [CARBERRY] });
  expect(writes(emu).total).toBe(before + 2);
});

it('reject_row (the default) still rejects the whole row and exits 2', async () => {
  const project = await projectOnExistingGroup();
  const mapping = join(project.dir, 'mapping.yaml');
  await writeFile(mapping, (await readFile(mapping, 'utf8')).replace(', on_invalid: skip_value', ''));
  await project.writeRoster([person(1, { name: 'Person One Renamed', orcid: TYPO }), person(2)]);
  const run = await sync(project, 'r1');
  expect(run.code).toBe(2);
  expect(run.report.input.rejected).toBe(1);
  expect(groupRecords(emu).p1).toMatchObject({ name: 'Person One', orcids: [CARBERRY] });
});
