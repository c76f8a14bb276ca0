/**
 * Copies of the checkout for tests that run in a project folder of their own. A test's input is
 * what git tracks (or what the test writes itself), never what a user's own runs left in the
 * working tree: a walkthrough against `rostersync emulator --port 4010` leaves a state bound to
 * that service under `pipelines/.rostersync/` and reports under `pipelines/reports/`, both
 * ignored by git, and a copy that carried them made `npm test` fail in a clone someone had used
 * while a clean clone passed.
 *
 * `copyTracked` copies the tracked files of some folders (their working-tree content, so a change
 * not yet committed is tested), then `assertNoIgnoredPaths` checks the copy: any path in it that
 * the checkout's ignore rules match fails the test, naming the paths.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

function git(root: string, args: string[], input?: string): string {
  return execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
}

/** Whether `root` is a git work tree that git on this machine can read. */
export function isGitWorkTree(root: string): boolean {
  try {
    return git(root, ['rev-parse', '--is-inside-work-tree']).trim() === 'true';
  } catch {
    return false;
  }
}

/**
 * The files under `folders` that belong to the project (paths relative to `root`, `/`-separated):
 * tracked, or new and not ignored (a file an engineer has not yet added is part of the change under
 * test); never what the ignore rules match.
 */
export function trackedFiles(root: string, folders: readonly string[]): string[] {
  if (!isGitWorkTree(root)) {
    throw new Error(`${root} is not a git work tree: a test copies only tracked files, so run it in a clone (git clone), not in an export`);
  }
  const listed = git(root, ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...folders]).split('\0').filter(Boolean);
  // A tracked file deleted in the working tree is not part of the project the test means.
  return [...new Set(listed)].filter((file) => existsSync(join(root, file)));
}

/** Every file under `dir`, relative to it, `/`-separated. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => !entry.isDirectory())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

/** The paths among `paths` (relative to `root`) that the checkout's ignore rules match. */
export function ignoredAmong(root: string, paths: readonly string[]): string[] {
  if (paths.length === 0) return [];
  try {
    // --no-index: judge by the rules alone, whether or not a path is tracked or exists in `root`.
    return git(root, ['check-ignore', '--no-index', '--stdin', '-z'], paths.join('\0') + '\0').split('\0').filter(Boolean);
  } catch (error) {
    // check-ignore exits 1 when no path is ignored.
    if ((error as { status?: number }).status === 1) return [];
    throw error;
  }
}

/**
 * Fails when the copy at `copy` holds a path that the ignore rules of the checkout at `root` match
 * (a state, a report, a build, an `.env`): a test's copy must be built from tracked files only.
 * `allowed` names the paths the test itself wrote there on purpose.
 */
export function assertNoIgnoredPaths(root: string, copy: string, allowed: readonly string[] = []): void {
  const ignored = ignoredAmong(root, filesUnder(copy)).filter((path) => !allowed.some((prefix) => path === prefix || path.startsWith(`${prefix}/`)));
  if (ignored.length > 0) {
    const shown = ignored.slice(0, 10).join(', ');
    throw new Error(`the test's copy of the project at ${copy} holds ${ignored.length} path(s) that git ignores (${shown}${ignored.length > 10 ? ', …' : ''}): tests build their inputs from tracked files only`);
  }
}

/** Copies the tracked files of `folders` from the checkout at `root` into `dest`, then checks the copy. */
export function copyTracked(root: string, folders: readonly string[], dest: string): string[] {
  const files = trackedFiles(root, folders);
  for (const file of files) {
    const target = join(dest, file);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(join(root, file), target);
  }
  assertNoIgnoredPaths(root, dest);
  return files;
}
