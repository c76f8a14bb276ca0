/**
 * The owner-only temporary folders in which a run keeps what waits for apply (new records, row
 * keys). The run deletes its own when it ends; a run killed outright (SIGKILL, out of memory)
 * cannot, and a nightly job killed so would leave a gigabyte a night behind. So each run first
 * removes the folders of its kind that nobody has touched for a day. A live run may read its
 * file for longer than that (a million creates at 10 calls a second), but it holds the file open:
 * removing the name does not take the data from under it.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

const STALE_MS = 24 * 3600_000;

export function makeSpillDir(parent: string, prefix: string, now = Date.now()): string {
  try {
    for (const name of readdirSync(parent)) {
      if (!name.startsWith(prefix)) continue;
      const dir = join(parent, name);
      const touched = Math.max(statSync(dir).mtimeMs, ...readdirSync(dir).map((file) => statSync(join(dir, file)).mtimeMs));
      if (now - touched > STALE_MS) rmSync(dir, { recursive: true, force: true });
    }
  } catch {
    // Another user's folder, or one removed meanwhile: nothing depends on tidying it.
  }
  return mkdtempSync(join(parent, prefix));
}
