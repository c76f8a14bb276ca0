/**
 * What the doc tests share: a free port, `rostersync` and `npx rostersync` as this checkout's CLI,
 * a copy of the project built from tracked files only, a block rewritten to run against the
 * emulator, and a script run in its own process group. Used by docs.integration.test.ts and by the
 * package test that follows the README's walkthrough in a clone.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO_API_KEY } from '../support/cli.js';
import { copyTracked } from '../support/tracked-copy.js';
import type { DocBlock } from './doc-blocks.js';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const DOC_EMULATOR_PORT = '4010';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/**
 * `rostersync` and `npx --no-install rostersync` as the CLI of the checkout at `root`; a bare
 * `npx rostersync` (which could fetch from the registry) fails the block; any other npx goes to
 * the real one.
 */
export async function shims(dir: string, root = ROOT): Promise<string> {
  const bin = join(dir, 'bin');
  await mkdir(bin);
  const cli = join(root, 'bin', 'rostersync-dev.js');
  await writeFile(join(bin, 'rostersync'), `#!/bin/sh\nexec "${process.execPath}" "${cli}" "$@"\n`);
  await writeFile(join(bin, 'npx'), `#!/bin/sh\nif [ "$1" = --no-install ] && [ "$2" = rostersync ]; then shift 2; exec "${join(bin, 'rostersync')}" "$@"; fi\nif [ "$1" = rostersync ]; then echo "npx rostersync could fetch from the registry: write npx --no-install rostersync" >&2; exit 97; fi\nexec "${join(dirname(process.execPath), 'npx')}" "$@"\n`);
  await chmod(join(bin, 'rostersync'), 0o755);
  await chmod(join(bin, 'npx'), 0o755);
  return bin;
}

/** The project's pipelines/, mappings/ and samples/ as git tracks them: no state or report a user's own runs left there. */
export async function projectCopy(root = ROOT): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rostersync-docs-'));
  copyTracked(root, ['pipelines', 'mappings', 'samples'], dir);
  return dir;
}

/** A block as this harness runs it: the service is the emulator, background commands are waited for. */
export function rewrite(block: DocBlock, service: { url: string; docPort: number }): string {
  const out: string[] = [];
  for (const raw of block.text.split('\n')) {
    const line = raw
      .replaceAll('https://service.example.org', service.url)
      .replace(/SERVICE_API_KEY=\.\.\./g, `SERVICE_API_KEY=${DEMO_API_KEY}`)
      .replace(new RegExp(`\\b${DOC_EMULATOR_PORT}\\b`, 'g'), String(service.docPort));
    out.push(line);
    const port = /&\s*(#.*)?$/.test(line) ? /--port\s+(\d+)/.exec(line)?.[1] : undefined;
    if (port) out.push(`for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && break; sleep 0.05; done`);
  }
  return out.join('\n');
}

export function runScript(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    // Its own process group, so whatever a block left in the background is stopped with it.
    const child = spawn('bash', ['-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 150_000);
    // A server a block started in the background keeps the pipes open: when the script exits,
    // stop its process group, then read what is left.
    child.on('exit', (code) => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // The group is gone already.
      }
      child.on('close', () => done({ code, stdout, stderr }));
    });
  });
}

