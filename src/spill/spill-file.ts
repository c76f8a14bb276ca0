/**
 * The owner-only temporary file in which a run keeps what waits for apply when it is too much to
 * hold in memory (new records, row keys): the file-backed page store of the plan's spools
 * (plan/page-store.ts), text appended in pieces, each read back by its place.
 *
 * The run deletes its own file when it ends; a run killed outright (SIGKILL, out of memory) cannot,
 * and a nightly job killed so would leave a gigabyte a night behind. So each run first removes the
 * folders of its kind and its user that nobody has touched for a day. A live run may read its file for longer
 * than that (a million creates at 10 calls a second), but it holds the file open: removing the
 * name does not take the data from under it.
 */
import { closeSync, lstatSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserFacingError } from '../errors/user-facing-error.js';
import { fileSystemProblem } from '../errors/file-system-problem.js';
import type { PagePlace, PageStore } from '../plan/page-store.js';

const STALE_MS = 24 * 3600_000;

export function makeSpillDir(parent: string, prefix: string, now = Date.now()): string {
  let names: string[] = [];
  try {
    names = readdirSync(parent).filter((name) => name.startsWith(prefix));
  } catch {
    // An unreadable temporary folder: the new folder below meets the same problem and says so.
  }
  for (const name of names) removeIfStale(join(parent, name), now);
  return mkdtempSync(join(parent, prefix));
}

/**
 * Removes a spill folder of this user untouched for a day. A shared temporary folder holds
 * anything under any name: another user's folder, a plain or empty file, a link, or a folder
 * removed meanwhile is left alone, and the sweep goes on to the next.
 */
function removeIfStale(dir: string, now: number): void {
  try {
    const stat = lstatSync(dir);
    const uid = process.getuid?.();
    if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) return;
    const touched = Math.max(stat.mtimeMs, ...readdirSync(dir).map((file) => lstatSync(join(dir, file)).mtimeMs));
    if (now - touched > STALE_MS) rmSync(dir, { recursive: true, force: true });
  } catch {
    // Removed meanwhile, or not readable: nothing depends on tidying it.
  }
}

export interface SpillFileOptions {
  /** Where the file's folder is made. @default os.tmpdir() */
  parent?: string | undefined;
  /** The folder's name before its random part, e.g. `rostersync-new-records-`. */
  prefix: string;
  /** The file's name in that folder. */
  name: string;
  /** What waits in the file, for the message when it cannot be written ("the new records"). */
  what: string;
  /** How to make room, for that message. */
  hint: string;
  /** Called once, when the file is first written to. */
  onOpen?: (() => void) | undefined;
}

export class SpillFile implements PageStore {
  private open: { dir: string; fd: number; size: number } | undefined;

  constructor(private readonly options: SpillFileOptions) {}

  /** Appends `text`, creating the file first if need be; a full or unwritable disk is a clear refusal. */
  put(text: string): PagePlace {
    const parent = this.options.parent ?? tmpdir();
    try {
      if (!this.open) {
        const dir = makeSpillDir(parent, this.options.prefix);
        this.open = { dir, fd: openSync(join(dir, this.options.name), 'w+', 0o600), size: 0 };
        this.options.onOpen?.();
      }
      const bytes = Buffer.from(text, 'utf8');
      writeSync(this.open.fd, bytes, 0, bytes.length, this.open.size);
      const place = { at: this.open.size, bytes: bytes.length };
      this.open.size += bytes.length;
      return place;
    } catch (error) {
      const problem = fileSystemProblem(error);
      if (!problem) throw error;
      throw new UserFacingError(`could not keep ${this.options.what} waiting for apply in a temporary file under ${parent}: ${problem.words} (${problem.code}). Nothing was written.`, {
        hint: this.options.hint,
      });
    }
  }

  get(place: PagePlace): string {
    const buffer = Buffer.alloc(place.bytes);
    readSync(this.open!.fd, buffer, 0, place.bytes, place.at);
    return buffer.toString('utf8');
  }

  /** Deletes the file and its folder, if there are any. */
  dispose(): void {
    if (!this.open) return;
    closeSync(this.open.fd);
    rmSync(this.open.dir, { recursive: true, force: true });
    this.open = undefined;
  }
}
