/**
 * `rostersync sync a.yaml b.yaml …` and `sync DIR`: pipelines run at once against the emulator,
 * each with its own state, report and exit code, one shared rate limiter; the command exits with
 * the worst code and a broken pipeline does not stop the others.
 */
import { copyFile, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors/user-facing-error.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { SharedLimiters, worstExitCode, expandPipelinePaths } from '../../src/sync/run-many.js';
import { RateLimiter } from '../../src/rate-limit/rate-limiter.js';
import { cli, emulator, person } from '../support/project.js';

const MAPPING_FIXTURE = fileURLToPath(new URL('../fixtures/sync/mapping.yaml', import.meta.url));
const HEADER = 'ID,Full name,Email,ORCID,Level,Areas,Reviews';

let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

/** A directory of pipelines `<name>.yaml`, each with its own roster and group; `rows` 0 = an empty roster. */
async function pipelinesDir(specs: Array<{ name: string; rows: number; guards?: string }>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rostersync-many-'));
  await copyFile(MAPPING_FIXTURE, join(dir, 'mapping.yaml'));
  for (const spec of specs) {
    const rows = Array.from({ length: spec.rows }, (_, i) => person(i + 1, { id: `${spec.name}-${i + 1}` }));
    const csv = [HEADER, ...rows.map((r) => [r.id, r.name, r.email, r.orcid, r.level, r.areas, r.reviews].map((v) => v ?? '').join(','))].join('\n');
    await writeFile(join(dir, `${spec.name}.csv`), `${csv}\n`);
    await writeFile(
      join(dir, `${spec.name}.yaml`),
      [
        `source: { file: ${spec.name}.csv }`,
        'mapping: mapping.yaml',
        'target:',
        `  group: { name: Group ${spec.name}, owner_team: Editorial Office }`,
        'policy:',
        '  mode: mirror',
        `  max_rps: 400`,
        ...(spec.guards ? [`  guards: ${spec.guards}`] : []),
        '',
      ].join('\n'),
    );
  }
  return dir;
}

function groupSizes(running: RunningEmulator): Record<string, number> {
  const sizes: Record<string, number> = {};
  for (const group of running.world.orgs[0]!.groups.values()) sizes[group.name] = group.records.size;
  return sizes;
}

describe('sync of several pipelines at once', () => {
  it('runs each with its own state and report, and exits 0 when all succeed', async () => {
    emu = await emulator();
    const dir = await pipelinesDir([
      { name: 'alpha', rows: 12 },
      { name: 'beta', rows: 7 },
      { name: 'gamma', rows: 3 },
    ]);
    const run = await cli(emu, dir, ['sync', 'alpha.yaml', 'beta.yaml', 'gamma.yaml', '--create-group']);
    expect(run.code, run.stderr).toBe(0);
    expect(groupSizes(emu)).toMatchObject({ 'Group alpha': 12, 'Group beta': 7, 'Group gamma': 3 });
    expect(run.stdout).toMatch(/3 pipelines: 3 ok, 0 not · exit 0/);
    for (const name of ['alpha', 'beta', 'gamma']) expect(run.stdout).toMatch(new RegExp(`${name}\\s+done \\(exit 0\\)`));
    // Each its own report folder, and one page linking every pipeline's history.
    expect(existsSync(join(dir, 'reports', 'alpha'))).toBe(true);
    expect(existsSync(join(dir, 'reports', 'gamma'))).toBe(true);
    expect(run.stdout).toMatch(/Run history of all: reports\/index\.html/);
    expect(await readFile(join(dir, 'reports', 'index.html'), 'utf8')).toContain('beta');

    // A directory names the same pipelines; a rerun changes nothing.
    const again = await cli(emu, dir, ['sync', '.', '--json']);
    expect(again.code, again.stderr).toBe(0);
    const body = JSON.parse(again.stdout) as { exitCode: number; pipelines: Array<{ pipeline: string; exitCode: number; report: { counts: Record<string, unknown> } }> };
    expect(body.pipelines.map((p) => p.pipeline)).toEqual(['alpha', 'beta', 'gamma']);
    expect(emu.stats.snapshot().writes.total).toBe(3 + 12 + 7 + 3);
  });

  it("one pipeline's failure does not stop the others; the command exits with the worst code", async () => {
    emu = await emulator();
    const dir = await pipelinesDir([
      { name: 'good', rows: 10 },
      { name: 'shrinking', rows: 20, guards: '{ max_deletes: 2, max_delete_percent: 100, max_source_drop_percent: 100 }' },
    ]);
    expect((await cli(emu, dir, ['sync', dir, '--create-group'])).code).toBe(0);
    // Shrinking now deletes 15 of 20: its guard refuses (3); good adds rows; missing.yaml does not exist (1).
    const shrunk = Array.from({ length: 5 }, (_, i) => person(i + 1, { id: `shrinking-${i + 1}` }));
    await writeFile(join(dir, 'shrinking.csv'), `${[HEADER, ...shrunk.map((r) => [r.id, r.name, r.email, r.orcid, r.level, r.areas, r.reviews].map((v) => v ?? '').join(','))].join('\n')}\n`);
    const more = Array.from({ length: 14 }, (_, i) => person(i + 1, { id: `good-${i + 1}` }));
    await writeFile(join(dir, 'good.csv'), `${[HEADER, ...more.map((r) => [r.id, r.name, r.email, r.orcid, r.level, r.areas, r.reviews].map((v) => v ?? '').join(','))].join('\n')}\n`);

    const run = await cli(emu, dir, ['sync', 'good.yaml', 'shrinking.yaml', 'missing.yaml']);
    expect(run.code).toBe(EXIT.usage);
    expect(groupSizes(emu)).toMatchObject({ 'Group good': 14, 'Group shrinking': 20 });
    expect(run.stdout).toMatch(/good\s+done \(exit 0\)/);
    expect(run.stdout).toMatch(/shrinking\s+refused by a guard, nothing written \(exit 3\)/);
    expect(run.stdout).toMatch(/missing\.yaml\s+error \(exit 1\)/);
    expect(run.stdout).toMatch(/3 pipelines: 1 ok, 2 not · exit 1/);
  });

  it('refuses --report-dir with several pipelines, and an empty directory', async () => {
    emu = await emulator();
    const dir = await pipelinesDir([{ name: 'a', rows: 1 }, { name: 'b', rows: 1 }]);
    const run = await cli(emu, dir, ['sync', 'a.yaml', 'b.yaml', '--report-dir', 'out']);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/--report-dir/);
    const empty = join(dir, 'empty');
    await mkdir(empty);
    expect(() => expandPipelinePaths([empty], dir)).toThrow(/holds no pipeline file/);
  });
});

