/**
 * The run history of a report folder and the retention of old report folders, on real
 * files in a temporary directory.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { combinedIndexPath, HISTORY_DIR, readHistory, whereItRan } from '../../src/report/history.js';
import { parseKeep, pruneReports, runIdTime } from '../../src/report/retention.js';
import { writeReport } from '../../src/report/write.js';
import { aRecord, aReport } from './builders.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1, 3, 0, 0);

function runId(time: number, suffix = 'ab12'): string {
  return `${new Date(time).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${suffix}`;
}

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'rostersync-history-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A report folder as a run leaves it (report.json is what marks it as ours). */
async function reportFolder(name: string): Promise<void> {
  await mkdir(join(root, name), { recursive: true });
  await writeFile(join(root, name, 'report.json'), '{}');
  await writeFile(join(root, name, 'report.html'), '<!doctype html>');
}

describe('parseKeep', () => {
  it.each([
    [30, { runs: 30 }],
    [1, { runs: 1 }],
    ['90d', { days: 90 }],
    ['all', 'all'],
  ] as const)('%j → %j', (value, expected) => {
    expect(parseKeep(value)).toEqual(expected);
  });

  it.each([0, -1, 2.5, '0d', '30', 'forever', '30 d'])('refuses %j', (value) => {
    expect(() => parseKeep(value)).toThrow(/policy\.reports\.keep/);
  });
});

describe('pruneReports', () => {
  it('keeps the newest N run folders and never touches anything it did not write', async () => {
    const names = [0, 1, 2, 3, 4].map((day) => runId(T0 + day * DAY));
    for (const name of names) await reportFolder(name);
    await mkdir(join(root, 'notes'));
    await mkdir(join(root, runId(T0 - DAY, 'ffff'))); // run-id name, no report.json: not ours
    await mkdir(join(root, HISTORY_DIR));

    const removed = await pruneReports({ root, keep: { runs: 2 }, now: T0 + 5 * DAY });

    expect(removed).toEqual(names.slice(0, 3));
    expect((await readdir(root)).sort()).toEqual([runId(T0 - DAY, 'ffff'), ...names.slice(3), HISTORY_DIR, 'notes'].sort());
  });

  it('of runs started in the same second, keeps the one whose report was written last', async () => {
    // The random suffixes sort against the order the runs happened in.
    const [earlier, later, latest] = [runId(T0, 'ffff'), runId(T0, '0000'), runId(T0 + DAY)];
    for (const name of [earlier, later, latest]) await reportFolder(name);
    await utimes(join(root, earlier, 'report.json'), new Date(T0), new Date(T0 + 100));
    await utimes(join(root, later, 'report.json'), new Date(T0), new Date(T0 + 900));

    expect(await pruneReports({ root, keep: { runs: 2 }, now: T0 + DAY })).toEqual([earlier]);
  });

  it('by days: removes folders older than the limit but always keeps the newest run', async () => {
    const old = runId(T0 - 40 * DAY);
    const recent = runId(T0 - 5 * DAY);
    await reportFolder(old);
    await reportFolder(recent);
    expect(await pruneReports({ root, keep: { days: 30 }, now: T0 })).toEqual([old]);
    // Months later, with no run since: the last report stays.
    expect(await pruneReports({ root, keep: { days: 30 }, now: T0 + 300 * DAY })).toEqual([]);
    expect(await readdir(root)).toEqual([recent]);
  });

  it('"all" keeps everything; a missing root is not an error', async () => {
    await reportFolder(runId(T0 - 400 * DAY));
    expect(await pruneReports({ root, keep: 'all', now: T0 })).toEqual([]);
    expect(await pruneReports({ root: join(root, 'nope'), keep: { runs: 1 }, now: T0 })).toEqual([]);
  });

  it('reads the start time from a run id, and nothing from other names', () => {
    expect(runIdTime('20261101T030000Z-ab12')).toBe(T0);
    expect(runIdTime('reports')).toBeUndefined();
    expect(runIdTime('20261101T030000Z')).toBeUndefined();
  });
});

