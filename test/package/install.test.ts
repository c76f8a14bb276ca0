/**
 * The published package works outside its clone: `npm pack` (which builds dist/
 * through `prepare`), install the tarball into an empty directory, then from there run
 * `rostersync --version`, the installed emulator, a dry-run sync against it, and the library entry.
 *
 * The install is offline: the temporary project's lockfile is derived from the repository's (the
 * same exact versions `npm ci` put in the npm cache), so `npm ci --offline` resolves everything
 * from the cache. Only if the cache lacks a package does it fall back to --prefer-offline (the npm
 * registry, nothing else). Install scripts are skipped and better-sqlite3's native binding is
 * copied from the repository's node_modules (same Node, same machine): compiling it is
 * better-sqlite3's business, not this package's.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; dependencies: Record<string, string>; bin: Record<string, string>; engines: Record<string, string>; license: string };

interface LockEntry {
  name?: string;
  version?: string;
  resolved?: string;
  dev?: boolean;
  link?: boolean;
  [key: string]: unknown;
}

/** The repository's lock entries for the runtime dependencies, with the tarball address npm needs to find them in its cache. */
function installLock(tarball: string, registry: string): object {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const packages: Record<string, object> = {
    '': { name: 'rostersync-install-test', dependencies: { [pkg.name]: `file:${tarball}` } },
    [`node_modules/${pkg.name}`]: { version: pkg.version, resolved: `file:${tarball}`, license: pkg.license, dependencies: pkg.dependencies, bin: pkg.bin, engines: pkg.engines },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path.startsWith('node_modules/') || entry.dev || entry.link) continue;
    const name = entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    packages[path] = { ...entry, resolved: entry.resolved ?? `${registry}${name}/-/${name.split('/').pop()}-${entry.version}.tgz` };
  }
  return { name: 'rostersync-install-test', lockfileVersion: 3, requires: true, packages };
}

