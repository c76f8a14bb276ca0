/**
 * File-system failures a person can act on (a full disk, a read-only mount, a permission), named
 * in words with what to do, instead of a bare code or "this is a bug". SQLite reports the same
 * conditions with its own codes (better-sqlite3 puts them on `error.code`).
 */

export type FileSystemProblemKind = 'disk_full' | 'read_only' | 'permission' | 'missing';

export interface FileSystemProblem {
  kind: FileSystemProblemKind;
  /** The code seen, e.g. `ENOSPC` or `SQLITE_FULL`. */
  code: string;
  /** For a sentence: "no space left on the device". */
  words: string;
}

const KINDS: Record<string, { kind: FileSystemProblemKind; words: string }> = {
  ENOSPC: { kind: 'disk_full', words: 'no space left on the device' },
  EDQUOT: { kind: 'disk_full', words: 'the disk quota is exhausted' },
  SQLITE_FULL: { kind: 'disk_full', words: 'no space left on the device' },
  EROFS: { kind: 'read_only', words: 'the file system is mounted read-only' },
  SQLITE_READONLY: { kind: 'read_only', words: 'the file, its directory or its file system is read-only' },
  EACCES: { kind: 'permission', words: 'permission denied' },
  EPERM: { kind: 'permission', words: 'operation not permitted' },
  SQLITE_PERM: { kind: 'permission', words: 'permission denied' },
  ENOENT: { kind: 'missing', words: 'no such file or directory' },
  ENOTDIR: { kind: 'missing', words: 'a part of the path is not a directory' },
};

/** The problem behind an error (or its causes), or undefined when it is not one of these. */
export function fileSystemProblem(error: unknown): FileSystemProblem | undefined {
  for (let current: unknown = error, depth = 0; current !== null && typeof current === 'object' && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      // SQLite extended codes: SQLITE_READONLY_DBMOVED, SQLITE_READONLY_RECOVERY, ...
      const base = KINDS[code] ? code : code.replace(/^(SQLITE_[A-Z]+)_.*$/, '$1');
      const known = KINDS[base];
      if (known) return { ...known, code };
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** What to do about a problem, for a hint; `where` names the flag or setting that moves the files. */
export function fileSystemHint(problem: FileSystemProblem, where: string): string {
  switch (problem.kind) {
    case 'disk_full':
      return `Free some disk space (or use ${where} on another disk) and run again.`;
    case 'read_only':
    case 'permission':
      return `Make the directory writable for this user, or use ${where} to point at a writable one.`;
    case 'missing':
      return `Create the directory, or use ${where} to point at an existing one.`;
  }
}
