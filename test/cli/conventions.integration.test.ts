/**
 * The CLI's conventions: help with no arguments, examples, unknown flags named, errors
 * as JSON under --json, -q/-v/--log-level validated, completion, FORCE_COLOR, the emulator's key,
 * and `plan`'s field-by-field diff with --mask and --detailed-exitcode. Against the emulator on
 * 127.0.0.1:0, in-process.
 */
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CommandContext } from '../../src/cli/command.js';
import { useColor } from '../../src/cli/color.js';
import { commandName, lazyCommands } from '../../src/cli/commands/index.js';
import { invokedCommand, logLevelFromFlags, main } from '../../src/cli/main.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { cli, emulator as startTestEmulator, makeProject, people, person } from '../support/project.js';
import { runCli, type CliRun } from '../support/cli.js';

function run(argv: string[], env: NodeJS.ProcessEnv = {}, signal?: AbortSignal): Promise<CliRun> {
  return runCli(argv, { env, ...(signal ? { signal } : {}) });
}

afterEach(() => vi.restoreAllMocks());

describe('command list', () => {
  it.each(lazyCommands.map((entry) => [commandName(entry), entry] as const))('%s: the lazy entry repeats its module exactly', async (_name, entry) => {
    const ctx: CommandContext = { io: { stdout: new PassThrough(), stderr: new PassThrough(), env: {}, cwd: process.cwd() }, setExitCode: () => {} };
    const module = (await entry.load())(ctx);
    expect({ command: module.command, describe: module.describe }).toEqual({ command: entry.command, describe: entry.describe });
  });

  it.each([
    [['sync', 'p.yaml'], 'sync'],
    [['--log-level', 'debug', 'fields'], 'fields'],
    [['-q', 'plan', 'x.yaml'], 'plan'],
    [['--help'], undefined],
    [['--', 'sync'], undefined],
  ])('invokedCommand(%j) is %s', (argv, expected) => {
    expect(invokedCommand(argv)).toBe(expected);
  });
});

describe('help, unknown flags and errors', () => {
  it('prints the command list with examples when no arguments are given, and exits 0', async () => {
    const { code, stdout } = await run([]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/rostersync sync <pipeline/);
    expect(stdout).toContain('rostersync completion');
    expect(stdout).toMatch(/Examples:/);
  });

  it('shows examples in the help of the main commands', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    for (const command of ['sync', 'plan', 'apply', 'validate', 'emulator']) {
      log.mockClear();
      expect((await run([command, '--help'])).code).toBe(0);
      const help = log.mock.calls.map((call) => String(call[0])).join('\n');
      expect(help, command).toMatch(new RegExp(`Examples:[\\s\\S]*rostersync ${command}`));
    }
  });

  it('names an unknown flag even when it swallowed the pipeline argument', async () => {
    const { code, stderr } = await run(['sync', '--dry-run', '--bogus', 'p.yaml']);
    expect(code).toBe(1);
    expect(stderr).toContain('unknown option --bogus');
    expect(stderr).not.toMatch(/non-option arguments/);
  });

  it('names an unknown command and suggests the closest one', async () => {
    const { code, stderr } = await run(['syncc', 'p.yaml']);
    expect(code).toBe(1);
    expect(stderr).toContain('unknown command "syncc"');
    expect(stderr).toContain('Did you mean sync?');
  });

  it('writes errors to stderr as one JSON object under --json', async () => {
    const { code, stdout, stderr } = await run(['fields', '--json'], { SERVICE_BASE_URL: 'http://127.0.0.1:9' });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    const parsed = JSON.parse(stderr) as { error: { message: string; hint?: string; exitCode: number } };
    expect(parsed.error.exitCode).toBe(1);
    expect(parsed.error.message).toMatch(/API key/);
    expect(parsed.error.hint).toBeTruthy();
  });

  it('writes a usage error as JSON too when --json is on the line', async () => {
    const { stderr } = await run(['sync', '--json', '--bogus', 'p.yaml']);
    expect(JSON.parse(stderr)).toMatchObject({ error: { message: 'unknown option --bogus', exitCode: 1 } });
  });

  it('prints a completion script', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    expect((await run(['completion'])).code).toBe(0);
    const script = log.mock.calls.map((call) => String(call[0])).join('\n');
    expect(script).toContain('rostersync --get-yargs-completions');
  });
});

