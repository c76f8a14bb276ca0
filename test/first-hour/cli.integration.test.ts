/**
 * What a new user meets in their first hour, each driven through the CLI as they would type it:
 * the exact message and the exit code. In-process against the emulator on 127.0.0.1:0.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EXIT_CODES_LINE } from '../../src/cli/main.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { SELF_IGNORE } from '../../src/personal-data/private-dir.js';
import { cli, emulator as startEmulator, makeProject, people } from '../support/project.js';
import { emulatorEnv, runCli } from '../support/cli.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(async () => {
  await emu.close();
});

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('typos get a suggestion from the list of what exists', () => {
  it('an unknown mapping key names the schema key it is closest to', async () => {
    const project = await makeProject(people(2));
    const mapping = join(project.dir, 'mapping.yaml');
    await writeFile(mapping, `${await readFile(mapping, 'utf8')}duplicates: reject\n`);
    const run = await cli(emu, project.dir, ['validate', project.pipeline]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: ${mapping}: duplicates: unknown key "duplicates" (line 11); did you mean "duplicate_client_ids"?\n`);
  });

  it('an unknown pipeline key, nested or not, is named with the key it is closest to', async () => {
    const project = await makeProject(people(2));
    await writeFile(project.pipeline, (await readFile(project.pipeline, 'utf8')).replace('  mode: mirror', '  mod: mirror') + 'report_dri: out\n');
    const run = await cli(emu, project.dir, ['validate', project.pipeline]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('  - policy.mod: unknown key "mod" (line 6); did you mean "mode"?\n');
    expect(run.stderr).toContain('  - report_dri: unknown key "report_dri" (line 12); did you mean "report_dir"?\n');
  });

  it('an unknown option names the option it is closest to', async () => {
    const run = await runCli(['sync', 'pipelines/demo.yaml', '--dryrun']);
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: unknown option --dryrun; did you mean --dry-run?\nhint: Run `rostersync sync --help` to see the options it takes.\n',
    });
  });
});

describe('a command without its argument', () => {
  it('`rostersync sync` alone says a pipeline file is needed and shows a line that works', async () => {
    const run = await runCli(['sync']);
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: rostersync sync needs a pipeline file (the roster, its mapping and the target group)\n' +
        'hint: For example `rostersync sync pipelines/reviewers.yaml`; `rostersync sync --help` lists its options.\n',
    });
  });
});

describe('author put and patch take names, as author get prints them', () => {
  it('writes a custom field and an option given by name, and get prints them back by name', async () => {
    const env = emulatorEnv(emu);
    const put = await runCli(['author', 'put', '501', 'first-hour', '--data', JSON.stringify({ name: 'Ada Okafor', Availability: 'Busy' })], { env });
    expect(put).toMatchObject({ code: 0, stdout: 'author "first-hour" in group 501 written (full replace)\n' });
    const patch = await runCli(['author', 'patch', '501', 'first-hour', '--data', '{"availability": "on leave"}'], { env });
    expect(patch).toMatchObject({ code: 0, stdout: 'author "first-hour" in group 501 updated\n' });
    const get = await runCli(['author', 'get', '501', 'first-hour'], { env });
    expect(get.stdout).toContain('custom fields:\n  Availability: On leave\n');
    const stored = emu.world.orgs[0]!.groups.get(501)!.records.get('first-hour') as Record<string, unknown>;
    expect(stored['8e3f4b0a-8394-45c6-b102-7d8e9fa0b1c8']).toBe('9e5c4d0a-0005-4e00-8000-000000000003');
  });

  it('refuses a field or an option it does not know, with the nearest name', async () => {
    const env = emulatorEnv(emu);
    const field = await runCli(['author', 'patch', '501', 'first-hour', '--data', '{"Availabilty": "Busy"}'], { env });
    expect(field).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: unknown field "Availabilty"; did you mean "Availability"?\n' +
        'hint: Use a standard field (name, emails, orcids, articles, affiliations) or a custom field\'s name or api_id; `rostersync fields` lists them.\n',
    });
    const option = await runCli(['author', 'patch', '501', 'first-hour', '--data', '{"Availability": "Bussy"}'], { env });
    expect(option).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: field "Availability" has no option "Bussy"; did you mean "Busy"?\nhint: Its options: Available, Busy, On leave.\n',
    });
  });
});

describe('stderr: one format per mode', () => {
  it('off a terminal every stderr line of a failed sync is a JSON line, the error last with its hint and exit code', async () => {
    const project = await makeProject(people(2));
    const run = await runCli(['sync', project.pipeline], { cwd: project.dir, env: emulatorEnv(emu, { ROSTERSYNC_LOG_FORMAT: undefined }) });
    expect(run.code).toBe(1);
    const lines = run.stderr.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.at(-1)).toMatchObject({ level: 50, msg: expect.stringContaining('knows no group id'), hint: expect.stringContaining('--create-group'), exitCode: 1 });
  });

  it('with human lines (a terminal) no stderr line is JSON', async () => {
    const project = await makeProject(people(2));
    const run = await runCli(['sync', project.pipeline], { cwd: project.dir, env: emulatorEnv(emu, { ROSTERSYNC_LOG_FORMAT: 'human', NO_COLOR: '1' }) });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: pipeline "pipeline" names the group "Sync test group", but its state/m);
    expect(run.stderr).not.toMatch(/^\{/m);
  });

  it('a format that does not exist is a usage error', async () => {
    const run = await runCli(['fields'], { env: emulatorEnv(emu, { ROSTERSYNC_LOG_FORMAT: 'xml' }) });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr)).toMatchObject({ level: 50, msg: 'ROSTERSYNC_LOG_FORMAT "xml" is not a format.', exitCode: 1 });
  });
});

describe('completion and help', () => {
  it("completion after `sync --` offers sync's own options", async () => {
    // yargs prints completions with console.log, as the shell's completion function reads them.
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const run = await runCli(['--get-yargs-completions', 'rostersync', 'sync', '--']);
    expect(run.code).toBe(0);
    const offered = log.mock.calls.map((call) => String(call[0]));
    log.mockRestore();
    expect(offered).toEqual(expect.arrayContaining(['--dry-run', '--create-group', '--allow-deletes', '--report-dir', '--log-level']));
  });

  it("help's exit-code line names every code of the README's table", async () => {
    const run = await runCli(['--help']);
    expect(run.code).toBe(0);
    const start = README.indexOf('\n## Exit codes\n');
    expect(start).toBeGreaterThan(0);
    const end = README.indexOf('\n## ', start + 1);
    const table = README.slice(start, end < 0 ? undefined : end);
    const codes = [...table.matchAll(/^\| (\d+) \|/gm)].map((match) => match[1]!);
    expect(codes).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '130']);
    for (const code of codes) expect(EXIT_CODES_LINE).toMatch(new RegExp(`[ :]${code} `));
  });
});

describe('personal data stays out of git', () => {
  it('the state and report folders a first run creates ignore themselves; git status stays clean of them', async () => {
    const project = await makeProject(people(2));
    execFileSync('git', ['init', '-q', project.dir]);
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code, run.stderr).toBe(0);
    expect(await readFile(join(project.dir, '.rostersync', '.gitignore'), 'utf8')).toBe(SELF_IGNORE);
    expect(await readFile(join(project.dir, 'reports', '.gitignore'), 'utf8')).toBe(SELF_IGNORE);
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: project.dir, encoding: 'utf8' });
    expect(status.split('\n').filter(Boolean).sort()).toEqual(['?? mapping.yaml', '?? pipeline.yaml', '?? roster.csv']);
  });

  it('a report that cannot be written goes to a fallback folder of its own user, never to one prepared by someone else', async () => {
    const project = await makeProject(people(2));
    const blocker = join(project.dir, 'not-a-folder');
    await writeFile(blocker, '');
    const temp = await mkdtemp(join(tmpdir(), 'rostersync-tmpdir-'));
    const before = process.env.TMPDIR;
    process.env.TMPDIR = temp; // os.tmpdir() reads it on each call
    try {
      const root = join(temp, `rostersync-reports-${process.getuid!()}`);
      const sync = (args: string[]) => cli(emu, project.dir, ['sync', project.pipeline, '--report-dir', join(blocker, 'run'), ...args]);
      const first = await sync(['--create-group']);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toContain(`warning: Could not write the report to ${join(blocker, 'run')}: `);
      const written = new RegExp(`It was written to (${root}/pipeline/\\S+) instead`).exec(first.stderr)?.[1];
      expect(written, first.stderr).toBeDefined();
      expect(existsSync(join(written!, 'report.json'))).toBe(true);
      expect(statSync(root).mode & 0o777).toBe(0o700);

      await chmod(root, 0o755); // as if another user had made it first
      const second = await sync([]);
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`fallback ${root}/pipeline/`);
      expect(second.stderr).toContain(`: ${root} is not a folder of this user closed to others (owner ${process.getuid!()}, mode 755).`);
    } finally {
      process.env.TMPDIR = before;
      if (before === undefined) delete process.env.TMPDIR;
      await rm(temp, { recursive: true, force: true });
    }
  });
});
