/**
 * Outputs through real pipes, in child processes (the real bin, the real process.stdout): a pipe
 * takes 64 KiB at a time, so a command that exits before its output drained cuts it; a reader
 * that goes away (`| head -1`) must end the printing quietly, never the command.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { emulatorEnv } from '../support/cli.js';
import { emulator, groupRecords, makeProject, people } from '../support/project.js';

const BIN = fileURLToPath(new URL('../../bin/rostersync-dev.js', import.meta.url));
const ROSTERSYNC = `"${process.execPath}" "${BIN}"`;
/** A reader that starts reading late (a busy consumer) and parses what it got as one JSON document. */
const SLOW_JSON_READER = `(sleep 1; "${process.execPath}" -e 'let t="";process.stdin.on("data",c=>t+=c).on("end",()=>{const d=JSON.parse(t);console.log("parsed",d.records.length)})')`;

interface ShellRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a shell pipeline; `$RS` is the rostersync command. Prints `rostersync exit N` from PIPESTATUS. */
function shell(script: string, options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<ShellRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `RS='${ROSTERSYNC}'; ${script}; echo "rostersync exit \${PIPESTATUS[0]}"`], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function rostersyncExit(run: ShellRun): number {
  const match = /rostersync exit (\d+)/.exec(run.stdout);
  if (!match) throw new Error(`no exit status in ${run.stdout}\n${run.stderr}`);
  return Number(match[1]);
}

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

describe('outputs through real pipes', { timeout: 120_000 }, () => {
  it('plan --json of a 3,000-row roster reaches a slow reader whole, and `| head -1` ends quietly', async () => {
    const project = await makeProject(people(3000));
    const env = emulatorEnv(emu, { ROSTERSYNC_LOG_LEVEL: 'error' });
    const parsed = await shell(`eval "$RS plan pipeline.yaml --create-group --json" | ${SLOW_JSON_READER}`, { cwd: project.dir, env });
    expect(parsed.stderr).toBe('');
    expect(parsed.stdout).toContain('parsed 3000');
    expect(rostersyncExit(parsed)).toBe(0);

    const head = await shell(`eval "$RS plan pipeline.yaml --create-group --json" | head -1`, { cwd: project.dir, env });
    expect(head.stdout.split('\n')[0]).toBe('{');
    expect(head.stderr).toBe('');
    expect(rostersyncExit(head)).toBe(0);
  });

  it('a sync whose log reader went away (`2>&1 | head -1`) finishes its writes and report, and exits with its own code', async () => {
    const project = await makeProject(people(300));
    // debug logs on stderr (off a terminal): the reader leaves after the first line, long before the run ends.
    const run = await shell(`eval "$RS sync pipeline.yaml --create-group --log-level debug" 2>&1 | head -1`, { cwd: project.dir, env: emulatorEnv(emu) });
    expect(run.stderr).toBe('');
    expect(rostersyncExit(run)).toBe(0);
    expect(Object.keys(groupRecords(emu))).toHaveLength(300);
    const written = emu.stats.snapshot().writes.total;
    // It converged: the next run has nothing to do.
    const again = await shell(`eval "$RS sync pipeline.yaml --json" | head -1`, { cwd: project.dir, env: emulatorEnv(emu, { ROSTERSYNC_LOG_LEVEL: 'error' }) });
    expect(again.stderr).toBe('');
    expect(rostersyncExit(again)).toBe(0);
    expect(emu.stats.snapshot().writes.total).toBe(written);
  });

  it('state export through gzip and back imports whole into another state', async () => {
    const project = await makeProject(people(3000));
    const env = emulatorEnv(emu, { ROSTERSYNC_LOG_LEVEL: 'error' });
    const synced = await shell(`eval "$RS sync pipeline.yaml --create-group" > /dev/null`, { cwd: project.dir, env });
    expect(rostersyncExit(synced), synced.stderr).toBe(0);
    const exported = await shell(`eval "$RS state export pipeline.yaml" | (sleep 1; gzip) > backup.gz`, { cwd: project.dir, env });
    expect(exported.stderr).toBe('');
    expect(rostersyncExit(exported)).toBe(0);
    const imported = await shell(`gunzip -c backup.gz > back.jsonl && eval "$RS state import pipeline.yaml --jsonl back.jsonl --state-dir moved"`, { cwd: project.dir, env });
    expect(imported.stderr).toBe('');
    expect(imported.stdout).toContain('imported 3000 records');
    expect(rostersyncExit(imported)).toBe(0);
    const lines = readFileSync(join(project.dir, 'back.jsonl'), 'utf8').trimEnd().split('\n');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ kind: 'end', records: 3000 });
  });
});
