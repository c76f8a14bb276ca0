/** The installed bin says when dist/ is older than src/ (a checkout after a pull), instead of silently running the older code. */
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript module of the bin, without types.
import { staleBuildNote } from '../../bin/stale-build.js';

function checkout(distTime: number, srcTime: number): URL {
  const root = mkdtempSync(join(tmpdir(), 'rostersync-stale-'));
  mkdirSync(join(root, 'dist', 'cli'), { recursive: true });
  mkdirSync(join(root, 'src', 'cli'), { recursive: true });
  writeFileSync(join(root, 'dist', 'cli', 'main.js'), '');
  writeFileSync(join(root, 'src', 'cli', 'main.ts'), '');
  utimesSync(join(root, 'dist', 'cli', 'main.js'), distTime, distTime);
  utimesSync(join(root, 'src', 'cli', 'main.ts'), srcTime, srcTime);
  return pathToFileURL(`${root}/`);
}

describe('staleBuildNote', () => {
  it('names the newer source file and the command that rebuilds', () => {
    const note = (staleBuildNote as (root: URL) => string | undefined)(checkout(1_700_000_000, 1_700_000_100));
    expect(note).toContain('dist/ was built before the latest change to src/ (src/cli/main.ts)');
    expect(note).toContain('`npm run build`');
  });

  it('says nothing for a build newer than its sources, or a package without src/', () => {
    expect((staleBuildNote as (root: URL) => string | undefined)(checkout(1_700_000_100, 1_700_000_000))).toBeUndefined();
    const published = mkdtempSync(join(tmpdir(), 'rostersync-pkg-'));
    expect((staleBuildNote as (root: URL) => string | undefined)(pathToFileURL(`${published}/`))).toBeUndefined();
  });
});