async function npm(args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return run('npm', args, { cwd, encoding: 'utf8', timeout: 240_000, maxBuffer: 32 * 1024 * 1024, env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' } });
}

/** Starts the installed emulator and resolves with its URL and the key it prints. */
function startInstalledEmulator(bin: string, cwd: string): Promise<{ child: ChildProcess; url: string; key: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'emulator', '--port', '0'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the installed emulator did not start: ${out}`)), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      const key = /accepts X-ApiKey: (\S+)/.exec(out)?.[1];
      if (url && key) {
        clearTimeout(timer);
        resolve({ child, url, key });
      }
    });
    child.on('exit', (code) => reject(new Error(`the installed emulator exited ${code}: ${out}`)));
  });
}

describe('the packed package, installed into an empty directory', { timeout: 300_000 }, () => {
  let work: string;
  let app: string;
  let bin: string;
  let emulator: { child: ChildProcess; url: string; key: string } | undefined;
  let files: string[];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'rostersync-pack-'));
    app = join(work, 'app');
    mkdirSync(app);
    await npm(['pack', '--pack-destination', work], ROOT);
    const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack wrote no tarball into ${work}`);
    copyFileSync(join(work, tarball), join(app, tarball));
    files = (await run('tar', ['-tzf', join(work, tarball)], { encoding: 'utf8' })).stdout.split('\n').filter(Boolean);

    const registry = (await npm(['config', 'get', 'registry'], app)).stdout.trim().replace(/\/?$/, '/');
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'rostersync-install-test', private: true, dependencies: { [pkg.name]: `file:${tarball}` } }, null, 2));
    writeFileSync(join(app, 'package-lock.json'), JSON.stringify(installLock(tarball, registry), null, 2));
    try {
      await npm(['ci', '--offline', '--ignore-scripts'], app);
    } catch (error) {
      if (!/ENOTCACHED/.test(String((error as { stderr?: string }).stderr))) throw error;
      await npm(['ci', '--prefer-offline', '--ignore-scripts'], app);
    }
    const binding = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
    mkdirSync(join(app, 'node_modules/better-sqlite3/build/Release'), { recursive: true });
    copyFileSync(join(ROOT, binding), join(app, binding));
    bin = join(app, 'node_modules/.bin/rostersync');
  }, 300_000);

  afterAll(() => {
    emulator?.child.kill('SIGTERM');
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('ships the build, the bin, the demo files, LICENSE and docs, and no sources, tests, benches or CI', () => {
    for (const file of ['package/dist/index.js', 'package/dist/index.d.ts', 'package/dist/cli/main.js', 'package/bin/rostersync.js', 'package/LICENSE', 'package/README.md', 'package/CHANGELOG.md', 'package/pipelines/demo.yaml', 'package/dist/emulator/default-fixture.yaml']) {
      expect(files).toContain(file);
    }
    for (const prefix of ['package/src/', 'package/test/', 'package/bench/', 'package/.ci/', 'package/scripts/', 'package/bin/rostersync-dev.js']) {
      expect(files.filter((file) => file.startsWith(prefix)), prefix).toEqual([]);
    }
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
  });

  it('installs without tsx or the dev dependencies', () => {
    expect(existsSync(join(app, 'node_modules/tsx'))).toBe(false);
    expect(existsSync(join(app, 'node_modules/typescript'))).toBe(false);
    expect(existsSync(join(app, 'node_modules/rostersync/dist/cli/main.js'))).toBe(true);
  });

  it('`rostersync --version` prints the package version', async () => {
    const { stdout } = await run(bin, ['--version'], { cwd: app, encoding: 'utf8' });
    expect(stdout.trim()).toBe(pkg.version);
  });

  it('runs a dry-run sync of the shipped sample against the installed emulator, writing nothing', async () => {
    emulator = await startInstalledEmulator(bin, app);
    writeFileSync(
      join(app, 'pipeline.yaml'),
      [
        'source: { file: node_modules/rostersync/samples/reviewers.csv }',
        'mapping: node_modules/rostersync/mappings/reviewers.yaml',
        'target: { group: { name: Installed reviewers, owner_team: Editorial Office } }',
        '',
      ].join('\n'),
    );
    const env = { ...process.env, SERVICE_BASE_URL: emulator.url, SERVICE_API_KEY: emulator.key, NO_COLOR: '1' };
    const { stdout } = await run(bin, ['sync', 'pipeline.yaml', '--dry-run', '--create-group', '-q'], { cwd: app, env, encoding: 'utf8', timeout: 60_000 });
    expect(stdout).toMatch(/DRY RUN \(exit 0\)/);
    expect(stdout).toMatch(/\+ create\s+38\s+38/);
    const stats = (await (await fetch(`${emulator.url}/_emulator/stats`)).json()) as { writes: { total: number } };
    expect(stats.writes.total).toBe(0);
  });

  it("runs docs/library.md's example as written, from a project of its own", async () => {
    const example = /```js\n([\s\S]*?)```/.exec(readFileSync(join(ROOT, 'docs/library.md'), 'utf8'))?.[1];
    expect(example).toBeDefined();
    const project = join(work, 'library-example');
    mkdirSync(project);
    symlinkSync(join(app, 'node_modules'), join(project, 'node_modules'));
    writeFileSync(join(project, 'try-rostersync.mjs'), example!);
    const { stdout } = await run(process.execPath, ['try-rostersync.mjs'], { cwd: project, encoding: 'utf8', timeout: 120_000 });
    expect(stdout).toContain('planned: 38 creates\n');
    expect(stdout).toMatch(new RegExp(`exit code: 0 report: ${project}/reports/reviewers/\\S+/report\\.html\\n`));
    expect(stdout).toMatch(/custom fields: Expertise level, Subject areas, /);
    expect(existsSync(join(project, '.rostersync', 'reviewers.sqlite'))).toBe(true);
  });

  it('exports the documented library API from `import("rostersync")`', async () => {
    const script = "const m = await import('rostersync'); process.stdout.write(JSON.stringify(Object.keys(m).filter((k) => typeof m[k] === 'function').sort()));";
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: app, encoding: 'utf8' });
    const exported = JSON.parse(stdout) as string[];
    for (const name of ['loadPipeline', 'validatePipeline', 'planSync', 'applyPlan', 'runSync', 'createClient', 'startEmulator']) expect(exported).toContain(name);
  });
});