describe('two files naming one pipeline', () => {
  it('runs neither and names both files, instead of a lock refusal naming this process', async () => {
    emu = await emulator();
    const dir = await pipelinesDir([{ name: 'a', rows: 2 }, { name: 'b', rows: 2 }, { name: 'c', rows: 2 }]);
    for (const file of ['a.yaml', 'b.yaml']) await writeFile(join(dir, file), `name: p\n${await readFile(join(dir, file), 'utf8')}`);
    const run = await cli(emu, dir, ['sync', dir, '--create-group', '--json']);
    expect(run.code).toBe(EXIT.usage);
    const body = JSON.parse(run.stdout) as { pipelines: { pipeline: string; exitCode: number; error?: { message: string } }[] };
    const refused = body.pipelines.filter((p) => p.exitCode === EXIT.usage);
    expect(refused).toHaveLength(2);
    for (const outcome of refused) {
      expect(outcome.error?.message).toBe(`2 pipeline files name the pipeline "p": ${join(dir, 'a.yaml')} and ${join(dir, 'b.yaml')}; none of them was run.`);
    }
    expect(run.stdout).not.toContain('locked by');
    // The other pipeline ran; neither of the two wrote anything.
    expect(groupSizes(emu)).toMatchObject({ 'Group c': 2 });
    expect(Object.keys(groupSizes(emu))).not.toContain('Group a');
    expect(Object.keys(groupSizes(emu))).not.toContain('Group b');
  });
});

describe('shared limiter and exit codes', () => {
  it('one limiter per base URL and API key', () => {
    const made: RateLimiter[] = [];
    const limiters = new SharedLimiters(() => {
      const limiter = new RateLimiter({ now: () => 0, sleep: async () => {} });
      made.push(limiter);
      return limiter;
    });
    const a = limiters.for('http://127.0.0.1:1', 'key-one-123');
    expect(limiters.for('http://127.0.0.1:1/', 'key-one-123')).toBe(a);
    expect(limiters.for('http://127.0.0.1:1', 'key-two-456')).not.toBe(a);
    expect(limiters.for('http://127.0.0.1:2', 'key-one-123')).not.toBe(a);
    expect(made).toHaveLength(3);
  });

  it('the worst exit code: a configuration error outranks a rejected row, service trouble outranks both', () => {
    expect(worstExitCode([])).toBe(EXIT.ok);
    expect(worstExitCode([EXIT.ok, EXIT.partial])).toBe(EXIT.partial);
    expect(worstExitCode([EXIT.partial, EXIT.usage, EXIT.guard])).toBe(EXIT.usage);
    expect(worstExitCode([EXIT.usage, EXIT.unavailable, EXIT.ok])).toBe(EXIT.unavailable);
    expect(worstExitCode([EXIT.failedAfterWrites, EXIT.interrupted])).toBe(EXIT.interrupted);
  });
});
