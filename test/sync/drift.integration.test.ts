/**
 * The drift check of every real run (src/sync/drift.ts): a record deleted or edited in the
 * emulator's UI, or the whole group deleted, is noticed by a normal run, with a seeded random
 * sample so the test knows which records are read back.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/load.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { RunReport } from '../../src/report/types.js';
import { seededRandom } from '../../src/runtime/seeded-random.js';
import { driftSentence } from '../../src/report/format.js';
import { GONE_GROUP_META } from '../../src/state/binding.js';
import { openState } from '../../src/state/open.js';
import { runSync } from '../../src/sync/run-sync.js';
import { API_KEY, emulator, groupRecords, makeProject, people, type Project } from '../support/project.js';

const GET = 'GET /api/external/author-from-group/:group_id/:client_id/';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

let runs = 0;
async function sync(project: Project, extra: { sample?: number; refresh?: 'all' } = {}): Promise<{ exitCode: number; report: RunReport; error?: { message: string; hint?: string } }> {
  const reportDir = join(project.dir, `run-${++runs}`);
  try {
    const result = await runSync({
      pipelinePath: project.pipeline,
      service: { baseUrl: emu.url, apiKey: API_KEY },
      reportDir,
      createGroup: true,
      random: seededRandom(7),
      ...(extra.refresh ? { refresh: extra.refresh } : {}),
    });
    return { exitCode: result.exitCode, report: result.report };
  } catch (error) {
    const report = JSON.parse(await readFile(join(reportDir, 'report.json'), 'utf8')) as RunReport;
    return { exitCode: (error as { exitCode: number }).exitCode, report, error: error as { message: string; hint?: string } };
  }
}

function groupId(): number {
  return [...emu.world.orgs[0]!.groups.values()].find((g) => g.name === 'Sync test group')!.id;
}

const gets = () => Object.values(emu.stats.snapshot().calls[GET] ?? {}).reduce((a, b) => a + b, 0);

async function ui(method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${emu.url}/_emulator/ui/groups/${path}`, { method, ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}) });
  expect(res.status, await res.text()).toBe(200);
}

/** The random sample alone (`drift_cycle: 0`), or with the rotating window every `cycle` runs. */
async function withSample(project: Project, sample: number, cycle = 0): Promise<void> {
  await writeFile(project.pipeline, `${await readFile(project.pipeline, 'utf8')}  drift_sample: ${sample}\n  drift_cycle: ${cycle}\n`);
}

