/**
 * A sound state database on a read-only mount (or without write permission, or on a full
 * disk) is not called damaged: following "move it aside" would lose the state.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StateError } from '../../src/state/backend.js';
import { stateOpenError } from '../../src/state/sqlite/schema.js';
import { SqliteStateStore } from '../../src/state/sqlite/sqlite-store.js';

function soundDatabase(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rostersync-ro-'));
  const path = join(dir, 'p.sqlite');
  SqliteStateStore.open(path, 'p').close();
  return path;
}

const codeError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('opening a state database that cannot be written', () => {
  it.each([
    ['EROFS', /the file system is mounted read-only \(EROFS\)/],
    ['SQLITE_READONLY', /its file system is read-only \(SQLITE_READONLY\)/],
    ['SQLITE_READONLY_DBMOVED', /read-only/],
    ['EACCES', /permission denied \(EACCES\)/],
    ['SQLITE_FULL', /no space left on the device \(SQLITE_FULL\)/],
    ['ENOSPC', /no space left on the device \(ENOSPC\)/],
  ])('%s on a sound database: intact, keep it', (code, says) => {
    const path = soundDatabase();
    const error = stateOpenError(path, codeError(code, 'attempt to write a readonly database'));
    expect(error).toBeInstanceOf(StateError);
    expect(error.message).toContain('the state database is intact but cannot be written');
    expect(error.message).toMatch(says);
    expect(error.hint).toMatch(/Do not move or delete it/);
    expect(`${error.message} ${error.hint}`).not.toMatch(/damaged|Move it aside/);
  });

  it('a file that is not SQLite is still called damaged', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'rostersync-ro-')), 'p.sqlite');
    writeFileSync(path, 'not a database at all, just text');
    const error = stateOpenError(path, codeError('SQLITE_NOTADB', 'file is not a database'));
    expect(error.hint).toMatch(/damaged/);
  });

  // Root writes through permissions, so this one runs only as another user (as in CI).
  it.skipIf(process.getuid?.() === 0)('a real read-only directory and file', () => {
    const path = soundDatabase();
    const dir = join(path, '..');
    chmodSync(path, 0o400);
    chmodSync(dir, 0o500);
    try {
      let caught: unknown;
      try {
        SqliteStateStore.open(path, 'p').close();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(StateError);
      expect((caught as Error).message).toContain('intact but cannot be written');
      expect((caught as StateError).hint).not.toMatch(/Move it aside/);
    } finally {
      chmodSync(dir, 0o700);
      chmodSync(path, 0o600);
    }
  });
});
