/**
 * Docs that run: every shell block of README.md and docs/*.md that a reader is meant to run is
 * executed here, in page order, against the emulator, in a copy of the project (pipelines/,
 * mappings/, samples/), with the files the page says to write (doc-blocks.ts has the markers). A
 * page that drifts from the tool fails `npm test`, naming the block.
 *
 * What a reader would do differently here, and only that, is rewritten: the service
 * (`https://service.example.org`, `SERVICE_API_KEY=...`) becomes an emulator on 127.0.0.1 and its
 * key; a fixed emulator port (4010) becomes a free one, as engineers run tests side by side; a
 * command sent to the background (`&`) is waited for until its port answers; `rostersync` and
 * `npx --no-install rostersync` run this checkout's sources.
 */
import { spawn } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { DEMO_API_KEY } from '../support/cli.js';
import { docBlocks, SHELL_LANGUAGES, type DocBlock } from './doc-blocks.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const DOC_EMULATOR_PORT = '4010';

/** Pages whose blocks another test runs, with the reason. */
const PAGES_RUN_ELSEWHERE: Record<string, string> = {
  'docs/migrating.md': 'the migration walkthrough is run by the migration feature’s own test',
};

async function pages(): Promise<string[]> {
  const docs = (await readdir(join(ROOT, 'docs'))).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
  return ['README.md', ...docs.sort()];
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/**
 * `rostersync` and `npx --no-install rostersync` as this checkout's CLI; a bare `npx rostersync`
 * (which could fetch from the registry) fails the block; any other npx goes to the real one.
 */
async function shims(dir: string): Promise<string> {
  const bin = join(dir, 'bin');
  await mkdir(bin);
  const cli = join(ROOT, 'bin', 'rostersync-dev.js');
  await writeFile(join(bin, 'rostersync'), `#!/bin/sh\nexec "${process.execPath}" "${cli}" "$@"\n`);
  await writeFile(join(bin, 'npx'), `#!/bin/sh\nif [ "$1" = --no-install ] && [ "$2" = rostersync ]; then shift 2; exec "${join(bin, 'rostersync')}" "$@"; fi\nif [ "$1" = rostersync ]; then echo "npx rostersync could fetch from the registry: write npx --no-install rostersync" >&2; exit 97; fi\nexec "${join(dirname(process.execPath), 'npx')}" "$@"\n`);
  await chmod(join(bin, 'rostersync'), 0o755);
  await chmod(join(bin, 'npx'), 0o755);
  return bin;
}

async function projectCopy(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rostersync-docs-'));
  for (const folder of ['pipelines', 'mappings', 'samples']) await cp(join(ROOT, folder), join(dir, folder), { recursive: true });
  return dir;
}

/** A block as this harness runs it: the service is the emulator, background commands are waited for. */
function rewrite(block: DocBlock, service: { url: string; docPort: number }): string {
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

function runScript(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
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

describe('docs that run', async () => {
  for (const page of await pages()) {
    const blocks = docBlocks(await readFile(join(ROOT, page), 'utf8'), page);
    const runnable = blocks.filter((block) => SHELL_LANGUAGES.has(block.lang) && block.marker?.kind !== 'skip');
    if (runnable.length === 0) continue;
    const elsewhere = PAGES_RUN_ELSEWHERE[page];
    it.skipIf(elsewhere !== undefined)(`${page}: every shell block runs as written${elsewhere ? ` (skipped: ${elsewhere})` : ''}`, { timeout: 180_000 }, async () => {
      const emulator = await startEmulator({ port: 0 });
      try {
        const docPort = await freePort();
        const first = await projectCopy();
        let cwd = first;
        const bin = await shims(first);
        const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, SERVICE_BASE_URL: emulator.url, SERVICE_API_KEY: DEMO_API_KEY, NO_COLOR: '1' };
        delete env.GITHUB_STEP_SUMMARY;
        delete env.ROSTERSYNC_REPORT_DIR;
        delete env.ROSTERSYNC_STATE_URL;
        let script = 'set -euo pipefail\n';
        for (const block of blocks) {
          const where = `${page}:${block.line}`;
          if (block.marker?.kind === 'write') {
            const target = resolve(cwd, block.marker.path);
            expect(target.startsWith(cwd), `${where}: writes outside the project`).toBe(true);
            script += `mkdir -p '${dirname(target)}' && cat > '${target}' <<'DOC_TEST_EOF'\n${block.text}\nDOC_TEST_EOF\n`;
            continue;
          }
          if (!runnable.includes(block)) continue;
          if (block.marker?.kind === 'fresh') {
            cwd = await projectCopy();
            script += `cd '${cwd}'\n`;
          }
          script += `echo "::doc-test ${where}" >&2\n${rewrite(block, { url: emulator.url, docPort })}\n`;
        }
        const run = await runScript(script, first, env);
        const failedAt = [...run.stderr.matchAll(/::doc-test (\S+)/g)].at(-1)?.[1];
        expect(run.code, `the block at ${failedAt} failed (exit ${run.code}):\n${run.stderr.slice(-3000)}\n${run.stdout.slice(-2000)}`).toBe(0);
      } finally {
        await emulator.close();
      }
    });
  }
});
