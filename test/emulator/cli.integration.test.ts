/** `rostersync emulator`: in-process through `main` (fast) and once as a real process. */
import { spawn } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fetch } from 'undici';
import { describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../src/client/endpoints.js';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { DEMO_API_KEY } from '../support/cli.js';
import { rawPath } from './helpers.js';

const LIST = rawPath(ENDPOINTS.listCustomFields);

function captureIo(signal?: AbortSignal): { io: CliIo; out: () => string; err: () => string; stdout: PassThrough } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  // Messages as a person at a terminal reads them (off a terminal, stderr is JSON lines).
  const io: CliIo = { stdout, stderr, env: { ROSTERSYNC_LOG_FORMAT: 'human' }, cwd: process.cwd(), ...(signal ? { signal } : {}) };
  return { io, out: () => out, err: () => err, stdout };
}

function firstLine(stream: NodeJS.ReadableStream, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`no line within ${timeoutMs} ms; got ${JSON.stringify(buffered)}`)), timeoutMs);
    stream.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const newline = buffered.indexOf('\n');
      if (newline !== -1) {
        clearTimeout(timer);
        resolve(buffered.slice(0, newline));
      }
    });
  });
}

const LINE = /^listening on (http:\/\/127\.0\.0\.1:(\d+))$/;

describe('rostersync emulator (in-process)', () => {
  it('prints the URL, serves the default org, and exits 0 when stopped', async () => {
    const controller = new AbortController();
    const { io, stdout } = captureIo(controller.signal);
    const line = firstLine(stdout);
    const exit = main(['emulator', '--port', '0', '--rps', '1000'], io);
    const url = LINE.exec(await line)?.[1];
    expect(url).toBeDefined();
    const res = await fetch(`${url}${LIST}`, { headers: { 'X-ApiKey': DEMO_API_KEY } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { author_from_group: unknown[] }).author_from_group.length).toBeGreaterThan(0);
    controller.abort();
    expect(await exit).toBe(0);
    await expect(fetch(`${url}/_emulator/stats`)).rejects.toThrow();
  });

  it('uses --fixture', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rostersync-emu-'));
    const path = join(dir, 'fixture.json');
    writeFileSync(path, JSON.stringify({ orgs: [{ id: 9, name: 'Tiny', api_keys: ['tiny-key-123'], teams: ['T'], custom_fields: {} }] }));
    const controller = new AbortController();
    const { io, stdout } = captureIo(controller.signal);
    const line = firstLine(stdout);
    const exit = main(['emulator', '--fixture', path], io);
    const url = LINE.exec(await line)?.[1];
    const res = await fetch(`${url}${LIST}`, { headers: { 'X-ApiKey': 'tiny-key-123' } });
    expect(await res.json()).toEqual({ author_from_group: [], folder: [], proposal: [] });
    controller.abort();
    expect(await exit).toBe(0);
  });

  it.each([
    ['a missing file', () => '/nonexistent/fixture.yaml', /fixture file \/nonexistent\/fixture\.yaml does not exist/],
    [
      'an unknown key',
      () => {
        const path = join(mkdtempSync(join(tmpdir(), 'rostersync-emu-')), 'bad.yaml');
        writeFileSync(path, 'orgs:\n  - id: 1\n    name: X\n    api_keys: [abcdefghij]\n    teams: []\n    custom_fields: {}\n    colour: red\n');
        return path;
      },
      /bad\.yaml: invalid emulator fixture:[\s\S]*orgs\.0: Unrecognized key: "colour"/,
    ],
    [
      'a wrong type',
      () => {
        const path = join(mkdtempSync(join(tmpdir(), 'rostersync-emu-')), 'bad.yaml');
        writeFileSync(path, 'orgs:\n  - id: one\n    name: X\n    api_keys: [abcdefghij]\n    teams: []\n    custom_fields: {}\n');
        return path;
      },
      /orgs\.0\.id/,
    ],
  ])('exits 1 with a clear message for %s', async (_label, makePath, message) => {
    const { io, out, err } = captureIo();
    expect(await main(['emulator', '--fixture', makePath()], io)).toBe(1);
    expect(err()).toMatch(message);
    expect(err()).toContain('hint:');
    expect(err()).not.toContain('    at ');
    expect(out()).toBe('');
  });

  it.each([
    [['--fault-rate', '1.5'], /--fault-rate must be a number >= 0 <= 1/],
    [['--port', '70000'], /--port must be an integer/],
    [['--host', '0.0.0.0'], /not a loopback address/],
  ])('refuses %j with exit 1', async (flags, message) => {
    const { io, err } = captureIo();
    expect(await main(['emulator', ...flags], io)).toBe(1);
    expect(err()).toMatch(message);
  });
});

describe('rostersync emulator (real process)', () => {
  it('prints the URL, answers calls, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, ['bin/rostersync-dev.js', 'emulator', '--port', '0'], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = LINE.exec(await firstLine(child.stdout))?.[1];
      expect(url).toBeDefined();
      const res = await fetch(`${url}${LIST}`, { headers: { 'X-ApiKey': 'wrong-key-000' } });
      await res.arrayBuffer();
      expect(res.status).toBe(401);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
