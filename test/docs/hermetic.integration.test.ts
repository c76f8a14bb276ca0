/**
 * Tests build their inputs from tracked files only. In a clone someone has used, the working tree
 * holds what git ignores (a state bound to another emulator, reports, a dist/ built elsewhere, an
 * `.env`): a copy that carried any of it made `npm test` depend on the user's history.
 * `copyTracked` (test/support/tracked-copy.ts) copies what git tracks and checks the copy; this file
 * proves both on a throwaway repository, and that no test copies a checkout folder another way.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertNoIgnoredPaths, copyTracked, filesUnder } from '../support/tracked-copy.js';
import { ROOT } from './doc-harness.js';

const temps: string[] = [];
function temp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function write(root: string, file: string, text: string): void {
  mkdirSync(dirname(join(root, file)), { recursive: true });
  writeFileSync(join(root, file), text);
}

/** A repository with the project's own ignore rules, one tracked pipeline, and what a walkthrough leaves behind. */
function usedClone(): string {
  const repo = temp('rostersync-used-clone-');
  execFileSync('git', ['init', '-q', repo]);
  writeFileSync(join(repo, '.gitignore'), readFileSync(join(ROOT, '.gitignore')));
  write(repo, 'pipelines/reviewers.yaml', 'name: reviewers\n');
  write(repo, 'samples/reviewers.csv', 'id,name\n');
  execFileSync('git', ['-C', repo, 'add', '-A']);
  write(repo, 'pipelines/.rostersync/reviewers.sqlite', 'a state bound to http://127.0.0.1:4010');
  write(repo, 'pipelines/reports/reviewers/2026-01-01/report.json', '{}');
  write(repo, 'samples/export.log', 'log');
  write(repo, '.env', 'SERVICE_API_KEY=secret');
  return repo;
}

describe('a test copy of the project', () => {
  it('holds the tracked files only, not the state, reports and logs a walkthrough left', () => {
    const repo = usedClone();
    const copy = temp('rostersync-copy-');
    expect(copyTracked(repo, ['pipelines', 'samples'], copy)).toEqual(['pipelines/reviewers.yaml', 'samples/reviewers.csv']);
    expect(filesUnder(copy)).toEqual(['pipelines/reviewers.yaml', 'samples/reviewers.csv']);
  });

  it('fails, naming the paths, when a copy holds what git ignores', () => {
    const repo = usedClone();
    const copy = temp('rostersync-copy-');
    cpSync(join(repo, 'pipelines'), join(copy, 'pipelines'), { recursive: true });
    cpSync(join(repo, '.env'), join(copy, '.env'));
    expect(() => assertNoIgnoredPaths(repo, copy)).toThrow(/holds 3 path\(s\) that git ignores \(\.env, pipelines\/\.rostersync\/reviewers\.sqlite, pipelines\/reports\/reviewers\/2026-01-01\/report\.json\)/);
  });

  it('is how every test copies a folder of the checkout: no recursive copy of a checkout folder elsewhere', () => {
    const offenders: string[] = [];
    for (const file of readdirSync(join(ROOT, 'test'), { recursive: true }) as string[]) {
      if (!/\.(ts|mjs)$/.test(file) || file.endsWith('tracked-copy.ts') || file.endsWith('hermetic.integration.test.ts')) continue;
      const text = readFileSync(join(ROOT, 'test', file), 'utf8');
      // A recursive cp/cpSync from a path built on the checkout's root copies whatever the working tree holds.
      if (/\bcp(Sync)?\(\s*(join|resolve)\(\s*(ROOT|root|REPO)\b[^;]*recursive/.test(text)) offenders.push(`test/${file}`);
    }
    expect(offenders).toEqual([]);
  });
});
