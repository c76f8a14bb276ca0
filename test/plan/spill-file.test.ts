import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { makeSpillDir } from '../../src/plan/spill-file.js';

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
