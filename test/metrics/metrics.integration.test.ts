/**
 * The metrics file (src/metrics/) at the end of each way a run can end: read by a real parser of
 * the Prometheus text format (parse-prometheus-text-format, the prom2json shape), held to the
 * naming rules node_exporter's textfile collector and Prometheus expect, and compared value by
 * value with the run's own report.
 */
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/report/types.js';
import { runSync } from '../../src/sync/run-sync.js';
import { parse as parseYaml } from 'yaml';
import { API_KEY, cli, emulator, makeProject, people } from '../support/project.js';
import type { RunningEmulator } from '../../src/emulator/server.js';

type Families = ReturnType<typeof parsePrometheusTextFormat>;
const ALLOWED_LABELS = new Set(['pipeline', 'outcome', 'action', 'kind', 'guard']);

/** Parses the file and checks the rules every rostersync metrics file keeps. */
async function readMetrics(path: string): Promise<Families> {
  const text = await readFile(path, 'utf8');
  const families = parsePrometheusTextFormat(text);
  const names = families.map((f) => f.name);
  expect(new Set(names).size, 'each family once, its samples together').toBe(names.length);
  for (const family of families) {
    expect(family.name).toMatch(/^rostersync_[a-z0-9_]+$/);
    expect(family.help.length).toBeGreaterThan(0);
    expect(['GAUGE', 'COUNTER']).toContain(family.type);
    if (family.type === 'COUNTER') expect(family.name).toMatch(/_total$/);
    else expect(family.name).not.toMatch(/_total$/);
    for (const sample of family.metrics) {
      expect(sample.timestamp_ms, 'the textfile collector refuses timestamps').toBeUndefined();
      expect(Number.isFinite(Number(sample.value)), `${family.name} ${sample.value}`).toBe(true);
      for (const [label, value] of Object.entries(sample.labels ?? {})) {
        expect(ALLOWED_LABELS.has(label), label).toBe(true);
        expect(value).not.toMatch(/@/);
      }
    }
  }
  expect(text).not.toMatch(/@example\.org|Person \d/);
  return families;
}

function value(families: Families, name: string, labels: Record<string, string> = {}): number | undefined {
  const family = families.find((f) => f.name === name);
  const sample = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample === undefined ? undefined : Number(sample.value);
}

/** Every count the file and the report both hold, and the outcome, are equal. */
function expectMatchesReport(families: Families, report: RunReport): void {
  const pipeline = report.pipeline;
  expect(value(families, 'rostersync_last_run_outcome', { pipeline, outcome: report.outcome })).toBe(1);
  const outcomes = families.find((f) => f.name === 'rostersync_last_run_outcome')!.metrics.filter((m) => m.labels?.['pipeline'] === pipeline);
  expect(outcomes.reduce((sum, m) => sum + Number(m.value), 0)).toBe(1);
  expect(value(families, 'rostersync_last_run_exit_code', { pipeline })).toBe(report.exitCode);
  expect(value(families, 'rostersync_last_run_duration_seconds', { pipeline })).toBeCloseTo(report.durationMs / 1000, 3);
  expect(value(families, 'rostersync_last_run_timestamp_seconds', { pipeline })).toBe(Date.parse(report.finishedAt) / 1000);
  for (const action of ['create', 'update', 'delete', 'noop'] as const) {
    for (const outcome of ['done', 'failed', 'skipped', 'planned'] as const) {
      expect(value(families, 'rostersync_last_run_records', { pipeline, action, outcome }), `${action} ${outcome}`).toBe(report.counts[action]?.[outcome] ?? 0);
    }
  }
  expect(value(families, 'rostersync_last_run_rows', { pipeline, kind: 'read' })).toBe(report.input.rowsRead);
  expect(value(families, 'rostersync_last_run_rows', { pipeline, kind: 'rejected' })).toBe(report.input.rejected);
  for (const guard of report.guards.filter((g) => g.tripped)) expect(value(families, 'rostersync_last_run_guard_tripped', { pipeline, guard: guard.guard })).toBe(1);
  const tripped = families.find((f) => f.name === 'rostersync_last_run_guard_tripped')!.metrics.filter((m) => m.labels?.['pipeline'] === pipeline);
  expect(tripped.reduce((sum, m) => sum + Number(m.value), 0)).toBe(new Set(report.guards.filter((g) => g.tripped).map((g) => g.guard)).size);
  if (report.limiter) {
    expect(value(families, 'rostersync_last_run_calls', { pipeline })).toBe(report.limiter['calls']);
    expect(value(families, 'rostersync_last_run_http_requests', { pipeline })).toBe(report.limiter.requests);
    expect(value(families, 'rostersync_last_run_rate_limited_responses', { pipeline })).toBe(report.limiter.rateLimited);
    expect(value(families, 'rostersync_last_run_pace_requests_per_second', { pipeline })).toBeCloseTo(report.limiter.currentRate, 5);
  }
  if (report.drift) {
    expect(value(families, 'rostersync_last_run_drift_records', { pipeline, kind: 'deleted' })).toBe(report.drift.deleted.length);
    expect(value(families, 'rostersync_last_run_drift_records', { pipeline, kind: 'changed' })).toBe(report.drift.changed.length);
  }
}