describe('drift check', () => {
  it('reads back drift_sample records on a normal run and finds nothing when nothing drifted', async () => {
    const project = await makeProject(people(30));
    await withSample(project, 4);
    expect((await sync(project)).exitCode).toBe(0);
    const before = gets();
    const run = await sync(project);
    expect(run.exitCode).toBe(0);
    expect(gets() - before).toBe(4);
    expect(run.report.drift).toEqual({ sampled: 4, calls: 4, deleted: [], changed: [] });
    expect(run.report.counts.noop.done).toBe(30);
  });

  it('a record deleted and one edited in the UI are noticed and repaired as --refresh would', async () => {
    // Every record is sampled, so the test knows the deleted and the edited one are among them.
    const project = await makeProject(people(6));
    await withSample(project, 6);
    expect((await sync(project)).exitCode).toBe(0);
    await ui('DELETE', `${groupId()}/records/p2`);
    await ui('POST', `${groupId()}/records/p4`, { name: 'Edited By Hand' });

    const run = await sync(project);
    expect(run.exitCode).toBe(0);
    expect(run.report.drift).toMatchObject({ sampled: 6, deleted: ['p2'], changed: ['p4'] });
    const byId = new Map(run.report.records.map((r) => [r.clientId, r]));
    expect(byId.get('p2')).toMatchObject({ action: 'create', reason: 'remote_deleted', outcome: 'done' });
    expect(byId.get('p4')).toMatchObject({ action: 'update', reason: 'drift', outcome: 'done' });
    expect(groupRecords(emu).p2).toMatchObject({ name: 'Person 2' });
    expect(groupRecords(emu).p4).toMatchObject({ name: 'Person 4' });
    expect(run.report.notes.join('\n')).toContain('drift check: of 6 owned records read back, 1 was deleted (p2) and 1 changed (p4)');

    // The next run finds the group in step again.
    const after = await sync(project);
    expect(after.report.drift).toMatchObject({ deleted: [], changed: [] });
    expect(after.report.records).toHaveLength(0);
  });

  it('a group deleted in the service stops the run before any write, with the recovery steps', async () => {
    const project = await makeProject(people(10));
    await withSample(project, 5);
    expect((await sync(project)).exitCode).toBe(0);
    const id = groupId();
    await ui('DELETE', String(id));
    const writesBefore = emu.stats.snapshot().writes.total;

    const run = await sync(project);
    expect(run.exitCode).toBe(1);
    expect(run.error?.message).toBe(`authors group ${id} looks deleted in the service: the drift check read back 5 owned records, and the service answered 404 for every one. Nothing was written.`);
    expect(run.error?.hint).toContain('--release-owned');
    expect(run.report).toMatchObject({ outcome: 'failed', exitCode: 1 });
    expect(emu.stats.snapshot().writes.total).toBe(writesBefore);
    // The state remembers the group as gone, so that no later hint proposes going back to it.
    const store = openState(loadPipeline(project.pipeline));
    expect(store.getMeta(GONE_GROUP_META)).toBe(String(id));
    store.close();
  });

  it('drift_sample: 0 and drift_cycle: 0 turn it off, and dry runs plan nothing from their sample', async () => {
    const project = await makeProject(people(10));
    expect((await sync(project)).exitCode).toBe(0);
    await ui('DELETE', `${groupId()}/records/p3`);
    const dry = await runSync({ pipelinePath: project.pipeline, service: { baseUrl: emu.url, apiKey: API_KEY }, reportDir: join(project.dir, 'dry'), dryRun: true });
    expect(dry.report.drift).toBeUndefined();
    await withSample(project, 0);
    const before = gets();
    const off = await sync(project);
    expect(gets() - before).toBe(0);
    expect(off.report.drift).toBeUndefined();
    expect(off.report.records).toHaveLength(0);
  });

  it('the rotating window finds a record deleted in the UI within drift_cycle runs, where the sample alone misses it', async () => {
    // 60 records, a sample of 1 (the same seeded pick each run: p9) and a window of 15 a run: p8,
    // near the end in client_id order, is read back by the fourth run's window and no earlier.
    const project = await makeProject(people(60));
    await withSample(project, 1, 4);
    expect((await sync(project)).exitCode).toBe(0);
    await ui('DELETE', `${groupId()}/records/p8`);
    const dry = await runSync({ pipelinePath: project.pipeline, service: { baseUrl: emu.url, apiKey: API_KEY }, reportDir: join(project.dir, 'dry'), dryRun: true, random: seededRandom(7) });
    expect(dry.report.estimate?.driftReads).toBeGreaterThanOrEqual(15);
    expect(dry.report.estimate?.text).toMatch(/after 1[56] drift-check reads/);

    const found: string[][] = [];
    for (let run = 1; run <= 4; run += 1) {
      const before = gets();
      const result = await sync(project);
      expect(result.exitCode).toBe(0);
      const drift = result.report.drift!;
      expect(gets() - before).toBe(drift.calls);
      expect(drift.window).toMatchObject({ read: 15, walked: 15, owned: 60, cycle: 4 });
      found.push(drift.deleted);
      if (run < 4) {
        expect(drift.window).toMatchObject({ passWalked: 15 * run, lastFullPassAt: null });
        expect(result.report.records).toHaveLength(0);
      } else {
        // The pass is complete: the report says when, and p8 was created again.
        expect(drift.window?.lastFullPassAt).toBe(drift.window?.passStartedAt);
        expect(drift.window?.passWalked).toBe(0);
        expect(result.report.records.find((r) => r.clientId === 'p8')).toMatchObject({ action: 'create', reason: 'remote_deleted', outcome: 'done' });
        expect(driftSentence(drift)).toMatch(/rotating window: 15 of 60 owned records, 0 \(0 %\) read back since .* \(all once in 4 runs\), last full pass ended \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
      }
    }
    expect(found).toEqual([[], [], [], ['p8']]);
    expect(groupRecords(emu).p8).toMatchObject({ name: 'Person 8' });
  });

  it('a run refused by a guard reads the same window again next time', async () => {
    const project = await makeProject(people(20));
    await withSample(project, 0, 4);
    expect((await sync(project)).exitCode).toBe(0);
    const first = await sync(project);
    expect(first.report.drift?.window).toMatchObject({ walked: 5, passWalked: 5 });
    // Most of the roster gone: the guards refuse the run, so the window stays where it was.
    const roster = await readFile(join(project.dir, 'roster.csv'), 'utf8');
    await writeFile(join(project.dir, 'roster.csv'), roster.split('\n').slice(0, 6).join('\n') + '\n');
    for (let run = 0; run < 2; run += 1) {
      const refused = await sync(project);
      expect(refused.report.outcome).toBe('refused');
      expect(refused.report.drift?.window).toMatchObject({ walked: 5, passWalked: 10 });
    }
    await writeFile(join(project.dir, 'roster.csv'), roster);
    expect((await sync(project)).report.drift?.window).toMatchObject({ passWalked: 10 });
    expect((await sync(project)).report.drift?.window).toMatchObject({ passWalked: 15 });
  });
});
