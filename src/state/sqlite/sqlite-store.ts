/**
 * The embedded state backend: one SQLite database per pipeline, in WAL mode, written by the
 * single writer (apply) the moment each outcome is known. The contract is src/state/backend.ts.
 *
 * Beside it, one database per state directory (`_shared.sqlite`, attached) holds what pipelines
 * sharing that location must agree on: the claim of each record (service, group, client_id →
 * pipeline) and which pipelines target which group, with their declared client_id prefixes.
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ignoreInGitSync } from '../../personal-data/private-dir.js';
import { ROW_KEY_LENGTH } from '../../mapping/row-key-length.js';
import type { FieldValue } from '../../client/schemas.js';
import {
  StateError,
  type AdoptedRecord,
  type AppliedRecord,
  type DeletedRecord,
  type JournalEntry,
  type JournalState,
  type OwnedRecord,
  type RowKeyEntry,
  type RowKeyPage,
  type RunRow,
  type StateBackend,
  type StateStoreOptions,
  type Target,
  type UnfinishedWrite,
} from '../backend.js';
import { normalizeServiceUrl, type StateIdentity } from '../identity.js';
import { JOURNAL_COLUMNS, toJournalEntry, toOwned, toRun, type JournalDbRow, type RecordRow, type RunDbRow } from '../rows.js';
import { StoreBase } from '../store-base.js';
import { SqliteClaims } from './claims.js';
import { LockRow } from './lock-row.js';
import { createOwnerOnly, migrate, ownerOnly, ROW_KEY_INDEX, SHARED_STATE_FILE, stateOpenError } from './schema.js';

/** Ids per inventory lookup: measured fastest around 500 (SQLite allows up to 32,766 parameters). */
const LOOKUP_BATCH = 500;

/** Row keys from which `setRowKeyPages` rebuilds the row_key index rather than update it. */
const ROW_KEY_BULK = 50_000;

/** Row keys per page of `rowKeyPages`. */
export const ROW_KEY_PAGE = 50_000;

function hashesQuery(count: number): string {
  return `SELECT client_id, hash FROM records WHERE client_id IN (${new Array(count).fill('?').join(',')})`;
}

export class SqliteStateStore extends StoreBase implements StateBackend {
  readonly path: string;
  readonly pipeline: string;
  readonly lookupBatch = LOOKUP_BATCH;
  private readonly db: Database.Database;
  protected readonly now: () => number;
  protected readonly lock: LockRow;
  protected readonly claims: SqliteClaims;
  private readonly stmts;

