/**
 * `policy.duplicate_people` end to end against the emulator: pairs inside the roster (same ORCID,
 * same email) and against the inventory (a new client_id with an owned record's email), reported
 * under `warn`, held back under `reject`.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { RunReport } from '../../src/report/types.js';
import { KEY_ALL_PAIRS } from '../../src/mapping/duplicate-people.js';
import { cli, emulator, groupRecords, makeProject, people, person } from '../support/project.js';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

async function reportOf(stdout: string): Promise<RunReport> {
  const path = /json\s+(\S+report\.json)/.exec(stdout)?.[1];
  expect(path, stdout).toBeDefined();
  return JSON.parse(await readFile(path!, 'utf8')) as RunReport;
}

async function withPolicy(pipeline: string, policy: 'warn' | 'reject'): Promise<void> {
  await writeFile(pipeline, (await readFile(pipeline, 'utf8')).replace('policy:\n', `policy:\n  duplicate_people: ${policy}\n`));
}

const ORCID = '0000-0002-1825-0097';
// p6 is p1 again under another id (same ORCID); p7 is p2 again (same email, other case).
const roster = () => [...people(5), person(1, { id: 'p6', name: 'P. One', email: 'other@example.org', orcid: ORCID }), person(7, { email: 'PERSON2@example.org' })].map((row) => (row.id === 'p1' ? { ...row, orcid: ORCID } : row));

describe('duplicate people', () => {
  it('warn: every record is written, the report lists each pair with its tier and evidence', async () => {
    const project = await makeProject(roster(), { mode: 'upsert' });
    await withPolicy(project.pipeline, 'warn');
    const result = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(result.code, result.stderr).toBe(0);
    expect(Object.keys(groupRecords(emu)).sort()).toEqual(['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']);
    const report = await reportOf(result.stdout);
    expect(report.duplicatePeople?.map((pair) => [pair.tier, pair.a.clientId, pair.b.clientId])).toEqual([
      ['orcid', 'p1', 'p6'],
      ['email', 'p2', 'p7'],
    ]);
    expect(report.duplicatePeople?.[0]?.evidence).toBe(`same ORCID iD ${ORCID}`);
    const markdown = await readFile(/json\s+(\S+)report\.json/.exec(result.stdout)![1]! + 'report.md', 'utf8');
    expect(markdown).toContain('| Same person? | `p1` = `p6` (same orcid), `p2` = `p7` (same email) |');
    expect(markdown).not.toContain('person2@example.org');
  });

  it('reject: the new client_ids of each pair are held back as rejected rows (exit 2)', async () => {
    const project = await makeProject(roster(), { mode: 'upsert' });
    await withPolicy(project.pipeline, 'reject');
    const result = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(result.code, result.stderr).toBe(2);
    // A first run owns nothing: both rows of each pair are new, and all four are held back.
    expect(Object.keys(groupRecords(emu)).sort()).toEqual(['p3', 'p4', 'p5']);
    const report = await reportOf(result.stdout);
    expect(report.rejectedRows.filter((row) => row.problems[0]?.code === 'duplicate_person').map((row) => row.clientId).sort()).toEqual(['p1', 'p2', 'p6', 'p7']);
  });

  it('a placeholder email on more rows than the cap: each row still held back under reject, and the report says the block was compared in part', async () => {
    const shared = Array.from({ length: KEY_ALL_PAIRS + 5 }, (_, i) => person(10 + i, { email: 'none@example.org' }));
    const project = await makeProject([...people(3), ...shared], { mode: 'upsert' });
    await withPolicy(project.pipeline, 'reject');
    const result = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(result.code, result.stderr).toBe(2);
    expect(Object.keys(groupRecords(emu)).sort()).toEqual(['p1', 'p2', 'p3']);
    const report = await reportOf(result.stdout);
    expect(report.duplicatePeople).toHaveLength(KEY_ALL_PAIRS + 4);
    expect(report.rejectedRows.filter((row) => row.problems[0]?.code === 'duplicate_person')).toHaveLength(KEY_ALL_PAIRS + 5);
    const note = report.notes.find((line) => line.includes('in part only'));
    expect(note).toContain(`${KEY_ALL_PAIRS + 5} rows sharing one email, the first at `);
    expect(note).toContain('row 5 (each paired with that first row only)');
    expect(note).not.toContain('none@example.org');
  });

  it('against the inventory: a new client_id with an owned record’s email is held back under reject, the owned one kept', async () => {
    const project = await makeProject(people(3), { mode: 'upsert' });
    await withPolicy(project.pipeline, 'reject');
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    await project.writeRoster([...people(3), person(9, { email: 'person3@example.org' })]);
    const result = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(result.code, result.stderr).toBe(2);
    expect(Object.keys(groupRecords(emu)).sort()).toEqual(['p1', 'p2', 'p3']);
    const report = await reportOf(result.stdout);
    // p3's row is in the roster: the pair is found among the rows, p3 marked as in the group.
    expect(report.duplicatePeople?.map((pair) => [pair.tier, pair.a.clientId, pair.a.owned, pair.b.clientId, pair.b.owned])).toEqual([['email', 'p3', true, 'p9', undefined]]);
    expect(report.rejectedRows.map((row) => row.problems[0]?.message)).toEqual(['probably the same person as p3 (already in the group): same email person3@example.org']);
  });

  it('reject in mirror mode, a person re-keyed (p1 → p100, same name and email): p1 is kept as a pending rename, never deleted', async () => {
    const project = await makeProject(people(3), { mode: 'mirror' });
    await withPolicy(project.pipeline, 'reject');
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    await project.writeRoster([{ ...person(1), id: 'p100' }, person(2), person(3)]);
    const result = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(result.code, result.stderr).toBe(2);
    // The person stays, and the new id waits for the rows to be merged.
    expect(Object.keys(groupRecords(emu)).sort()).toEqual(['p1', 'p2', 'p3']);
    const report = await reportOf(result.stdout);
    expect(report.counts.delete).toEqual({});
    expect(report.duplicatePeople?.map((pair) => [pair.tier, pair.a.clientId, pair.b.clientId, pair.pendingRename])).toEqual([['email', 'p100', 'p1', true]]);
    expect(report.duplicatePeople?.[0]?.evidence).toBe('same email person1@example.org as the owned record p1');
    expect(report.notes.find((line) => line.includes('pending rename'))).toContain('p1 → p100');
    expect(report.rejectedRows.map((row) => [row.clientId, row.problems[0]?.code])).toEqual([['p100', 'duplicate_person']]);
  });

  it('warn in mirror mode, the same re-key: an ordinary rename (p100 created, p1 deleted)', async () => {
    const project = await makeProject(people(3), { mode: 'mirror' });
    await withPolicy(project.pipeline, 'warn');
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    await project.writeRoster([{ ...person(1), id: 'p100' }, person(2), person(3)]);
    const result = await cli(emu, project.dir, ['sync', project.pipeline, '--allow-deletes', '1']);
    expect(result.code, result.stderr).toBe(0);
    expect(Object.keys(groupRecords(emu)).sort()).toEqual(['p100', 'p2', 'p3']);
    const report = await reportOf(result.stdout);
    expect(report.duplicatePeople?.map((pair) => [pair.tier, pair.a.clientId, pair.b.clientId, pair.pendingRename])).toEqual([['email', 'p100', 'p1', undefined]]);
  });
});
