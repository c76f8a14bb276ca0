/**
 * `rostersync demo` after a global install: the package folder (pipelines/, samples/, mappings/)
 * is not the user's to write, so the demo's reports land in the current directory or `--dir`,
 * and nothing is written beside the pipeline. In-process against its own emulator.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { copyTracked } from '../support/tracked-copy.js';

const ROOT = resolve(import.meta.dirname, '../..');
const temps: string[] = [];

async function temp(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name)).sort();
}

/** A copy of the files the published package carries for the demo (tracked files only: no state or report of a user's runs). */
async function packageCopy(): Promise<string> {
  const pkg = await temp('rostersync-pkg-');
  copyTracked(ROOT, ['pipelines', 'samples', 'mappings'], pkg);
  return pkg;
}

afterEach(async () => {
  await Promise.all(temps.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('rostersync demo', () => {
  it('writes its reports under reports/ in the current directory, nothing in the package folder', async () => {
    const pkg = await packageCopy();
    const before = await filesUnder(pkg);
    const cwd = await temp('rostersync-user-');
    const run = await runCli(['demo', '--pipeline', join(pkg, 'pipelines/demo.yaml')], { cwd, env: {} });
    expect(run.code, run.stderr).toBe(0);
    expect(await filesUnder(pkg)).toEqual(before);
    const written = await filesUnder(cwd);
    expect(written.some((file) => /reports\/demo\/[^/]+\/report\.html$/.test(file))).toBe(true);
    expect(written.some((file) => file.endsWith(join('reports', 'demo', 'index.html')))).toBe(true);
    // Besides the reports, only the `.gitignore` rostersync puts in a reports folder it creates.
    expect(written.filter((file) => !file.startsWith(join(cwd, 'reports', 'demo')))).toEqual([join(cwd, 'reports', '.gitignore')]);
    expect(run.stdout).toContain(`open the admin report: ${join(cwd, 'reports', 'demo')}`);
  });

  it('writes to the folder --dir names, with the pipeline the package ships', async () => {
    const cwd = await temp('rostersync-user-');
    const repoReports = await filesUnder(join(ROOT, 'reports', 'demo'));
    const run = await runCli(['demo', '--dir', 'out'], { cwd, env: {} });
    expect(run.code, run.stderr).toBe(0);
    expect((await filesUnder(join(cwd, 'out', 'reports', 'demo'))).some((file) => file.endsWith('report.json'))).toBe(true);
    expect(await filesUnder(join(ROOT, 'reports', 'demo'))).toEqual(repoReports);
  });
});