describe('log level flags', () => {
  it.each([
    [{}, undefined],
    [{ quiet: true }, 'error'],
    [{ verbose: 1 }, 'info'],
    [{ verbose: 2 }, 'debug'],
    [{ verbose: 5 }, 'trace'],
    [{ 'log-level': 'warn' }, undefined],
  ])('%j -> %s', (args, level) => {
    expect(logLevelFromFlags(args)).toBe(level);
  });

  it.each([[['-q', '-v']], [['-v', '--log-level', 'info']], [['--quiet', '--log-level', 'error']]])('%j is refused', async (flags) => {
    const { code, stderr } = await run([...flags, 'fields']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/contradict each other/);
  });

  it('refuses a --log-level that is not a level, and a bad ROSTERSYNC_LOG_LEVEL', async () => {
    expect((await run(['--log-level', 'loud', 'fields'])).stderr).toMatch(/log-level.*loud/s);
    const fromEnv = await run(['fields'], { ROSTERSYNC_LOG_LEVEL: 'loud', SERVICE_BASE_URL: 'http://127.0.0.1:9', SERVICE_API_KEY: 'k' });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toMatch(/ROSTERSYNC_LOG_LEVEL "loud" is not a log level/);
  });
});

describe('colour', () => {
  const tty = Object.assign(new PassThrough(), { isTTY: true });
  const pipe = new PassThrough();
  it.each([
    ['a terminal', tty, {}, true],
    ['a pipe', pipe, {}, false],
    ['NO_COLOR on a terminal', tty, { NO_COLOR: '1' }, false],
    ['FORCE_COLOR on a pipe', pipe, { FORCE_COLOR: '1' }, true],
    ['FORCE_COLOR= (empty) on a pipe', pipe, { FORCE_COLOR: '' }, true],
    ['FORCE_COLOR=0 on a terminal', tty, { FORCE_COLOR: '0' }, false],
    ['FORCE_COLOR over NO_COLOR', pipe, { FORCE_COLOR: '2', NO_COLOR: '1' }, true],
  ])('%s', (_name, stream, env, expected) => {
    expect(useColor(stream, env)).toBe(expected);
  });
});

describe('against the emulator', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startTestEmulator();
  });
  afterAll(async () => {
    await emu.close();
  });

  it('`rostersync emulator` prints the API key its fixture accepts', async () => {
    const stop = new AbortController();
    const stdout = new PassThrough();
    let out = '';
    const printed = new Promise<void>((resolve) =>
      stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('X-ApiKey')) resolve();
      }),
    );
    const running = main(['emulator', '--port', '0'], { stdout, stderr: new PassThrough(), env: {}, cwd: process.cwd(), signal: stop.signal });
    await printed;
    stop.abort();
    expect(await running).toBe(0);
    expect(out).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+\n/);
    expect(out).toContain('organization "Demo Editorial Office" accepts X-ApiKey: demo-key-0123456789');
  });

  it('-vv logs each service call at debug level; -q logs none of them', async () => {
    const verbose = await cli(emu, process.cwd(), ['-vv', 'fields']);
    expect(verbose.code).toBe(0);
    expect(verbose.stderr).toContain('service call');
    const quiet = await cli(emu, process.cwd(), ['-q', 'fields']);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toContain('service call');
  });

  it('plan prints a field-by-field diff (old -> new), masks values with --mask, and --detailed-exitcode says 2 then 0', async () => {
    const project = await makeProject(people(3));
    const first = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(first.code, first.stderr).toBe(0);

    await project.writeRoster([person(1, { name: 'Person One Renamed' }), person(2), person(3, { email: 'new3@example.org' }), person(4)]);
    const plan = await cli(emu, project.dir, ['plan', project.pipeline, '--detailed-exitcode']);
    expect(plan.code, plan.stderr).toBe(2);
    expect(plan.stdout).toMatch(/~ update p1 {2}\(changed in the roster; roster\.csv:2\)/);
    expect(plan.stdout).toContain('~ name');
    expect(plan.stdout).toMatch(/name\s+= "Person 1" -> "Person One Renamed"/);
    expect(plan.stdout).toMatch(/emails\s+= \["person3@example\.org"\] -> \["new3@example\.org"\]/);
    expect(plan.stdout).toMatch(/\+ create p4/);
    expect(plan.stdout).toContain('Plan: 1 to create, 2 to update, 0 to delete, 1 unchanged.');

    const masked = await cli(emu, project.dir, ['plan', project.pipeline, '--mask']);
    expect(masked.code).toBe(0);
    expect(masked.stdout).toMatch(/name\s+= \(masked\) -> \(masked\)/);
    expect(masked.stdout).not.toContain('Person One Renamed');
    expect(masked.stdout).not.toContain('example.org');
    expect(masked.stdout).toContain('~ update p1');

    const applied = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(applied.code, applied.stderr).toBe(0);
    const inStep = await cli(emu, project.dir, ['plan', project.pipeline, '--detailed-exitcode']);
    expect(inStep.code, inStep.stderr).toBe(0);
    expect(inStep.stdout).toContain('No changes.');
  });
});
