/**
 * The sync engine end to end: the CLI in-process, the emulator over real
 * HTTP on 127.0.0.1:0, a throw-away project per test.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { loadPipeline } from '../../src/config/load.js';
import { openState } from '../../src/state/open.js';
import type { RunReport } from '../../src/report/types.js';
import { API_KEY, cli, DELETE, emulator, FULL, groupRecords, makeProject, PARTIAL, people, person, writes } from '../support/project.js';
import { emulatorEnv, runCli } from '../support/cli.js';

const LEVEL = '0b6f7a3e-1c2d-4e5f-8a9b-0c1d2e3f4a51';
const REVIEWS = '2d8f9c5a-3e4f-4071-8cbd-2e3f4a5b6c73';
const NOTES = '4f0b1e7c-5061-4293-8edf-4a5b6c7d8e95';
const EXPERT = '5a1e0f6c-0001-4a00-8000-000000000003';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

const calls = (route: string) => Object.values(writes(emu).byRoute[route] ?? {}).reduce((a, b) => a + b, 0);

async function reportOf(stdout: string): Promise<RunReport> {
  const path = /json\s+(\S+report\.json)/.exec(stdout)?.[1];
  expect(path, stdout).toBeDefined();
  return JSON.parse(await readFile(path!, 'utf8')) as RunReport;
}

async function groupId(): Promise<number> {
  const group = [...emu.world.orgs[0]!.groups.values()].find((g) => g.name === 'Sync test group');
  return group!.id;
}

async function postDirect(path: string, body: unknown): Promise<void> {
  const res = await fetch(`${emu.url}${path}`, { method: 'POST', headers: { 'X-ApiKey': API_KEY, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
}

describe('sync', () => {
  it('creates every valid record, and an immediate rerun makes zero write calls', async () => {
    const project = await makeProject(people(25));
    const first = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(first.code, first.stderr).toBe(0);
    expect(Object.keys(groupRecords(emu))).toHaveLength(25);
    expect(groupRecords(emu).p2).toMatchObject({ name: 'Person 2', emails: ['person2@example.org'], [LEVEL]: EXPERT, [REVIEWS]: 2 });
    const report = await reportOf(first.stdout);
    expect(report.counts.create.done).toBe(25);
    expect(calls(FULL)).toBe(25);

    const before = writes(emu).total;
    const second = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(second.code, second.stderr).toBe(0);
    expect(writes(emu).total - before).toBe(0);
    expect((await reportOf(second.stdout)).counts.noop.done).toBe(25);
  });

  it('sends exactly k partial POSTs carrying only the changed fields, and keeps fields the roster does not manage', async () => {
    const rows = people(20);
    const project = await makeProject(rows);
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    const gid = await groupId();
    // An editor sets a field in the UI that the mapping does not manage.
    await postDirect(`/api/external/author-from-group/${gid}/p2/partial/`, { [NOTES]: 'prefers short papers' });

    rows[1] = { ...rows[1]!, reviews: '42' };
    rows[4] = { ...rows[4]!, name: 'Person Five-Renamed' };
    rows[9] = { ...rows[9]!, email: '' };
    await project.writeRoster(rows);
    const partialBefore = calls(PARTIAL);
    const fullBefore = calls(FULL);
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code, run.stderr).toBe(0);
    expect(calls(PARTIAL) - partialBefore).toBe(3);
    expect(calls(FULL) - fullBefore).toBe(0);
    const report = await reportOf(run.stdout);
    const changed = Object.fromEntries(report.records.map((r) => [r.clientId, r.changes.map((c) => c.field)]));
    expect(changed).toEqual({ p2: [REVIEWS], p5: ['name'], p10: ['emails'] });
    const records = groupRecords(emu);
    expect(records.p2).toMatchObject({ [REVIEWS]: 42, [NOTES]: 'prefers short papers' });
    expect(records.p5!.name).toBe('Person Five-Renamed');
    expect(records.p10!.emails).toBeNull();
  });

  it('deletes records gone from the roster in mirror mode, and only lists them as orphans in upsert mode', async () => {
    const mirror = await makeProject(people(30), { mode: 'mirror' });
    expect((await cli(emu, mirror.dir, ['sync', mirror.pipeline, '--create-group'])).code).toBe(0);
    await mirror.writeRoster(people(28));
    const run = await cli(emu, mirror.dir, ['sync', mirror.pipeline, '--create-group']);
    expect(run.code, run.stderr).toBe(0);
    expect(calls(DELETE)).toBe(2);
    expect(Object.keys(groupRecords(emu)).sort()).toEqual(people(28).map((p) => p.id).sort());

    const emu2 = emu;
    emu = await emulator();
    await emu2.close();
    const upsert = await makeProject(people(30), { mode: 'upsert' });
    expect((await cli(emu, upsert.dir, ['sync', upsert.pipeline, '--create-group'])).code).toBe(0);
    await upsert.writeRoster(people(28));
    const kept = await cli(emu, upsert.dir, ['sync', upsert.pipeline, '--create-group']);
    expect(kept.code, kept.stderr).toBe(0);
    expect(calls(DELETE)).toBe(0);
    expect(Object.keys(groupRecords(emu))).toHaveLength(30);
    expect((await reportOf(kept.stdout)).orphans.sort()).toEqual(['p29', 'p30']);
  });

  it('refuses an empty roster and a truncated roster with exit 3 and zero deletes; the allow flags let them through', async () => {
    const project = await makeProject(people(40));
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    const before = writes(emu).total;

    await project.writeRoster([]);
    const empty = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(empty.code).toBe(3);
    expect(empty.stdout).toContain('--allow-empty-source');
    const emptyReport = await reportOf(empty.stdout);
    expect(emptyReport.outcome).toBe('refused');
    expect(emptyReport.guards.filter((g) => g.tripped).map((g) => g.guard)).toEqual(['empty_source', 'max_deletes']);

    await project.writeRoster(people(15));
    const truncated = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(truncated.code).toBe(3);
    const refused = await reportOf(truncated.stdout);
    expect(refused.guards.find((g) => g.guard === 'max_deletes')).toMatchObject({ tripped: true, allowWith: '--allow-deletes 25' });
    expect(refused.guards.find((g) => g.guard === 'source_drop')).toMatchObject({ tripped: true, allowWith: '--allow-source-drop' });
    // Dry runs run the guards exactly as real runs.
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group', '--dry-run'])).code).toBe(3);
    expect(writes(emu).total).toBe(before);

    const tooFew = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group', '--allow-deletes', '24', '--allow-source-drop']);
    expect(tooFew.code).toBe(3);
    const allowed = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group', '--allow-deletes', '25', '--allow-source-drop']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(calls(DELETE)).toBe(25);
    expect(Object.keys(groupRecords(emu))).toHaveLength(15);
  });

  it('refuses a stale saved plan, naming the binding that changed, and applies a fresh one', async () => {
    const project = await makeProject(people(10));
    const planFile = join(project.dir, 'plan.json');
    const plan = await cli(emu, project.dir, ['plan', project.pipeline, '--create-group', '--out', planFile]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(writes(emu).total).toBe(0);
    await project.writeRoster(people(11));
    const stale = await cli(emu, project.dir, ['apply', planFile]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/stale: the source file content changed/);
    expect(writes(emu).total).toBe(0);

    expect((await cli(emu, project.dir, ['plan', project.pipeline, '--create-group', '--out', planFile])).code).toBe(0);
    const applied = await cli(emu, project.dir, ['apply', planFile]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(Object.keys(groupRecords(emu))).toHaveLength(11);
    // Applying the same plan twice is refused: the inventory moved on.
    const again = await cli(emu, project.dir, ['apply', planFile]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('the state inventory');
  });

  it('refuses a concurrent run with the lock owner, and `unlock` clears it', async () => {
    const project = await makeProject(people(5));
    const store = openState(loadPipeline(project.pipeline));
    store.acquireLock('other-run', 'night-operator');
    store.close();
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('locked by run other-run: night-operator on');
    expect(run.stderr).toContain(`pid ${process.pid}`);
    expect(writes(emu).total).toBe(0);
    const unlock = await cli(emu, project.dir, ['unlock', project.pipeline]);
    expect(unlock.code).toBe(0);
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
  });

  it('repairs drift with --refresh: a field edited in the UI and a record deleted remotely', async () => {
    const project = await makeProject(people(6));
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    const gid = await groupId();
    await postDirect(`/api/external/author-from-group/${gid}/p1/partial/`, { [REVIEWS]: 99 });
    const del = await fetch(`${emu.url}/api/external/author-from-group/${gid}/p2/`, { method: 'DELETE', headers: { 'X-ApiKey': API_KEY } });
    expect(del.status).toBe(200);

    // Without --refresh the inventory says nothing changed.
    const blind = await cli(emu, project.dir, ['plan', project.pipeline, '--create-group']);
    expect((await reportOf(blind.stdout)).records).toHaveLength(0);

    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group', '--refresh=all']);
    expect(run.code, run.stderr).toBe(0);
    const report = await reportOf(run.stdout);
    const byId = Object.fromEntries(report.records.map((r) => [r.clientId, r]));
    expect(byId.p1).toMatchObject({ action: 'update', reason: 'drift' });
    expect(byId.p1!.changes).toEqual([{ field: REVIEWS, label: 'Reviews completed', before: 1, after: 1, remote: 99 }]);
    expect(byId.p2).toMatchObject({ action: 'create', reason: 'remote_deleted' });
    expect(groupRecords(emu).p1![REVIEWS]).toBe(1);
    expect(groupRecords(emu).p2).toBeDefined();
  });

  it('calls out a changed client_id as a delete plus a create', async () => {
    const rows = people(12);
    const project = await makeProject(rows);
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    rows[0] = { ...rows[0]!, id: 'legacy-1' };
    await project.writeRoster(rows);
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code, run.stderr).toBe(0);
    const report = await reportOf(run.stdout);
    expect(report.records.map((r) => [r.clientId, r.action, r.reason, r.pairedWith])).toEqual([
      ['legacy-1', 'create', 'client_id_changed', 'p1'],
      ['p1', 'delete', 'client_id_changed', 'legacy-1'],
    ]);
    expect(report.notes.join('\n')).toContain('client_id changed: p1 → legacy-1');
  });

  it('stops after an unfinished group creation instead of creating a second group', async () => {
    const project = await makeProject(people(3));
    const store = openState(loadPipeline(project.pipeline));
    store.recordGroupIntent('Sync test group');
    store.close();
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('never learned whether it was created');
    expect(run.stderr).toContain('rostersync state set-group');
    expect(calls('POST /api/external/authors-group/create/')).toBe(0);
    expect((await cli(emu, project.dir, ['state', 'set-group', project.pipeline, '--clear'])).code).toBe(0);
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
  });

  it('stops gracefully on a signal (exit 130, report written) and the next run finishes the job', async () => {
    await emu.close();
    emu = await emulator({ latencyMs: 30 });
    const project = await makeProject(people(60), { concurrency: 2 });
    const controller = new AbortController();
    // The signal comes mid-apply: after a few writes landed (not after a fixed time, which a loaded
    // machine may spend before the first call).
    const poll = setInterval(() => {
      if (writes(emu).total >= 6) {
        clearInterval(poll);
        controller.abort();
      }
    }, 2);
    const stopped = await runCli(['sync', project.pipeline, '--create-group'], { cwd: project.dir, env: emulatorEnv(emu), signal: controller.signal });
    expect(stopped.code).toBe(130);
    const report = await reportOf(stopped.stdout);
    expect(report.outcome).toBe('interrupted');
    const done = report.counts.create.done ?? 0;
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(60);
    expect(Object.keys(groupRecords(emu))).toHaveLength(done);

    const rest = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(rest.code, rest.stderr).toBe(0);
    expect((await reportOf(rest.stdout)).counts.create.done).toBe(60 - done);
    expect(Object.keys(groupRecords(emu))).toHaveLength(60);
  });

  it('stops starting calls at --max-duration and leaves the rest for the next run', async () => {
    await emu.close();
    emu = await emulator({ latencyMs: 30 });
    const project = await makeProject(people(60), { concurrency: 2 });
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group', '--max-duration', '0.4s']);
    expect(run.code, run.stderr).toBe(0);
    const report = await reportOf(run.stdout);
    expect(report.counts.create.skipped).toBeGreaterThan(0);
    const rest = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(rest.code).toBe(0);
    expect(Object.keys(groupRecords(emu))).toHaveLength(60);
  });

  it('writes report files that parse and match the calls the emulator saw', async () => {
    const project = await makeProject([...people(8), person(9, { orcid: '0000-0002-1825-0098' })]);
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    // The valid records are synced; the rejected row makes the run say so with exit 2.
    expect(run.code).toBe(2);
    const report = await reportOf(run.stdout);
    expect(report).toMatchObject({ outcome: 'partial', exitCode: 2 });
    expect(report.message).toContain('1 row rejected');
    expect(report.input).toMatchObject({ rowsRead: 9, valid: 8, rejected: 1 });
    expect(report.counts.create.done).toBe(calls(FULL));
    expect(report.records.every((r) => r.outcome === 'done' && r.httpStatus === 200)).toBe(true);
    const dir = /json\s+(\S+)\/report\.json/.exec(run.stdout)![1]!;
    const { stat } = await import('node:fs/promises');
    for (const file of ['report.json', 'records.jsonl', 'report.md', 'report.html', 'rejected.csv']) {
      expect(((await stat(join(dir, file))).mode & 0o777).toString(8)).toBe('600');
    }
    // records.jsonl: every record, one a line, as report.json lists them (all of them, in a run this small).
    expect(report.recordsFile).toBe('records.jsonl');
    const lines = (await readFile(join(dir, 'records.jsonl'), 'utf8')).trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual(report.records);
    expect(lines).toHaveLength(8);
    expect(await readFile(join(dir, 'rejected.csv'), 'utf8')).toContain('0000-0002-1825-0098');
    expect(await readFile(join(dir, 'report.md'), 'utf8')).toContain('create');
    expect(await readFile(join(dir, 'report.html'), 'utf8')).toContain('<html');
  });

  // policy.rejects: known-bad rows within the tolerance keep the nightly job green (exit 0, outcome
  // `warning`, words an admin reads right) and are still listed; without it the run exits 2.
  // Over it, see 'policy.rejects is a ceiling' below.
  it.each([
    { rejects: undefined, bad: 1, code: 2, outcome: 'partial', words: 'DONE, 1 ROW REJECTED' },
    { rejects: '{ max_count: 2 }', bad: 2, code: 0, outcome: 'warning', words: 'DONE, 2 ROWS REJECTED' },
    { rejects: '{ max_percent: 20 }', bad: 2, code: 0, outcome: 'warning', words: 'DONE, 2 ROWS REJECTED' },
  ])('policy.rejects $rejects with $bad bad rows of 10: exit $code, outcome $outcome', async ({ rejects, bad, code, outcome, words }) => {
    const rows = [...people(10 - bad), ...Array.from({ length: bad }, (_, i) => person(20 + i, { orcid: '0000-0002-1825-0098' }))];
    const project = await makeProject(rows);
    if (rejects) await writeFile(project.pipeline, `${await readFile(project.pipeline, 'utf8')}  rejects: ${rejects}\n`);
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code, run.stderr).toBe(code);
    expect(run.stdout).toContain(`: ${words} (exit ${code})`);
    const report = await reportOf(run.stdout);
    expect(report).toMatchObject({ outcome, exitCode: code, input: { rejected: bad } });
    expect(report.rejectedRows).toHaveLength(bad);
    expect(report.message).toContain(rejects ? (code === 0 ? 'within the tolerance' : 'over the tolerance') : 'rejected and not synced');
    const dir = /json\s+(\S+)\/report\.json/.exec(run.stdout)![1]!;
    expect((await readFile(join(dir, 'rejected.csv'), 'utf8')).split('\n').filter((line) => line.includes('0000-0002-1825-0098'))).toHaveLength(bad);
    expect(await readFile(join(dir, 'report.md'), 'utf8')).toContain(words.toLowerCase());
    // A dry run with the same roster exits as the real run would.
    const dry = await cli(emu, project.dir, ['sync', project.pipeline, '--dry-run']);
    expect(dry.code).toBe(code);
    // So do a drift check (the valid rows are in step now: only the rejects count) and validate.
    const drift = await cli(emu, project.dir, ['plan', project.pipeline, '--mask', '--detailed-exitcode']);
    expect(drift.code, drift.stdout + drift.stderr).toBe(code);
    const validated = await cli(emu, project.dir, ['validate', project.pipeline]);
    expect(validated.code, validated.stdout + validated.stderr).toBe(code);
    expect(validated.stdout).toContain(rejects ? (code === 0 ? 'within the tolerance' : 'over the tolerance') : 'rejected and not synced');
  });

  // Over policy.rejects nothing is written (Census and Data Loader stop at their error limit):
  // exit 3 in plan, dry run, validate and the real run; --allow-rejects N goes on, as within it.
  it.each([
    { rejects: '{ max_count: 2 }', bad: 3 },
    { rejects: '{ max_count: 5, max_percent: 10 }', bad: 2 },
  ])('policy.rejects $rejects is a ceiling before writing: $bad bad rows of 10 write nothing, exit 3', async ({ rejects, bad }) => {
    const rows = [...people(10 - bad), ...Array.from({ length: bad }, (_, i) => person(20 + i, { orcid: '0000-0002-1825-0098' }))];
    const project = await makeProject(rows);
    await writeFile(project.pipeline, `${await readFile(project.pipeline, 'utf8')}  rejects: ${rejects}\n`);
    const before = writes(emu).total;
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stdout).toContain('REFUSED BY A GUARD');
    expect(run.stdout + run.stderr).toContain(`--allow-rejects ${bad}`);
    expect(writes(emu).total).toBe(before);
    expect(await reportOf(run.stdout)).toMatchObject({ outcome: 'refused', exitCode: 3, input: { rejected: bad } });
    for (const argv of [['sync', project.pipeline, '--dry-run', '--create-group'], ['plan', project.pipeline, '--create-group'], ['validate', project.pipeline]]) {
      const other = await cli(emu, project.dir, argv);
      expect(other.code, `${argv[0]} ${other.stdout}${other.stderr}`).toBe(3);
    }
    expect(writes(emu).total).toBe(before);
    const allowed = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group', '--allow-rejects', String(bad)]);
    expect(allowed.code, allowed.stderr).toBe(2);
    expect(await reportOf(allowed.stdout)).toMatchObject({ outcome: 'partial', input: { valid: 10 - bad, rejected: bad } });
    expect(Object.keys(groupRecords(emu))).toHaveLength(10 - bad);
  });

  it('writes a failed report when the service refuses the key before planning (exit 4, nothing written)', async () => {
    const project = await makeProject(people(3));
    const reportDir = join(project.dir, 'failed-report');
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group', '--report-dir', reportDir], { SERVICE_API_KEY: 'wrong-key-000000' });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('401');
    const report = JSON.parse(await readFile(join(reportDir, 'report.json'), 'utf8')) as RunReport;
    expect(report).toMatchObject({ outcome: 'failed', exitCode: 4 });
    expect(JSON.stringify(report)).not.toContain('wrong-key-000000');
    expect(writes(emu).total).toBe(0);
  });

  it('reports the attempts each write took when the service fails now and then', async () => {
    await emu.close();
    emu = await emulator({ faults: { status503: 0.3 }, seed: 7 });
    const project = await makeProject(people(30));
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code, run.stderr).toBe(0);
    const report = await reportOf(run.stdout);
    expect(report.records.every((r) => r.outcome === 'done')).toBe(true);
    const retried = report.records.filter((r) => (r.attempts ?? 1) > 1);
    expect(retried.length).toBeGreaterThan(0);
    const full = emu.stats.snapshot().calls[FULL] ?? {};
    expect(report.records.reduce((sum, r) => sum + (r.attempts ?? 1), 0)).toBe(Object.values(full).reduce((a, b) => a + b, 0));
  });

  it('never deletes the record of a row rejected for its values, in mirror mode', async () => {
    const rows = people(30);
    const project = await makeProject(rows, { mode: 'mirror' });
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    rows[4] = { ...rows[4]!, level: 'Guru' };
    await project.writeRoster(rows);
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code, run.stderr).toBe(2);
    expect(calls(DELETE)).toBe(0);
    expect(groupRecords(emu).p5).toBeDefined();
    const report = await reportOf(run.stdout);
    expect(report.records).toEqual([]);
    expect(report.input.rejected).toBe(1);
  });

  it('refuses deletes while some rejected rows have no readable client_id', async () => {
    const rows = people(30);
    const project = await makeProject(rows, { mode: 'mirror' });
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    rows[4] = { ...rows[4]!, id: '' };
    await project.writeRoster(rows.slice(0, 29));
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code).toBe(3);
    const report = await reportOf(run.stdout);
    expect(report.guards.find((g) => g.guard === 'unreadable_rows')).toMatchObject({ tripped: true, allowWith: '--allow-deletes 2' });
    expect(calls(DELETE)).toBe(0);
  });

  it('recreates a record whose delete was sent but never confirmed when the roster brings it back', async () => {
    const project = await makeProject(people(10));
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    // A mirror run sent DELETE p5 and was killed before recording it; the service did delete it.
    const store = openState(loadPipeline(project.pipeline));
    store.journalSent('killed-run', 'p5', 'delete');
    store.close();
    const del = await fetch(`${emu.url}/api/external/author-from-group/${await groupId()}/p5/`, { method: 'DELETE', headers: { 'X-ApiKey': API_KEY } });
    expect(del.status).toBe(200);

    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code, run.stderr).toBe(0);
    expect((await reportOf(run.stdout)).records).toEqual([expect.objectContaining({ clientId: 'p5', action: 'create', reason: 'retry_failed', outcome: 'done' })]);
    expect(groupRecords(emu).p5).toMatchObject({ name: 'Person 5' });
    const again = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect((await reportOf(again.stdout)).records).toEqual([]);
  });

  it('does not delete a replaced record when the create of its new client_id failed', async () => {
    const rows = people(12);
    const project = await makeProject(rows);
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    rows[0] = { ...rows[0]!, id: 'legacy-1' };
    await project.writeRoster(rows);
    // The service fails every call for a while; the custom fields come from a saved listing.
    const fields = join(project.dir, 'fields.json');
    const listing = await fetch(`${emu.url}/api/external/custom-fields/all/`, { headers: { 'X-ApiKey': API_KEY } });
    await writeFile(fields, await listing.text());
    // The same service (same port, same world) now failing: the state is bound to this base URL.
    const { port } = emu;
    await emu.close();
    emu = await emulator({ world: emu.world, port, faults: { status500: 1 } });
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group', '--fields-file', fields]);
    expect(run.code).toBe(2);
    expect(calls(FULL)).toBeGreaterThan(0);
    expect(calls(DELETE)).toBe(0);
    const report = await reportOf(run.stdout);
    expect(report.records.find((r) => r.clientId === 'p1')).toMatchObject({ action: 'delete', outcome: 'skipped' });
    expect(groupRecords(emu).p1).toBeDefined();
  });
});
