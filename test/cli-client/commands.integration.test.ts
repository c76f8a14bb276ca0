import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { EXIT } from '../../src/errors/user-facing-error.js';
import { DEMO_API_KEY as KEY, runCli } from '../support/cli.js';

const run = (argv: string[], env: NodeJS.ProcessEnv, cwd?: string) => runCli(argv, { env, ...(cwd ? { cwd } : {}) });
const NOTES = '4f0b1e7c-5061-4293-8edf-4a5b6c7d8e95';
const BOARD_ROLE = '5a1c2f8d-6172-43a4-9fe0-5b6c7d8e9fa6';
const ASSOCIATE_EDITOR = '7c3a2b8e-0003-4c00-8000-000000000002';

let emulator: RunningEmulator;
let env: NodeJS.ProcessEnv;
const dir = mkdtempSync(join(tmpdir(), 'rostersync-cli-client-'));

beforeAll(async () => {
  emulator = await startEmulator();
  env = { SERVICE_BASE_URL: emulator.url, SERVICE_API_KEY: KEY };
});
afterAll(async () => {
  await emulator.close();
});
beforeEach(async () => {
  await fetch(`${emulator.url}/_emulator/reset`, { method: 'POST' });
});

describe('rostersync fields', () => {
  it('lists fields for people, with option labels', async () => {
    const { code, stdout } = await run(['fields'], env);
    expect(code).toBe(EXIT.ok);
    expect(stdout).toMatch(/^author_from_group \(9 fields\)/);
    expect(stdout).toMatch(/Board role\s+single_option\s+5a1c2f8d-6172-43a4-9fe0-5b6c7d8e9fa6/);
    expect(stdout).toMatch(/- Associate Editor\s+7c3a2b8e-0003-4c00-8000-000000000002/);
    expect(stdout).toContain('proposal (1 field)');
  });

  it('--json prints the listing', async () => {
    const { code, stdout } = await run(['fields', '--json'], env);
    expect(code).toBe(EXIT.ok);
    const listing = JSON.parse(stdout) as { author_from_group: Array<{ api_id: string }> };
    expect(listing.author_from_group.map((f) => f.api_id)).toContain(NOTES);
  });
});