  private constructor(path: string, pipeline: string, db: Database.Database, options: StateStoreOptions) {
    super();
    this.path = path;
    this.pipeline = pipeline;
    this.db = db;
    this.now = options.now ?? Date.now;
    this.lock = new LockRow(db, pipeline, this.now);
    this.claims = new SqliteClaims(db, pipeline, () => this.iso());
    this.stmts = {
      getMeta: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
      setMeta: db.prepare('INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
      deleteMeta: db.prepare('DELETE FROM meta WHERE key = ?'),
      bumpSerial: db.prepare("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'serial'"),
      getRecord: db.prepare<[string], RecordRow>('SELECT * FROM records WHERE client_id = ?'),
      upsertRecord: db.prepare(
        `INSERT INTO records(client_id, fields_json, hash, run_id, source_row, updated_at, row_key)
         VALUES (@clientId, @fieldsJson, @hash, @runId, @sourceRow, @updatedAt, @rowKey)
         ON CONFLICT(client_id) DO UPDATE SET fields_json = excluded.fields_json, hash = excluded.hash,
           run_id = excluded.run_id, source_row = excluded.source_row, updated_at = excluded.updated_at, row_key = excluded.row_key`,
      ),
      deleteRecord: db.prepare('DELETE FROM records WHERE client_id = ?'),
      // Only while the record still holds the hash the key was computed for (see rowKeys()).
      setRowKey: db.prepare('UPDATE records SET row_key = ? WHERE client_id = ? AND hash = ?'),
      hashBatch: db.prepare(hashesQuery(LOOKUP_BATCH)),
      journalInsert: db.prepare(`INSERT INTO journal(run_id, client_id, action, state, at, undo_json, service, group_id) VALUES (?, ?, ?, 'sent', ?, ?, ?, ?)`),
      journalUpdate: db.prepare(
        `UPDATE journal SET state = @state, status = @status, error = @error, attempts = @attempts, at = @at, undo_json = COALESCE(@undo, undo_json) WHERE id = @id`,
      ),
    };
  }

  /** Opens (creating if needed) the state database of one pipeline. */
  static open(path: string, pipeline: string, options: StateStoreOptions = {}): SqliteStateStore {
    // The state holds roster emails: owner-only directory and files.
    const dir = dirname(path);
    ignoreInGitSync(mkdirSync(dir, { recursive: true, mode: 0o700 }));
    ownerOnly(dir, 0o700);
    const sharedPath = join(dir, SHARED_STATE_FILE);
    let db: Database.Database;
    try {
      createOwnerOnly(path);
      createOwnerOnly(sharedPath);
      db = new Database(path);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('busy_timeout = 5000');
      db.prepare('ATTACH DATABASE ? AS shared').run(sharedPath);
      db.pragma('shared.journal_mode = WAL');
      db.pragma('shared.synchronous = NORMAL');
      migrate(db);
      for (const file of [path, sharedPath]) for (const suffix of ['', '-wal', '-shm']) ownerOnly(file + suffix, 0o600);
    } catch (error) {
      throw stateOpenError(path, error);
    }
    const owner = db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'pipeline'").get();
    if (!owner) {
      db.prepare("INSERT INTO meta(key, value) VALUES ('pipeline', ?)").run(pipeline);
    } else if (owner.value !== pipeline) {
      db.close();
      throw new StateError(`${path}: this state database belongs to pipeline "${owner.value}", not "${pipeline}".`, {
        hint: 'Each pipeline has its own state. Point state_dir (or --state-dir) at the right directory, or rename the pipeline back.',
      });
    }
    return new SqliteStateStore(path, pipeline, db, options);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  transaction<T>(body: () => T): T {
    return this.db.transaction(body).immediate();
  }

  // --- meta -------------------------------------------------------------------------------

  getMeta(key: string): string | undefined {
    return this.stmts.getMeta.get(key)?.value;
  }

  setMeta(key: string, value: string): void {
    this.stmts.setMeta.run(key, value);
  }

  protected deleteMeta(key: string): void {
    this.stmts.deleteMeta.run(key);
  }

  setGroupId(groupId: number, options: { createdHere?: boolean; name?: string } = {}): void {
    this.db.transaction(() => {
      if (groupId !== this.groupId()) this.deleteMeta('group_name');
      this.setMeta('group_id', String(groupId));
      this.setMeta('group_created_here', options.createdHere ? '1' : '0');
      if (options.name !== undefined) this.setMeta('group_name', options.name);
      this.deleteMeta('group_intent');
      this.stmts.bumpSerial.run();
    })();
  }

  identity(): StateIdentity {
    return {
      pipeline: this.pipeline,
      baseUrl: this.getMeta('service_url') ?? null,
      groupId: this.groupId(),
      groupCreatedHere: this.getMeta('group_created_here') === '1',
      groupName: this.getMeta('group_name') ?? null,
    };
  }

  bindService(baseUrl: string): void {
    this.db.transaction(() => {
      this.setMeta('service_url', normalizeServiceUrl(baseUrl));
      this.stmts.bumpSerial.run();
    })();
  }

  /**
   * Moves the state to another service and/or group (`state rebind`, `state set-group --retarget`).
   * The records this pipeline owned stay where they are, untouched and no longer owned (nor
   * claimed): the inventory is emptied, unfinished writes of the old target are abandoned, and
   * the group no longer counts as created here. Returns how many records were let go.
   */
  retarget(target: { baseUrl: string | null; groupId: number | null }): { released: number } {
    return this.db.transaction(() => {
      const before = this.identity();
      const released = this.ownedCount();
      if (before.baseUrl !== null && before.groupId !== null) {
        this.db.prepare('DELETE FROM shared.claims WHERE service = ? AND group_id = ? AND pipeline = ?').run(before.baseUrl, before.groupId, this.pipeline);
        this.db.prepare('DELETE FROM shared.targets WHERE service = ? AND group_id = ? AND pipeline = ?').run(before.baseUrl, before.groupId, this.pipeline);
      }
      this.db.prepare('DELETE FROM records').run();
      this.db.prepare("UPDATE journal SET state = 'abandoned' WHERE state IN ('planned', 'sent', 'failed')").run();
      if (target.baseUrl === null) this.deleteMeta('service_url');
      else this.setMeta('service_url', normalizeServiceUrl(target.baseUrl));
      if (target.groupId === null) this.deleteMeta('group_id');
      else this.setMeta('group_id', String(target.groupId));
      if (target.groupId !== before.groupId) this.deleteMeta('group_name');
      this.setMeta('group_created_here', '0');
      this.deleteMeta('group_intent');
      this.stmts.bumpSerial.run();
      return { released };
    })();
  }

  planSecret(): string {
    const existing = this.getMeta('plan_secret');
    if (existing) return existing;
    const secret = randomBytes(32).toString('hex');
    this.db.prepare("INSERT OR IGNORE INTO meta(key, value) VALUES ('plan_secret', ?)").run(secret);
    return this.getMeta('plan_secret')!;
  }

  // --- inventory --------------------------------------------------------------------------

  ownedCount(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM records').get() as { n: number }).n;
  }

  /**
   * Hashes of the given client_ids that are owned. The planner asks in batches (one IN query per
   * batch costs about 1.3 µs an id, less than loading the whole inventory into a Map, and keeps a
   * million-record inventory on disk instead of in memory).
   */
  ownedHashesOf(clientIds: readonly string[]): Map<string, string> {
    const result = new Map<string, string>();
    for (let start = 0; start < clientIds.length; start += LOOKUP_BATCH) {
      const batch = clientIds.slice(start, start + LOOKUP_BATCH);
      const statement = batch.length === LOOKUP_BATCH ? this.stmts.hashBatch : this.db.prepare(hashesQuery(batch.length));
      for (const [clientId, hash] of statement.raw().iterate(...batch) as Iterable<[string, string]>) result.set(clientId, hash);
    }
    return result;
  }

  /** Every owned client_id, streamed from disk. */
  *ownedIds(): IterableIterator<string> {
    yield* this.db.prepare('SELECT client_id FROM records').pluck().iterate() as IterableIterator<string>;
  }

  /**
   * The row keys the inventory knows, with their client_ids, in pages: the plan's fast path
   * (src/plan/known-rows.ts). A row key is only ever stored together with the hash its row maps to
   * (recordApplied, setRowKeys), and cleared by any other write of the record. Each page is one
   * query over the row_key index, so a million keys cost about 200 milliseconds and no object
   * per record. Read every page before writing: SQLite allows no write while a query is open.
   */
  *rowKeyPages(pageSize = ROW_KEY_PAGE): IterableIterator<RowKeyPage> {
    // Both aggregates step through the same rows in one pass, so the i-th key belongs to the i-th
    // client_id whatever their order. Keys are all ROW_KEY_LENGTH long, so the greatest
    // row_key || client_id is the greatest (row_key, client_id) pair: where the next page starts.
    const query = this.db.prepare<[string, string, number], { rowKeys: string | null; clientIds: string; count: number; last: string }>(
      `SELECT group_concat(row_key, '') AS rowKeys, group_concat(client_id, char(0)) AS clientIds,
              count(*) AS count, max(row_key || client_id) AS last
       FROM (SELECT row_key, client_id FROM records
             WHERE length(row_key) = ${ROW_KEY_LENGTH} AND (row_key, client_id) > (?, ?)
             ORDER BY row_key, client_id LIMIT ?)`,
    );
    let after: [string, string] = ['', ''];
    for (;;) {
      const { last, ...page } = query.get(...after, pageSize)!;
      if (page.rowKeys === null) return;
      yield page as RowKeyPage;
      if (page.count < pageSize) return;
      after = [last.slice(0, ROW_KEY_LENGTH), last.slice(ROW_KEY_LENGTH)];
    }
  }

  setRowKeys(entries: readonly RowKeyEntry[]): void {
    if (entries.length > 0) this.setRowKeyPages([entries], entries.length);
  }

  /**
   * `setRowKeys` for pages of entries, in one transaction; `expected` is about how many. Many keys
   * (the first sync after a mapping, listing or version change stores one for every record) are
   * written with the row_key index dropped and built again after: at a million records, updating
   * the index entry by entry took about 27 s, rebuilding it about 1 s (and the updates 4 s).
   */
  setRowKeyPages(pages: Iterable<readonly RowKeyEntry[]>, expected: number): void {
    this.db.transaction(() => {
      const rebuild = expected >= ROW_KEY_BULK;
      if (rebuild) this.db.exec('DROP INDEX IF EXISTS records_row_key');
      for (const page of pages) for (const entry of page) this.stmts.setRowKey.run(entry.rowKey, entry.clientId, entry.hash);
      if (rebuild) this.db.exec(ROW_KEY_INDEX);
    })();
  }

  getOwned(clientId: string): OwnedRecord | undefined {
    const row = this.stmts.getRecord.get(clientId);
    return row ? toOwned(row) : undefined;
  }

  lastApplied(clientIds: Iterable<string>): Map<string, Record<string, FieldValue>> {
    const result = new Map<string, Record<string, FieldValue>>();
    for (const clientId of clientIds) {
      const row = this.stmts.getRecord.get(clientId);
      if (row) result.set(clientId, JSON.parse(row.fields_json) as Record<string, FieldValue>);
    }
    return result;
  }

  listOwned(limit = Number.MAX_SAFE_INTEGER): OwnedRecord[] {
    return (this.db.prepare('SELECT * FROM records ORDER BY client_id LIMIT ?').all(limit) as RecordRow[]).map(toOwned);
  }

  recordApplied(entry: AppliedRecord): void {
    this.db.transaction(() => {
      this.stmts.upsertRecord.run({
        clientId: entry.clientId,
        fieldsJson: entry.fieldsJson,
        hash: entry.hash,
        runId: entry.runId,
        sourceRow: entry.sourceRow,
        updatedAt: this.iso(),
        rowKey: entry.rowKey ?? null,
      });
      this.finishJournal(entry.journalId, 'done', entry.status, null, entry.attempts, entry.undoJson);
      this.stmts.bumpSerial.run();
    })();
  }

  /** Writes the outcome of a successful delete together with its journal entry. */
  recordDeleted(entry: DeletedRecord): void {
    this.db.transaction(() => {
      this.stmts.deleteRecord.run(entry.clientId);
      this.releaseBoundClaim(entry.clientId);
      this.finishJournal(entry.journalId, 'done', entry.status, null, entry.attempts);
      this.stmts.bumpSerial.run();
    })();
  }

  adopt(entry: AdoptedRecord): void {
    this.db.transaction(() => {
      this.stmts.upsertRecord.run({ ...entry, sourceRow: null, updatedAt: this.iso(), rowKey: null });
      this.stmts.bumpSerial.run();
    })();
  }

  forget(clientId: string): boolean {
    return this.db.transaction(() => {
      this.releaseBoundClaim(clientId);
      const changes = this.stmts.deleteRecord.run(clientId).changes;
      if (changes > 0) this.stmts.bumpSerial.run();
      return changes > 0;
    })();
  }

  /** A record no longer owned is no longer claimed on the target the state is bound to. */
  private releaseBoundClaim(clientId: string): void {
    const { baseUrl, groupId } = this.identity();
    if (baseUrl !== null && groupId !== null) this.claims.release({ baseUrl, groupId }, [clientId]);
  }

  // --- journal ----------------------------------------------------------------------------

  journalSent(runId: string, clientId: string, action: string, undoJson: string | null = null, target: Target | null = null): number {
    return Number(this.stmts.journalInsert.run(runId, clientId, action, this.iso(), undoJson, target?.baseUrl ?? null, target?.groupId ?? null).lastInsertRowid);
  }

  journalFailed(id: number, status: number | null, error: string, attempts: number): void {
    this.finishJournal(id, 'failed', status, error, attempts);
  }

  private finishJournal(id: number, state: JournalState, status: number | null, error: string | null, attempts: number, undo: string | null = null): void {
    this.stmts.journalUpdate.run({ id, state, status, error, attempts, at: this.iso(), undo });
  }

  runJournal(runId: string): JournalEntry[] {
    return (this.db.prepare(`SELECT ${JOURNAL_COLUMNS} FROM journal WHERE run_id = ? ORDER BY id`).all(runId) as JournalDbRow[]).map(toJournalEntry);
  }

  journalOf(clientIds: readonly string[]): JournalEntry[] {
    const entries: JournalEntry[] = [];
    for (let start = 0; start < clientIds.length; start += LOOKUP_BATCH) {
      const batch = clientIds.slice(start, start + LOOKUP_BATCH);
      const rows = this.db
        .prepare(`SELECT ${JOURNAL_COLUMNS} FROM journal WHERE client_id IN (${batch.map(() => '?').join(',')}) ORDER BY id`)
        .all(...batch) as JournalDbRow[];
      entries.push(...rows.map(toJournalEntry));
    }
    return entries.sort((a, b) => a.id - b.id);
  }


  unfinishedOrFailed(): Map<string, UnfinishedWrite> {
    const rows = this.db
      .prepare(
        `SELECT client_id, action, state, status FROM journal WHERE id IN (SELECT MAX(id) FROM journal GROUP BY client_id) AND state IN ('failed', 'sent', 'planned')`,
      )
      .all() as { client_id: string; action: UnfinishedWrite['action']; state: JournalState; status: number | null }[];
    return new Map(rows.map((row) => [row.client_id, { action: row.action, state: row.state, status: row.status }]));
  }

  // --- runs -------------------------------------------------------------------------------

  startRun(run: { id: string; dryRun: boolean; sourceSha256: string }): void {
    this.db
      .prepare('INSERT INTO runs(id, started_at, dry_run, source_sha256) VALUES (?, ?, ?, ?)')
      .run(run.id, this.iso(), run.dryRun ? 1 : 0, run.sourceSha256);
  }

  finishRun(run: { id: string; outcome: string; validRecords: number; counts: unknown }): void {
    this.db
      .prepare('UPDATE runs SET finished_at = ?, outcome = ?, valid_records = ?, counts_json = ? WHERE id = ?')
      .run(this.iso(), run.outcome, run.validRecords, JSON.stringify(run.counts), run.id);
  }

  lastSuccessfulRun(): RunRow | undefined {
    const row = this.db
      .prepare("SELECT * FROM runs WHERE dry_run = 0 AND outcome IN ('success', 'warning', 'partial') AND (source_sha256 IS NULL OR source_sha256 NOT LIKE 'revert:%') ORDER BY started_at DESC, rowid DESC LIMIT 1")
      .get() as RunDbRow | undefined;
    return row ? toRun(row) : undefined;
  }

  findRun(id: string): RunRow | undefined {
    const row = this.db.prepare('SELECT * FROM runs WHERE id = ?').get(id) as RunDbRow | undefined;
    return row ? toRun(row) : undefined;
  }

  recentRuns(limit = 10): RunRow[] {
    return (this.db.prepare('SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?').all(limit) as RunDbRow[]).map(toRun);
  }

  lastWritingRun(): RunRow | undefined {
    const wrote = ['create', 'update', 'delete'].flatMap((action) => ['done', 'failed'].map((state) => `COALESCE(json_extract(counts_json, '$.${action}.${state}'), 0)`)).join(' + ');
    const row = this.db
      .prepare(`SELECT * FROM runs r WHERE dry_run = 0 AND (EXISTS (SELECT 1 FROM journal j WHERE j.run_id = r.id) OR (json_valid(counts_json) AND ${wrote} > 0)) ORDER BY started_at DESC, rowid DESC LIMIT 1`)
      .get() as RunDbRow | undefined;
    return row ? toRun(row) : undefined;
  }
}

