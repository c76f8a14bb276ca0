/**
 * Directories that hold roster names and emails (the state, the reports) sit beside the pipeline
 * file by default, inside the configuration folder teams commit to git. rostersync keeps those
 * defaults (a cron job, a container or a CI cache finds the state whatever the working
 * directory) and instead makes each such directory it creates ignore itself, as Python's venv
 * and pytest's cache do: `git add .` never picks up personal data, and nothing is asked of the user.
 * A directory that existed already is left as its owner set it up.
 */
import { writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
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