describe('rostersync author', () => {
  it('put, get, patch, delete round trip', async () => {
    const put = await run(
      ['author', 'put', '501', 'cli 1', '--data', JSON.stringify({ name: 'Cleo Ruiz', emails: ['cleo@example.org'], [BOARD_ROLE]: ASSOCIATE_EDITOR })],
      env,
    );
    expect(put).toMatchObject({ code: EXIT.ok, stdout: 'author "cli 1" in group 501 written (full replace)\n' });

    const shown = await run(['author', 'get', '501', 'cli 1'], env);
    expect(shown.code).toBe(EXIT.ok);
    expect(shown.stdout).toContain('name:         Cleo Ruiz');
    expect(shown.stdout).toContain('Board role: Associate Editor');
    expect(shown.stdout).toContain('linked author: none');

    const file = join(dir, 'patch.json');
    writeFileSync(file, JSON.stringify({ [NOTES]: 'prefers email', emails: null }));
    const patched = await run(['author', 'patch', '501', 'cli 1', '--data-file', 'patch.json', '--json'], env, dir);
    expect(patched).toMatchObject({ code: EXIT.ok, stdout: '{"ok":true}\n' });

    const json = JSON.parse((await run(['author', 'get', '501', 'cli 1', '--json'], env)).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ name: 'Cleo Ruiz', emails: null, [NOTES]: 'prefers email', [BOARD_ROLE]: ASSOCIATE_EDITOR });

    expect((await run(['author', 'delete', '501', 'cli 1'], env)).stdout).toBe('author "cli 1" in group 501 deleted\n');
    const gone = await run(['author', 'get', '501', 'cli 1'], env);
    expect(gone.code).toBe(EXIT.usage);
    expect(gone.stderr).toMatch(/^error: GET \/api\/external\/author-from-group\/501\/cli%201\/ answered 404 Not Found/);
    expect(gone.stderr).toMatch(/\nhint: /);
    expect(gone.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it.each([
    [['author', 'put', '501', 'x'], /pass --data JSON or --data-file FILE/],
    [['author', 'put', '501', 'x', '--data', '{name: 1}'], /--data is not valid JSON/],
    [['author', 'put', '501', 'x', '--data', '[1]'], /must hold a JSON object/],
    [['author', 'put', '501', 'x', '--data', '{"emails": []}'], /invalid author record \(full POST\): name/],
    [['author', 'patch', '501', 'x', '--data-file', 'nope.json'], /cannot read --data-file/],
    [['author', 'get', '12x', 'x'], /group id "12x" is not a positive integer/],
    [['author', 'put', '501', 'x', '--data', '{}', '--data-file', 'f'], /mutually exclusive/],
    // A check of the options (yargs `.check`) is a usage error too, not "a bug in rostersync".
    [['state', 'import', 'pipelines/reviewers.yaml'], /give --file \(client_ids to adopt\) or --jsonl \(a state export\)/],
  ])('refuses bad input %j with exit 1', async (argv, message) => {
    const { code, stderr } = await run(argv, env, dir);
    expect(code).toBe(EXIT.usage);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/unexpected failure|a bug in rostersync/);
  });

  it('an unknown custom field is refused before any write, exit 1', async () => {
    const { code, stderr } = await run(['author', 'patch', '501', 'onc-201', '--data', '{"no-such-field": 1}'], env);
    expect(code).toBe(EXIT.usage);
    expect(stderr).toContain('error: unknown field "no-such-field"');
  });
});

describe('rostersync group create', () => {
  it('creates a group with repeated team flags', async () => {
    const { code, stdout } = await run(
      ['group', 'create', '--name', 'CLI pool', '--owner-team', 'Editorial Office', '--editor-team', 'Reviewers Desk', '--editor-team', 'Publishers', '--viewer-team', 'Board Secretariat'],
      env,
    );
    expect(code).toBe(EXIT.ok);
    const id = Number(/created authors group (\d+) "CLI pool"/.exec(stdout)?.[1]);
    const state = (await (await fetch(`${emulator.url}/_emulator/state?group=${id}`)).json()) as {
      orgs: Array<{ groups: Array<{ editor_teams: string[]; viewer_teams: string[] }> }>;
    };
    expect(state.orgs[0]!.groups[0]).toMatchObject({ editor_teams: ['Reviewers Desk', 'Publishers'], viewer_teams: ['Board Secretariat'] });
  });

  it('--json prints the id', async () => {
    const { stdout } = await run(['group', 'create', '--name', 'J', '--owner-team', 'Editorial Office', '--json'], env);
    expect(JSON.parse(stdout)).toEqual({ authors_group_id: expect.any(Number) });
  });

  it('an ambiguous failure exits 5 and says a group may have been created', async () => {
    const faulty = await startEmulator({ faults: { status502: 1 }, faultPhase: 'after' });
    try {
      const { code, stderr } = await run(['group', 'create', '--name', 'Maybe', '--owner-team', 'Editorial Office'], {
        SERVICE_BASE_URL: faulty.url,
        SERVICE_API_KEY: KEY,
      });
      expect(code).toBe(EXIT.unavailable);
      expect(stderr).toContain('a group may have been created');
      expect(stderr).toContain('hint: Check in the service UI');
    } finally {
      await faulty.close();
    }
  });
});

describe('connection settings and exit codes', () => {
  it('says how to configure the connection when nothing is set', async () => {
    const { code, stderr } = await run(['fields'], {});
    expect(code).toBe(EXIT.usage);
    expect(stderr).toContain('no service base URL and no API key configured');
    expect(stderr).toMatch(/hint: Set SERVICE_BASE_URL and SERVICE_API_KEY.*--api-key-file/);
  });

  it('reads the key from --api-key-file and the URL from --base-url', async () => {
    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
    const { code } = await run(['fields', '--base-url', emulator.url, '--api-key-file', keyFile], {});
    expect(code).toBe(EXIT.ok);
  });

  it('has no plain --api-key flag', async () => {
    const { code, stderr } = await run(['fields', '--api-key', KEY], env);
    expect(code).toBe(EXIT.usage);
    expect(stderr).toMatch(/unknown option --api-key/i);
    expect(stderr).not.toContain(KEY);
  });

  it('refuses http:// off loopback', async () => {
    const { code, stderr } = await run(['fields', '--base-url', 'http://service.example.org'], env);
    expect(code).toBe(EXIT.usage);
    expect(stderr).toContain('refusing plain http://');
  });

  it('a wrong key exits 4 without showing the key', async () => {
    const { code, stderr } = await run(['fields'], { ...env, SERVICE_API_KEY: 'wrong-key-0000' });
    expect(code).toBe(EXIT.auth);
    expect(stderr).toContain('401');
    expect(stderr).not.toContain('wrong-key-0000');
  });

  it('logs go to stderr as JSON lines without the key (ROSTERSYNC_LOG_LEVEL=debug)', async () => {
    // Off a terminal (the format's default there).
    const { code, stdout, stderr } = await run(['author', 'get', '501', 'onc-201', '--json'], { ...env, ROSTERSYNC_LOG_LEVEL: 'debug', ROSTERSYNC_LOG_FORMAT: undefined });
    expect(code).toBe(EXIT.ok);
    const lines = stderr.trim().split('\n').map((line) => JSON.parse(line) as { msg: string; route?: string });
    expect(lines.some((l) => l.msg === 'service call' && l.route?.includes(':client_id'))).toBe(true);
    expect(stderr).not.toContain(KEY);
    expect(stderr).not.toContain('@');
    expect(JSON.parse(stdout)).toMatchObject({ name: 'Ada Okafor' });
  });
});

describe('the installed binary', () => {
  // One spawn test proves the bin wiring; tsx compiles the whole CLI at start, which is slow on a busy machine.
  it('bin/rostersync-dev.js fields --json against the emulator', { timeout: 90_000 }, async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['bin/rostersync-dev.js', 'fields', '--json'], {
      env: { ...process.env, ...env },
      timeout: 80_000,
    });
    expect(Object.keys(JSON.parse(stdout) as object)).toEqual(['author_from_group', 'folder', 'proposal']);
  });
});

describe('an unreachable service', () => {
  it('exits 5 after the retries, naming the endpoint and the cause', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const { code, stderr } = await run(['fields'], { SERVICE_BASE_URL: `http://127.0.0.1:${port}`, SERVICE_API_KEY: KEY });
    expect(code).toBe(EXIT.unavailable);
    expect(stderr).toMatch(/^error: GET \/api\/external\/custom-fields\/all\/ failed: .*ECONNREFUSED/m);
    expect(stderr).toMatch(/WARN.*retrying service call/); // warn-level retry logs on stderr
  });
});
