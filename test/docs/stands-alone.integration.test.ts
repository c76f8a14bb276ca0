/**
 * The repository stands alone: code, tests and docs cite docs/ and README sections, never the
 * service's spec or a design brief outside the repository, nor issue numbers a reader cannot follow.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const FORBIDDEN = [/\bissues? \d+\b/i, /\bspec §/i, /\bdesign §/i, /\.\.\/shared\//];

function trackedFiles(): string[] {
  // A child process: this file is in the integration project (the unit project allows none).
  return execFileSync('git', ['ls-files', 'src', 'test', 'docs', 'bench', 'scripts', 'README.md', 'CONTRIBUTING.md'], { encoding: 'utf8' }).split('\n').filter((file) => /\.(ts|mts|mjs|js|md|py|yaml)$/.test(file));
}

describe('the repository stands alone', () => {
  it('no file cites an issue number, the spec or the design brief by section, or ../shared/', () => {
    const found: string[] = [];
    for (const file of trackedFiles()) {
      if (file === 'test/docs/stands-alone.integration.test.ts') continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          if (FORBIDDEN.some((pattern) => pattern.test(line))) found.push(`${file}:${index + 1}: ${line.trim().slice(0, 120)}`);
        });
    }
    expect(found).toEqual([]);
  });
});
