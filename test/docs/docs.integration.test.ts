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
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { DEMO_API_KEY } from '../support/cli.js';
import { docBlocks, SHELL_LANGUAGES } from './doc-blocks.js';
import { freePort, projectCopy, rewrite, ROOT, runScript, shims } from './doc-harness.js';

/** Pages whose blocks another test runs, with the reason. */
const PAGES_RUN_ELSEWHERE: Record<string, string> = {
  'docs/migrating.md': 'the migration walkthrough is run by the migration feature’s own test',
};

async function pages(): Promise<string[]> {
  const docs = (await readdir(join(ROOT, 'docs'))).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
  return ['README.md', ...docs.sort()];
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
