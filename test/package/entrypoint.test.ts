/**
 * The container image's entrypoint (docker/entrypoint.sh), run outside a container: no container
 * engine runs on the machines that run the tests. ROSTERSYNC_BIN points it at a stand-in that
 * prints what it was given, or at the real CLI (bin/rostersync-dev.js) against the emulator.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { API_KEY, emulator as startTestEmulator, makeProject, people } from '../support/project.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRYPOINT = join(ROOT, 'docker/entrypoint.sh');
const DEV_BIN = join(ROOT, 'bin/rostersync-dev.js');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function entrypoint(args: string[], env: Record<string, string>): Promise<Result> {
  return new Promise((resolve) => {
    execFile('sh', [ENTRYPOINT, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), ...env }, encoding: 'utf8', timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('docker/entrypoint.sh', () => {
  let dir: string;
  let fake: string;
  let state: string;
  let reports: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rostersync-entrypoint-'));
    fake = join(dir, 'fake-rostersync');
    // Prints each argument on its own line, then whether the key arrived (never the key itself).
    writeFileSync(fake, '#!/bin/sh\nfor a in "$@"; do printf "arg:%s\\n" "$a"; done\nprintf "key-length:%s\\n" "${#SERVICE_API_KEY}"\nprintf "report-root:%s\\n" "$ROSTERSYNC_REPORT_DIR"\n');
    chmodSync(fake, 0o755);
    state = join(dir, 'state');
    reports = join(dir, 'reports');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const args = (out: string) => out.split('\n').filter((line) => line.startsWith('arg:')).map((line) => line.slice(4));

  it('puts the state on its volume for sync, plan and apply, and hands the report volume on', async () => {
    const { code, stdout } = await entrypoint(['sync', 'pipelines/reviewers.yaml', '--dry-run'], { ROSTERSYNC_BIN: fake, ROSTERSYNC_STATE_DIR: state, ROSTERSYNC_REPORT_DIR: reports });
    expect(code).toBe(0);
    expect(args(stdout)).toEqual(['sync', 'pipelines/reviewers.yaml', '--dry-run', '--state-dir', state]);
    expect(stdout).toContain(`report-root:${reports}\n`);
    expect(existsSync(state)).toBe(true);
    expect(existsSync(reports)).toBe(true);
  });

  it('leaves --state-dir and --report-dir alone when the command names them, and other commands untouched', async () => {
    const env = { ROSTERSYNC_BIN: fake, ROSTERSYNC_STATE_DIR: state, ROSTERSYNC_REPORT_DIR: reports };
    expect(args((await entrypoint(['plan', 'p.yaml', '--state-dir=/elsewhere', '--report-dir', '/r'], env)).stdout)).toEqual(['plan', 'p.yaml', '--state-dir=/elsewhere', '--report-dir', '/r']);
    expect((await entrypoint(['fields'], { ROSTERSYNC_BIN: fake })).stdout).toContain('report-root:/reports\n');
    expect(args((await entrypoint(['state', 'show', 'p.yaml'], env)).stdout)).toEqual(['state', 'show', 'p.yaml', '--state-dir', state]);
    expect(args((await entrypoint(['validate', 'p.yaml'], env)).stdout)).toEqual(['validate', 'p.yaml']);
    expect(args((await entrypoint(['emulator', '--port', '4010'], env)).stdout)).toEqual(['emulator', '--port', '4010']);
  });

  it('shows the help when given no arguments', async () => {
    expect(args((await entrypoint([], { ROSTERSYNC_BIN: fake })).stdout)).toEqual(['--help']);
  });

  it('reads SERVICE_API_KEY_FILE into SERVICE_API_KEY without printing it', async () => {
    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, 'secret-key-123\n');
    const { stdout, stderr } = await entrypoint(['fields'], { ROSTERSYNC_BIN: fake, SERVICE_API_KEY_FILE: keyFile });
    expect(stdout).toContain('key-length:14');
    expect(stdout + stderr).not.toContain('secret-key-123');
  });

  it('refuses an unreadable key file and a state volume it cannot write, with the fix, before running anything', async () => {
    const missing = await entrypoint(['fields'], { ROSTERSYNC_BIN: fake, SERVICE_API_KEY_FILE: join(dir, 'nope') });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/SERVICE_API_KEY_FILE names .*nope, which cannot be read/);
    expect(missing.stdout).toBe('');

    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, '');
    const blocked = await entrypoint(['sync', 'p.yaml'], { ROSTERSYNC_BIN: fake, ROSTERSYNC_STATE_DIR: join(blocker, 'state') });
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toMatch(/the state directory .* is not writable/);
    expect(blocked.stderr).toMatch(/hint: mount a volume there/);
    expect(blocked.stdout).toBe('');

    // With the state in PostgreSQL no state volume is needed: none is checked, none is passed.
    const postgres = await entrypoint(['sync', 'p.yaml'], { ROSTERSYNC_BIN: fake, ROSTERSYNC_STATE_DIR: join(blocker, 'state'), ROSTERSYNC_REPORT_DIR: reports, ROSTERSYNC_STATE_URL: 'postgres://rostersync@db:5432/rostersync' });
    expect(postgres.code, postgres.stderr).toBe(0);
    expect(args(postgres.stdout)).toEqual(['sync', 'p.yaml']);
  });

  describe('with the real CLI against the emulator', () => {
    let emu: RunningEmulator;
    beforeAll(async () => {
      emu = await startTestEmulator();
    });
    afterAll(async () => {
      await emu.close();
    });

    it('a sync keeps its state in ROSTERSYNC_STATE_DIR, its report and run history under ROSTERSYNC_REPORT_DIR/<pipeline>/', { timeout: 120_000 }, async () => {
      const project = await makeProject(people(4));
      const keyFile = join(project.dir, 'key');
      writeFileSync(keyFile, API_KEY);
      const { code, stdout, stderr } = await entrypoint(['sync', project.pipeline, '--create-group', '-q'], {
        ROSTERSYNC_BIN: DEV_BIN,
        ROSTERSYNC_STATE_DIR: state,
        ROSTERSYNC_REPORT_DIR: reports,
        SERVICE_BASE_URL: emu.url,
        SERVICE_API_KEY_FILE: keyFile,
        NO_COLOR: '1',
      });
      expect(code, stderr).toBe(0);
      expect(stdout).toMatch(/DONE \(exit 0\)/);
      expect(readdirSync(state)).toContain('pipeline.sqlite');
      expect(readdirSync(join(reports, 'pipeline'))).toContain('index.html');
      const runs = readdirSync(join(reports, 'pipeline')).filter((name) => /^\d{8}T/.test(name));
      expect(runs).toHaveLength(1);
      const report = JSON.parse(readFileSync(join(reports, 'pipeline', runs[0]!, 'report.json'), 'utf8')) as { outcome: string; counts: { create: { done?: number } } };
      expect(report.outcome).toBe('success');
      expect(report.counts.create.done).toBe(4);
    });
  });
});
