/**
 * `policy.update: full` against the emulator: a changed record is a `replace` (its own action in
 * the plan), sent as one full POST, shown as `~ replace` by `plan`, listed as a replace in
 * report.json and counted among the updates there and in the metrics; `revert` undoes it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { RunReport } from '../../src/report/types.js';
import { cli, emulator, FULL, groupRecords, makeProject, PARTIAL, people, person, type Project } from '../support/project.js';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

async function syncJson(project: Project, flags: string[] = []): Promise<RunReport> {
  const run = await cli(emu, project.dir, ['sync', project.pipeline, '--json', ...flags]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as RunReport;
}

const calls = (route: string) => Object.values(emu.stats.snapshot().calls[route] ?? {}).reduce((a, b) => a + b, 0);

it('a changed record under update: full is a replace: one full POST, planned, reported, counted and reverted as such', async () => {
  const project = await makeProject(people(3), { update: 'full', driftSample: 0 });
  await syncJson(project, ['--create-group']);
  await project.writeRoster([person(1, { name: 'Person One Renamed' }), person(2), person(3)]);

  const planned = await cli(emu, project.dir, ['plan', project.pipeline]);
  expect(planned.code, planned.stderr).toBe(0);
  expect(planned.stdout).toContain('~ replace p1  (changed in the roster; roster.csv:2)');
  expect(planned.stdout).toContain('Plan: 0 to create, 1 to update, 0 to delete, 2 unchanged.');

  const [full, partial] = [calls(FULL), calls(PARTIAL)];
  const metrics = join(project.dir, 'metrics.prom');
  const report = await syncJson(project, ['--metrics-file', metrics]);
  expect([calls(FULL) - full, calls(PARTIAL) - partial]).toEqual([1, 0]);
  expect(report.records.map((record) => [record.clientId, record.action, record.outcome])).toEqual([['p1', 'replace', 'done']]);
  expect(report.counts).toEqual({ create: {}, update: { done: 1 }, delete: {}, noop: { done: 2 } });
  const prom = await readFile(metrics, 'utf8');
  expect(prom).toMatch(/rostersync_last_run_records\{pipeline="[^"]+",action="update",outcome="done"\} 1\n/);
  expect(prom).not.toContain('action="replace"');
  expect(groupRecords(emu).p1!.name).toBe('Person One Renamed');

  const reverted = await cli(emu, project.dir, ['revert', project.pipeline, report.runId, '--yes']);
  expect(reverted.code, reverted.stderr).toBe(0);
  expect(groupRecords(emu).p1!.name).toBe('Person 1');
});
