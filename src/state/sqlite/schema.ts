/**
 * The SQLite state's files and schema: opening errors named for what they are, owner-only modes
 * (the state holds roster emails), and the migrations from every earlier schema version.
 */
import type Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { fileSystemHint, fileSystemProblem } from '../../errors/file-system-problem.js';
import { StateError } from '../backend.js';

/**
 * 2: lock owner's process start time, identity binding, claims and targets (`_shared.sqlite`).
 * 3: records.row_key, the raw row's key for the plan's fast path, and its index.
 * 4: journal.undo_json, the values a write changed (what `rostersync revert` needs), and an index by run.
 * 5: journal.service and journal.group_id, where each write went (a revert acts there or refuses);
 *    undo values of this version say where each `before` value came from (src/apply/undo-record.ts).
 */
export const STATE_SCHEMA_VERSION = 5;

/** The database shared by every pipeline of one state directory (no pipeline name starts with `_`). */
export const SHARED_STATE_FILE = '_shared.sqlite';

export const ROW_KEY_INDEX = 'CREATE INDEX IF NOT EXISTS records_row_key ON records(row_key)';

/**
 * Why a state database would not open. A sound database that cannot be written (a read-only mount,
 * a permission, a full disk) is not called damaged: following "move it aside" would lose the state.
 */
export function stateOpenError(path: string, error: unknown): StateError {
  const problem = fileSystemProblem(error);
  if (problem && problem.kind !== 'missing' && looksLikeSqlite(path)) {
    return new StateError(`${path}: the state database is intact but cannot be written: ${problem.words} (${problem.code})`, {
      hint: `Do not move or delete it: it holds the inventory. ${fileSystemHint(problem, '--state-dir (with a copy of the .sqlite files)')}`,
      cause: error,
    });
  }
  if (problem) {
    return new StateError(`${path}: cannot open the state database: ${problem.words} (${problem.code})`, {
      hint: fileSystemHint(problem, '--state-dir'),
      cause: error,
    });
  }
  return new StateError(`${path}: cannot open the state database: ${(error as Error).message}`, {
    hint: 'The file is not a rostersync state database or is damaged. Move it aside; the next run will say that deletions cannot be computed until records are adopted again with `rostersync state import`.',
    cause: error,
  });
}

/** True when the file starts with SQLite's header ("SQLite format 3\0"). */
function looksLikeSqlite(path: string): boolean {
  try {
    const fd = openSync(path, 'r');
    try {
      const header = Buffer.alloc(16);
      return readSync(fd, header, 0, 16, 0) === 16 && header.toString('latin1') === 'SQLite format 3\0';
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** Creates the file owner-only before SQLite opens it (SQLite gives its -wal and -shm files the same mode). */
export function createOwnerOnly(path: string): void {
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
}

/** Tightens the mode of a state file or directory this user owns (a state made by an older version). */
export function ownerOnly(path: string, mode: number): void {
  try {
    const stat = statSync(path);
    if ((stat.mode & 0o777) !== mode && stat.uid === process.getuid?.()) chmodSync(path, mode);
  } catch {
    // Absent (-wal/-shm before the first write) or not ours: nothing to tighten.
  }
}

export function migrate(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS records (
      client_id TEXT PRIMARY KEY,
      fields_json TEXT NOT NULL,
      hash TEXT NOT NULL,
      run_id TEXT NOT NULL,
      source_row INTEGER,
      updated_at TEXT NOT NULL,
      row_key TEXT
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS journal (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      run_id TEXT NOT NULL,
      client_id TEXT NOT NULL,
      action TEXT NOT NULL,
      state TEXT NOT NULL,
      status INTEGER,
      error TEXT,
      attempts INTEGER,
      at TEXT NOT NULL,
      undo_json TEXT,
      service TEXT,
      group_id INTEGER
    );
    CREATE INDEX IF NOT EXISTS journal_client ON journal(client_id, id);
    CREATE TABLE IF NOT EXISTS runs (
      id TEXT PRIMARY KEY,
      started_at TEXT NOT NULL,
      finished_at TEXT,
      outcome TEXT,
      dry_run INTEGER NOT NULL,
      valid_records INTEGER,
      source_sha256 TEXT,
      counts_json TEXT
    );
    CREATE TABLE IF NOT EXISTS lock (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      owner TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL, proc_start TEXT,
      started_at TEXT NOT NULL, heartbeat_at TEXT NOT NULL, run_id TEXT NOT NULL
    );
    INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', '${STATE_SCHEMA_VERSION}');
    INSERT OR IGNORE INTO meta(key, value) VALUES ('serial', '0');
    CREATE TABLE IF NOT EXISTS shared.claims (
      service TEXT NOT NULL,
      group_id INTEGER NOT NULL,
      client_id TEXT NOT NULL,
      pipeline TEXT NOT NULL,
      claimed_at TEXT NOT NULL,
      PRIMARY KEY (service, group_id, client_id)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS shared.targets (
      service TEXT NOT NULL,
      group_id INTEGER NOT NULL,
      pipeline TEXT NOT NULL,
      prefixes TEXT,
      registered_at TEXT NOT NULL,
      PRIMARY KEY (service, group_id, pipeline)
    );
  `);
  let version = Number((db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string }).value);
  if (version === 1) {
    // 1 → 2: the lock names its owner's process start time; identity, claims and targets are new rows and tables.
    db.transaction(() => {
      db.exec("ALTER TABLE lock ADD COLUMN proc_start TEXT; UPDATE meta SET value = '2' WHERE key = 'schema_version';");
    })();
    version = 2;
  }
  if (version === 2) {
    // 2 → 3: the raw row's key beside each record, for the plan's fast path (NULL: take the full path).
    db.transaction(() => {
      db.exec("ALTER TABLE records ADD COLUMN row_key TEXT; UPDATE meta SET value = '3' WHERE key = 'schema_version';");
    })();
    version = 3;
  }
  if (version === 3) {
    // 3 → 4: the values each write changed, for `revert` (NULL for the writes journaled before).
    db.transaction(() => {
      const columns = db.prepare("SELECT name FROM pragma_table_info('journal')").pluck().all() as string[];
      // A state whose journal was just created (CREATE TABLE above) has the column already.
      if (!columns.includes('undo_json')) db.exec('ALTER TABLE journal ADD COLUMN undo_json TEXT');
      db.exec("UPDATE meta SET value = '4' WHERE key = 'schema_version'");
    })();
    version = 4;
  }
  if (version === 4) {
    // 4 → 5: the service and group each write went to (NULL for the writes journaled before:
    // revert refuses them, saying so, rather than guess where they went).
    db.transaction(() => {
      const columns = db.prepare("SELECT name FROM pragma_table_info('journal')").pluck().all() as string[];
      if (!columns.includes('service')) db.exec('ALTER TABLE journal ADD COLUMN service TEXT');
      if (!columns.includes('group_id')) db.exec('ALTER TABLE journal ADD COLUMN group_id INTEGER');
      db.exec("UPDATE meta SET value = '5' WHERE key = 'schema_version'");
    })();
    version = 5;
  }
  if (version !== STATE_SCHEMA_VERSION) {
    throw new Error(`state schema version ${version} is not supported (expected ${STATE_SCHEMA_VERSION})`);
  }
  // The fast path reads keys in key order; the index (which carries client_id, the primary key)
  // also makes counting and listing the inventory skip the fields.
  db.exec(ROW_KEY_INDEX);
  // `revert` reads one run's writes.
  db.exec('CREATE INDEX IF NOT EXISTS journal_run ON journal(run_id)');
}

