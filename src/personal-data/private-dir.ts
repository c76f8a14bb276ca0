/**
 * Directories that hold roster names and emails (the state, the reports) sit beside the pipeline
 * file by default, inside the configuration folder teams commit to git. rostersync keeps those
 * defaults (a cron job, a container or a CI cache finds the state whatever the working
 * directory) and instead makes each such directory it creates ignore itself, as Python's venv
 * and pytest's cache do: `git add .` never picks up personal data, and nothing is asked of the user.
 * A directory that existed already is left as its owner set it up.
 */
import { lstatSync, mkdirSync, writeFileSync, type Stats } from 'node:fs';
import { lstat, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const SELF_IGNORE = [
  '# Written by rostersync when it created this folder: it holds names and emails from rosters',
  '# (state or reports), so git ignores all of it. Delete this file only to commit personal data.',
  '*',
  '',
].join('\n');

/** `created` is what a recursive mkdir returned: the first directory it made, if any. */
export function ignoreInGitSync(created: string | undefined): void {
  if (created !== undefined) writeFileSync(join(created, '.gitignore'), SELF_IGNORE, { mode: 0o644, flag: 'wx' });
}

export async function ignoreInGit(created: string | undefined): Promise<void> {
  if (created !== undefined) await writeFile(join(created, '.gitignore'), SELF_IGNORE, { mode: 0o644, flag: 'wx' });
}

/**
 * The system's temporary folder is shared: anyone may create a folder of any name there first,
 * and put in it what a run would then read (a pace that stalls it) or write names into. A folder
 * rostersync uses there must be a real folder (not a link) of this user that no one else can
 * write, or, for personal data, open (`closed`). Why not, or undefined when it may be used.
 */
function notOurOwn(path: string, stat: Stats, closed: boolean): string | undefined {
  const uid = process.getuid?.();
  const forbidden = closed ? 0o077 : 0o022;
  if (stat.isDirectory() && (uid === undefined || stat.uid === uid) && (stat.mode & forbidden) === 0) return undefined;
  const what = closed ? 'closed to others' : 'that no one else can write';
  return `${path} is not a folder of this user ${what} (owner ${stat.uid}, mode ${(stat.mode & 0o777).toString(8)})`;
}

/** Makes `path` (mode 0700) if need be, and refuses it unless it is this user's own (notOurOwn). */
export function ownFolderInSharedPlaceSync(path: string, options: { closed: boolean }): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const problem = notOurOwn(path, lstatSync(path), options.closed);
  if (problem) throw new Error(problem);
}

export async function ownFolderInSharedPlace(path: string, options: { closed: boolean }): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  const problem = notOurOwn(path, await lstat(path), options.closed);
  if (problem) throw new Error(problem);
}
