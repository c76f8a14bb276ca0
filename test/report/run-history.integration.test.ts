/**
 * The run history end to end: the CLI in-process against the emulator on 127.0.0.1:0,
 * each run (dry runs included) joining `reports/<pipeline>/index.html`, and `policy.reports.keep`
 * pruning the oldest report folders.
 */
import { appendFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { readHistory } from '../../src/report/history.js';
import type { RunReport } from '../../src/report/types.js';
import { cli, emulator, makeProject, people, person } from '../support/project.js';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

describe('run history of a pipeline', () => {
  it('records every run, dry runs too, in reports/<pipeline>/index.html and keeps the last policy.reports.keep reports', async () => {
    const project = await makeProject(people(6));
    await appendFile(project.pipeline, '  reports: { keep: 2 }\n');
    const root = join(project.dir, 'reports', 'pipeline');

    const dry = await cli(emu, project.dir, ['sync', project.pipeline, '--dry-run', '--create-group']);
    expect(dry.code, dry.stderr).toBe(0);
    const first = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(first.code, first.stderr).toBe(0);
    await project.writeRoster([...people(5), person(6, { name: 'Person Six Renamed' }), person(7, { name: '' })]);
    const second = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(second.code, second.stderr).toBe(2); // one rejected row

    const history = await readHistory(root);
    expect(history.map((run) => [run.outcome, run.counts.creates, run.counts.updates, run.counts.rejects])).toEqual([
      ['partial', 0, 1, 1],
      ['success', 6, 0, 0],
      ['dry_run', 6, 0, 0],
    ]);
    // keep: 2 counts real syncs and plans apart: a third real sync prunes the first, never the dry run.
    const third = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(third.code, third.stderr).toBe(2);
    const after = await readHistory(root);
    const folders = (await readdir(root)).filter((name) => /^\d{8}T/.test(name));
    expect(folders.sort()).toEqual([after[0]!.runId, after[1]!.runId, history[2]!.runId].sort());
    const index = await readFile(join(root, 'index.html'), 'utf8');
    expect(index).toContain(`${history[1]!.runId} (pruned)`);
    expect(index).toContain(`<a href="./${history[0]!.runId}/report.html">`);
    // The dry run is listed apart, below the real syncs.
    expect(index.indexOf(history[2]!.runId)).toBeGreaterThan(index.indexOf('id="trials"'));

    // The latest report: attempts for successes, the rejected row with its client_id, the limiter in words.
    const report = JSON.parse(await readFile(join(root, history[0]!.runId, 'report.json'), 'utf8')) as RunReport;
    expect(report.records.find((record) => record.clientId === 'p6')).toMatchObject({ outcome: 'done', attempts: 1 });
    expect(report.rejectedRows[0]).toMatchObject({ clientId: 'p7' });
    const html = await readFile(join(root, history[0]!.runId, 'report.html'), 'utf8');
    expect(html).toMatch(/<dt>Rate limiter<\/dt><dd>\d+ requests? in a run of [^<]*per second on average \(limit 500 per second\); the service never answered 429/);
    expect(html).toContain('<a href="./rejected.csv" download>rejected.csv</a>');
  });

  it('says what the rate limiter did in words when the service answers 429', async () => {
    await emu.close();
    emu = await emulator({ rps: 5 });
    const project = await makeProject(people(12));
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code, run.stderr).toBe(0);
    const [latest] = await readHistory(join(project.dir, 'reports', 'pipeline'));
    const folder = join(project.dir, 'reports', 'pipeline', latest!.runId);
    const report = JSON.parse(await readFile(join(folder, 'report.json'), 'utf8')) as RunReport;
    const limiter = report.limiter!;
    expect(limiter.rateLimited).toBeGreaterThan(0);
    const html = await readFile(join(folder, 'report.html'), 'utf8');
    const sentence = /<dt>Rate limiter<\/dt><dd>([^<]*)<\/dd>/.exec(html)?.[1];
    expect(sentence).toContain(`${limiter.requests} requests in a run of`);
    expect(sentence).toContain(`the service answered 429 (too many requests) ${limiter.rateLimited} time`);
    if (limiter.pauses) expect(sentence).toContain(`pausing ${limiter.pauses} time`);
    else expect(sentence).not.toContain('pausing');
  });
});