describe('writeReport with a run history', () => {
  const write = (time: number, overrides: Parameters<typeof aReport>[0] = {}, dir?: string) => {
    const id = runId(time);
    return writeReport(aReport({ runId: id, startedAt: new Date(time).toISOString(), finishedAt: new Date(time + 1000).toISOString(), ...overrides }), {
      dir: dir ?? join(root, id),
      env: { GITHUB_ACTIONS: 'true', GITHUB_REPOSITORY: 'org/rosters', GITHUB_RUN_ID: '77' },
      history: { root, keep: { runs: 2 }, now: time + 1000 },
    });
  };

  it('records every run (dry runs too), prunes real syncs and dry runs apart past the policy and rebuilds index.html, all 0600', async () => {
    await write(T0);
    await write(T0 + DAY, { outcome: 'dry_run', dryRun: true });
    // keep: 2 real syncs; the dry run is counted apart.
    expect((await write(T0 + 2 * DAY, { records: [aRecord({ outcome: 'failed', error: 'boom' })], outcome: 'partial' })).pruned).toEqual([]);
    const third = await write(T0 + 2 * DAY + 1000, { records: [aRecord({ outcome: 'failed', error: 'boom' })], outcome: 'partial' });

    expect(third.pruned).toEqual([runId(T0)]);
    expect(third.files.index).toBe(join(root, 'index.html'));
    expect(((await stat(third.files.index!)).mode & 0o777).toString(8)).toBe('600');
    const history = await readHistory(root);
    expect(history.map((run) => [run.runId, run.outcome, run.counts.failures])).toEqual([
      [runId(T0 + 2 * DAY + 1000), 'partial', 1],
      [runId(T0 + 2 * DAY), 'partial', 1],
      [runId(T0 + DAY), 'dry_run', 0],
      [runId(T0), 'success', 0],
    ]);
    expect(history[0]).toMatchObject({ reportDir: runId(T0 + 2 * DAY + 1000), where: expect.stringMatching(/ · GitHub Actions org\/rosters run 77$/) });
    const index = await readFile(third.files.index!, 'utf8');
    expect(index).toContain(`${runId(T0)} (pruned)`);
    expect(index).toContain('Retention (<code>policy.reports.keep</code>): the reports of the last 2 run(s) are kept');
    expect(index).toContain(`<a href="./${runId(T0 + DAY)}/report.html">`);
    // The report links back to the index.
    expect(await readFile(third.files.html, 'utf8')).toContain('<a href="./../index.html">All runs of this pipeline</a>');
  });

  it('keeps no email in the history, even from an error message', async () => {
    await write(T0, { outcome: 'failed', message: 'the service refused ada@example.org' });
    const text = await readFile(join(root, HISTORY_DIR, `${runId(T0)}.json`), 'utf8');
    expect(text).not.toContain('ada@example.org');
    expect(JSON.parse(text).message).toBe('the service refused <email>');
  });

  it('a report folder outside the root (--report-dir) is linked by a relative path and never pruned', async () => {
    const elsewhere = join(root, '..', `${root.split('/').pop()}-latest`);
    try {
      await write(T0, {}, elsewhere);
      await write(T0 + DAY);
      await write(T0 + 2 * DAY);
      const history = await readHistory(root);
      expect(history.at(-1)?.reportDir).toBe(elsewhere);
      expect(await readFile(join(elsewhere, 'report.json'), 'utf8')).toContain(runId(T0));
      expect(await readFile(join(root, 'index.html'), 'utf8')).toContain(`<a href="./../${elsewhere.split('/').pop()}/report.html">`);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('skips a broken history file instead of failing the run, and a history it cannot write is only a warning', async () => {
    await write(T0);
    await writeFile(join(root, HISTORY_DIR, 'broken.json'), '{ not json');
    await writeFile(join(root, HISTORY_DIR, 'foreign.json'), '{"version": 2}');
    expect((await readHistory(root)).map((run) => run.runId)).toEqual([runId(T0)]);

    // The history root is a file: the report is still written, with a warning.
    const blocked = join(root, 'blocked');
    await writeFile(blocked, 'not a directory');
    const written = await writeReport(aReport(), { dir: join(root, 'elsewhere'), env: {}, history: { root: blocked, keep: { runs: 2 }, now: T0 } });
    expect(written.warnings).toEqual([expect.stringMatching(/^Could not update the run history in .*blocked: (EEXIST|ENOTDIR)\.$/)]);
    expect(await readFile(written.files.json, 'utf8')).toContain('"version": 1');
  });
});

describe('whereItRan', () => {
  it.each([
    [{}, 'host1'],
    [{ GITHUB_ACTIONS: 'true', GITHUB_REPOSITORY: 'o/r', GITHUB_RUN_ID: '9' }, 'host1 · GitHub Actions o/r run 9'],
    [{ GITLAB_CI: 'true', CI_JOB_ID: '12' }, 'host1 · GitLab CI job 12'],
    [{ CI: 'true' }, 'host1 · CI'],
  ])('%j → %s', (env, expected) => {
    expect(whereItRan(env, 'host1')).toBe(expected);
  });
});

describe('combinedIndexPath', () => {
  it.each([
    [['/p/reports/a', '/p/reports/b'], '/p/reports/index.html'],
    [['/p/reports/a', '/q/other/b'], '/index.html'],
    [['/p/one/reports/a', '/p/two/reports/b'], '/p/index.html'],
  ])('%j → %s', (roots, expected) => {
    expect(combinedIndexPath(roots)).toBe(expected);
  });
});
