/** validate against the emulator over real HTTP: custom fields come from GET /custom-fields/all/. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from './helpers.js';
import { DEMO_API_KEY } from '../support/cli.js';
import { useEmulator } from '../support/emulator.js';

const emulator = useEmulator();

describe('validate against the emulator', () => {
  it('resolves custom fields from the service and validates the workbook', async () => {
    const env = { SERVICE_BASE_URL: emulator().url, SERVICE_API_KEY: DEMO_API_KEY };
    const { code, stdout, stderr } = await runCli(['validate', 'pipelines/editorial-board.yaml', '--json'], { env });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as { counts: { valid: number }; fieldNames: Record<string, string> };
    expect(result.counts.valid).toBe(12);
    expect(Object.values(result.fieldNames)).toContain('Board role');
  });

  it('a wrong API key is an auth failure (exit 4) without the key in the output', async () => {
    const env = { SERVICE_BASE_URL: emulator().url, SERVICE_API_KEY: 'wrong-key-9876543210' };
    const { code, stdout, stderr } = await runCli(['validate', 'pipelines/reviewers.yaml'], { env });
    expect(code).toBe(4);
    expect(stdout).toBe('');
    expect(stderr).not.toContain('wrong-key-9876543210');
  });

  it('no service configured and no --fields-file: says how to configure', async () => {
    const { code, stderr } = await runCli(['validate', 'pipelines/reviewers.yaml'], { env: {} });
    expect(code).toBe(1);
    expect(stderr).toMatch(/SERVICE_BASE_URL/);
  });
});

/** Runs bin/rostersync-dev.js (the TypeScript sources) in a child process (async: the emulator answers from this process). */
function spawnCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(ROOT, 'bin/rostersync-dev.js'), ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

describe('the real binary', () => {
  it('exits 2 on the legacy sample and 1 on a broken pipeline, never with a stack trace', async () => {
    const env = { ...process.env, SERVICE_BASE_URL: emulator().url, SERVICE_API_KEY: DEMO_API_KEY };
    const ok = await spawnCli(['validate', 'pipelines/legacy.yaml'], env);
    expect(ok.status).toBe(2);
    expect(ok.stdout).toContain('rows rejected       7');
    const bad = await spawnCli(['validate', 'mappings/legacy.yaml'], env);
    expect(bad.status).toBe(1);
    // Off a terminal, the error is a JSON line like the logs' (README "Exit codes").
    expect(JSON.parse(bad.stderr)).toMatchObject({ level: 50, msg: expect.stringMatching(/legacy\.yaml/), exitCode: 1 });
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });
});
