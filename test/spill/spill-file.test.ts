import { chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { makeSpillDir } from '../../src/spill/spill-file.js';

let parent: string;
afterEach(() => rmSync(parent, { recursive: true, force: true }));

it('removes the folders of killed runs untouched for a day, and keeps recent ones and other kinds', () => {
  parent = mkdtempSync(join(tmpdir(), 'spill-dir-test-'));
  const DAY = 24 * 3600;
  const now = Date.now();
  const aged = (name: string, ageSeconds: number) => {
    const dir = join(parent, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'records.txt'), 'x');
    const at = now / 1000 - ageSeconds;
    utimesSync(join(dir, 'records.txt'), at, at);
    utimesSync(dir, at, at);
  };
  aged('rostersync-new-records-old', 2 * DAY);
  aged('rostersync-new-records-recent', 3600);
  aged('rostersync-row-keys-old', 2 * DAY);
  const made = makeSpillDir(parent, 'rostersync-new-records-', now);
  expect(readdirSync(parent).sort()).toEqual(['rostersync-new-records-recent', 'rostersync-row-keys-old', made.slice(parent.length + 1)].sort());
});

it('skips what is not its own in a shared temporary folder (empty files, links, other users\' folders) and goes on', (ctx) => {
  parent = mkdtempSync(join(tmpdir(), 'spill-dir-test-'));
  const old = Date.now() / 1000 - 2 * 24 * 3600;
  const stale = ['a', 'b', 'c', 'd'].map((suffix) => `rostersync-new-records-stale-${suffix}`);
  const junk = ['e', 'f', 'g', 'h'].map((suffix) => `rostersync-new-records-junk-${suffix}`);
  // Interleaved, so that whatever order the folder lists them in, a stale folder follows junk.
  for (let i = 0; i < stale.length; i += 1) {
    mkdirSync(join(parent, stale[i]!));
    utimesSync(join(parent, stale[i]!), old, old);
    if (i % 2 === 0) writeFileSync(join(parent, junk[i]!), '');
    else symlinkSync('/nonexistent', join(parent, junk[i]!));
  }
  const others = 'rostersync-new-records-another-user';
  const root = process.getuid?.() === 0;
  if (root) {
    mkdirSync(join(parent, others), { mode: 0o700 });
    chownSync(join(parent, others), 65534, 65534);
    utimesSync(join(parent, others), old, old);
  }
  const made = makeSpillDir(parent, 'rostersync-new-records-');
  const left = readdirSync(parent);
  expect(left.filter((name) => name.includes('-stale-'))).toEqual([]);
  expect(left.filter((name) => name.includes('-junk-')).sort()).toEqual(junk);
  expect(left).toContain(made.slice(parent.length + 1));
  if (!root) return ctx.skip('another user\'s folder can be made only as root');
  expect(left).toContain(others);
});
