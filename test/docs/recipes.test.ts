/**
 * The recipes people copy (README, docs/, CONTRIBUTING, the Action, compose, the image) never let
 * npm resolve a command from the network: `npx rostersync` where rostersync is not installed asks
 * the registry for a package of that name, and whoever publishes one runs with the API key in
 * reach. So rostersync is called as an installed binary or `npx --no-install rostersync`, no recipe
 * says `npx -y`/`--yes`, `npm exec` always carries `--no-install`, and any other `npx` names a
 * binary of a package this project declares (tsx, vitest: present after `npm ci`). And a scheduled
 * run keeps its two streams apart: stdout is the human summary, stderr the JSON log lines, so a
 * recipe that runs rostersync never folds one into the other with `2>&1`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

const RECIPE_FILES = [
  'README.md',
  'CONTRIBUTING.md',
  'action.yml',
  'compose.yaml',
  'Dockerfile',
  ...readdirSync(join(ROOT, 'docker')).map((name) => `docker/${name}`),
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The binaries of the packages package.json declares, which `npx` finds in node_modules/.bin. */
function declaredBinaries(): Set<string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
  const names = new Set<string>();
  for (const dependency of Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })) {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', dependency, 'package.json'), 'utf8')) as { name: string; bin?: string | Record<string, string> };
    if (typeof manifest.bin === 'string') names.add(manifest.name.replace(/^@[^/]+\//, ''));
    else for (const bin of Object.keys(manifest.bin ?? {})) names.add(bin);
  }
  return names;
}

/**
 * The text of a file that a reader could run: every line of a workflow, compose file, Dockerfile or
 * script; of a Markdown page, the lines of its fenced blocks and its `inline code`.
 */
function commandLines(file: string): { line: string; index: number }[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  if (!file.endsWith('.md')) return lines.map((line, index) => ({ line, index }));
  let fenced = false;
  return lines.flatMap((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return [];
    }
    if (fenced) return [{ line, index }];
    return [...line.matchAll(/`([^`]+)`/g)].map((span) => ({ line: span[1]!, index }));
  });
}

/** What in one line could fetch a command: the reason, or undefined. */
export function fetchingCommand(line: string, installed: ReadonlySet<string>): string | undefined {
  for (const match of line.matchAll(/\bnpx((?:\s+-{1,2}[\w-]+)*)\s+([@\w.][@\w./-]*)/g)) {
    const flags = match[1]!.split(/\s+/).filter(Boolean);
    if (flags.includes('-y') || flags.includes('--yes')) return '`npx --yes` installs whatever it is asked for without asking';
    if (flags.includes('--no-install') || flags.includes('--no')) continue;
    const command = match[2]!;
    if (command === 'rostersync') return '`npx rostersync` asks the registry when rostersync is not installed here: use `npx --no-install rostersync` or the installed binary';
    if (!installed.has(command)) return `\`npx ${command}\` names no binary of a declared package, so npx would fetch it`;
  }
  for (const match of line.matchAll(/\bnpm\s+(?:exec|x)\b([^|;&]*)/g)) {
    if (!/\s--no-install\b|\s--no\b/.test(match[1]!)) return '`npm exec` without --no-install may fetch the package';
  }
  return undefined;
}

describe('recipes never resolve a command from the network', () => {
  const installed = declaredBinaries();

  it('knows the forms that fetch and the ones that do not', () => {
    expect(fetchingCommand('npx rostersync sync p.yaml', installed)).toMatch(/--no-install/);
    expect(fetchingCommand('ExecStart=/usr/bin/npx rostersync sync p.yaml', installed)).toBeDefined();
    expect(fetchingCommand('npx -y rostersync', installed)).toMatch(/--yes/);
    expect(fetchingCommand('npm exec rostersync -- sync', installed)).toBeDefined();
    expect(fetchingCommand('npx cowsay hi', installed)).toMatch(/cowsay/);
    expect(fetchingCommand('npx --no-install rostersync sync p.yaml', installed)).toBeUndefined();
    expect(fetchingCommand('npm exec --no-install rostersync -- sync', installed)).toBeUndefined();
    expect(fetchingCommand('npx tsx bench/run.ts', installed)).toBeUndefined();
    expect(fetchingCommand('/srv/rostersync/node_modules/.bin/rostersync sync p.yaml', installed)).toBeUndefined();
  });

  it.each(RECIPE_FILES)('%s', (file) => {
    const found = commandLines(file).flatMap(({ line, index }) => {
      const why = fetchingCommand(line, installed);
      return why ? [`${file}:${index + 1}: ${why}\n    ${line.trim()}`] : [];
    });
    expect(found).toEqual([]);
  });
});

describe('scheduled recipes keep stdout (the summary) and stderr (JSON log lines) apart', () => {
  it.each(RECIPE_FILES)('%s', (file) => {
    const mixed = commandLines(file).flatMap(({ line, index }) => (/\brostersync\b.*\s2>&1/.test(line) && !/^\s*#/.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : []));
    expect(mixed).toEqual([]);
  });
});