describe('the metrics file', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await emulator();
  });
  afterAll(() => emu.close());

  it('says each run: success, a guard refusal, a failure, and keeps the last success across them', async () => {
    const project = await makeProject(people(20), { guards: { max_deletes: 2 } });
    const metrics = join(project.dir, 'textfile', 'rostersync.prom');
    await mkdir(join(project.dir, 'textfile'));
    const sync = async (args: string[], env: Record<string, string> = {}) => {
      const run = await cli(emu, project.dir, ['sync', project.pipeline, '--json', '--metrics-file', metrics, ...args], env);
      return { code: run.code, report: run.stdout ? (JSON.parse(run.stdout) as RunReport) : undefined, stderr: run.stderr };
    };

    const first = await sync(['--create-group']);
    expect(first.code, first.stderr).toBe(0);
    let families = await readMetrics(metrics);
    expectMatchesReport(families, first.report!);
    expect(value(families, 'rostersync_last_run_records', { action: 'create', outcome: 'done' })).toBe(20);
    const succeededAt = Date.parse(first.report!.finishedAt) / 1000;
    expect(value(families, 'rostersync_last_success_timestamp_seconds')).toBe(succeededAt);
    // Readable by node_exporter's user: it holds no personal data.
    expect(((await stat(metrics)).mode & 0o777).toString(8)).toBe('644');

    // Mirror mode, 10 rows gone: the deletion guard refuses (exit 3).
    await project.writeRoster(people(10));
    const refused = await sync([]);
    expect(refused.code, refused.stderr).toBe(3);
    families = await readMetrics(metrics);
    expectMatchesReport(families, refused.report!);
    expect(value(families, 'rostersync_last_run_outcome', { outcome: 'refused' })).toBe(1);
    expect(value(families, 'rostersync_last_run_guard_tripped', { guard: 'max_deletes' })).toBe(1);
    expect(value(families, 'rostersync_last_success_timestamp_seconds'), 'kept from the successful run').toBe(succeededAt);

    // A wrong key: the run fails before planning (the report says so, and so does the file).
    const failed = await cli(emu, project.dir, ['sync', project.pipeline, '--metrics-file', metrics], { SERVICE_API_KEY: 'wrong-key-0000000000' });
    expect(failed.code).not.toBe(0);
    families = await readMetrics(metrics);
    expect(value(families, 'rostersync_last_run_outcome', { outcome: 'failed' })).toBe(1);
    expect(value(families, 'rostersync_last_run_exit_code')).toBe(failed.code);
    expect(value(families, 'rostersync_last_success_timestamp_seconds')).toBe(succeededAt);
    expect(value(families, 'rostersync_runs_total', { outcome: 'success' })).toBe(1);
    expect(value(families, 'rostersync_runs_total', { outcome: 'refused' })).toBe(1);
    expect(value(families, 'rostersync_runs_total', { outcome: 'failed' })).toBe(1);

    // The file lost (a new textfile folder, say): the last success comes from the state's run history.
    await rm(metrics);
    const again = await sync([]);
    expect(again.code).toBe(3);
    // The state stamps the run's end with its own reading of the clock: within a second of the report's.
    expect(Math.abs(value(await readMetrics(metrics), 'rostersync_last_success_timestamp_seconds')! - succeededAt)).toBeLessThan(1);
  });

  it('says a run stopped by its deadline, with the records it left for the next run', async () => {
    const project = await makeProject(people(30), { concurrency: 1 });
    const metrics = join(project.dir, 'rostersync.prom');
    // A clock that moves 100 ms each time it is read: the 3 s deadline passes part-way through the writes.
    let t = Date.parse('2026-05-01T03:15:00Z');
    const result = await runSync({
      pipelinePath: project.pipeline,
      service: { baseUrl: emu.url, apiKey: API_KEY },
      createGroup: true,
      maxDurationMs: 3000,
      metricsFile: metrics,
      now: () => (t += 100),
      env: {},
    });
    const report = result.report;
    expect(report.counts.create.skipped ?? 0).toBeGreaterThan(0);
    expect(report.counts.create.done ?? 0).toBeGreaterThan(0);
    const families = await readMetrics(metrics);
    expectMatchesReport(families, report);
    expect(value(families, 'rostersync_last_run_outcome', { outcome: 'partial' })).toBe(1);
    expect(value(families, 'rostersync_last_success_timestamp_seconds'), 'a stopped run is not a success').toBeUndefined();
  });

  it('keeps the series of other pipelines in a shared file, and leaves a file it did not write alone', async () => {
    const a = await makeProject(people(3));
    const metrics = join(a.dir, 'shared.prom');
    await writeFile(join(a.dir, 'other.yaml'), (await readFile(a.pipeline, 'utf8')).replace('Sync test group', 'Other test group'));
    const first = await cli(emu, a.dir, ['sync', a.pipeline, '--create-group', '--metrics-file', metrics]);
    const second = await cli(emu, a.dir, ['sync', join(a.dir, 'other.yaml'), '--create-group', '--metrics-file', metrics]);
    expect([first.code, second.code], first.stderr + second.stderr).toEqual([0, 0]);
    const families = await readMetrics(metrics);
    expect(value(families, 'rostersync_last_run_exit_code', { pipeline: 'pipeline' })).toBe(0);
    expect(value(families, 'rostersync_last_run_exit_code', { pipeline: 'other' })).toBe(0);

    // Several pipelines of one `sync` at once, one file: each run's series land, none is lost.
    const together = join(a.dir, 'together.prom');
    const both = await cli(emu, a.dir, ['sync', a.pipeline, join(a.dir, 'other.yaml'), '--metrics-file', together]);
    expect(both.code, both.stderr).toBe(0);
    const joint = await readMetrics(together);
    expect(value(joint, 'rostersync_runs_total', { pipeline: 'pipeline', outcome: 'success' })).toBe(1);
    expect(value(joint, 'rostersync_runs_total', { pipeline: 'other', outcome: 'success' })).toBe(1);

    const foreign = join(a.dir, 'node.prom');
    await writeFile(foreign, 'node_custom_metric{a="b"} 1\nthis is not a sample\n');
    const run = await cli(emu, a.dir, ['sync', a.pipeline, '--metrics-file', foreign]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('was not replaced');
    expect(await readFile(foreign, 'utf8')).toContain('this is not a sample');
  });

  it('is written by a plan only when asked on the command line, and by a real run from metrics.file', async () => {
    const project = await makeProject(people(4));
    await writeFile(project.pipeline, `${await readFile(project.pipeline, 'utf8')}metrics: { file: pipeline.prom }\n`);
    const metrics = join(project.dir, 'pipeline.prom');
    const plan = await cli(emu, project.dir, ['plan', project.pipeline, '--create-group']);
    expect(plan.code, plan.stderr).toBe(0);
    await expect(stat(metrics)).rejects.toThrow(/ENOENT/);
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expectMatchesReport(await readMetrics(metrics), JSON.parse(run.stdout) as RunReport);
  });

  it('has every metric the example alert rules and dashboard query (docs/examples/)', async () => {
    const project = await makeProject(people(6));
    const metrics = join(project.dir, 'rostersync.prom');
    for (const args of [['--create-group'], []]) {
      const run = await cli(emu, project.dir, ['sync', project.pipeline, '--metrics-file', metrics, ...args]);
      expect(run.code, run.stderr).toBe(0);
    }
    const produced = new Set((await readMetrics(metrics)).map((f) => f.name));
    const examples = new URL('../../docs/examples/', import.meta.url);
    const rules = parseYaml(await readFile(new URL('rostersync-alerts.yaml', examples), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
    const exprs = rules.groups.flatMap((g) => g.rules.map((r) => r.expr));
    expect(rules.groups[0]!.rules.find((r) => r.alert === 'RostersyncNoSuccessfulSync')!.expr).toMatch(/time\(\) - rostersync_last_success_timestamp_seconds > 26 \* 3600/);
    const dashboard = JSON.parse(await readFile(new URL('rostersync-dashboard.json', examples), 'utf8')) as { panels: { targets: { expr: string }[] }[]; templating: { list: { query?: unknown }[] } };
    exprs.push(...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)), ...dashboard.templating.list.map((v) => String(v.query ?? '')));
    const named = new Set(exprs.flatMap((e) => e.match(/rostersync_[a-z0-9_]+/g) ?? []));
    expect(named.size).toBeGreaterThan(8);
    for (const name of named) expect(produced, name).toContain(name);
  });
});
