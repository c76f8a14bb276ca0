/**
 * The pipeline's state store: the inventory of what the pipeline
 * owns, a journal of every write outcome, the run history, the lock, the identity the state is
 * bound to (service, group, pipeline) and the plan-signing secret. One SQLite database per
 * pipeline, in WAL mode, written by the single writer (apply) the moment each outcome is known.
 *
 * Beside it, one database per state directory (`_shared.sqlite`, attached) holds what pipelines
 * sharing that location must agree on: the claim of each record (service, group, client_id →
 * pipeline) and which pipelines target which group, with their declared client_id prefixes.
 *
 * Why an inventory: the service cannot list the members of a group, so only records recorded
 * here are ever deleted, and a lost state means deletions cannot be computed.
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { ignoreInGitSync } from '../private-dir.js';
import { dirname, join } from 'node:path';
import { UserFacingError } from '../errors.js';
import { fileSystemHint, fileSystemProblem } from '../file-system-problem.js';
import { ROW_KEY_LENGTH } from '../mapping/row-key.js';
import type { FieldValue } from '../mapping/types.js';
import { normalizeServiceUrl, type StateIdentity, type Target } from './identity.js';
import { lockIdentityOf, livenessRule, ourPidScope, ownerAlive } from './liveness.js';
import { toLock, toOwned, toRun, type LockDbRow, type RecordRow, type RunDbRow } from './rows.js';

export type { StateIdentity, Target } from './identity.js';

/**
 * 2: lock owner's process start time, identity binding, claims and targets (`_shared.sqlite`).
 * 3: records.row_key, the raw row's key for the plan's fast path, and its index.
 * 4: journal.undo_json, the values a write changed (what `rostersync revert` needs), and an index by run.
 */
export const STATE_SCHEMA_VERSION = 4;

/** The database shared by every pipeline of one state directory (no pipeline name starts with `_`). */
export const SHARED_STATE_FILE = '_shared.sqlite';

export interface OwnedRecord {
  clientId: string;
  /** Last-applied managed fields, canonical JSON. */
  fieldsJson: string;
  hash: string;
  runId: string;
  sourceRow: number | null;
}

export interface RunRow {
  id: string;
  startedAt: string;
  finishedAt: string | null;
  outcome: string | null;
  dryRun: boolean;
  validRecords: number | null;
  sourceSha256: string | null;
  countsJson: string | null;
}

export interface LockInfo {
  owner: string;
  host: string;
  pid: number;
  /** Identity of the owner's process (boot id, start time, PID namespace: src/state/liveness.ts) so a reused pid or another namespace's pid is not taken for it; null when unknown. */
  processStart: string | null;
  startedAt: string;
  heartbeatAt: string;
  runId: string;
}

/** A pipeline writing to a target, and the client_id prefixes it declared when it shares the group. */
export interface TargetRegistration {
  pipeline: string;
  /** Null: the pipeline did not declare sharing (it expects the group to itself). */
  sharedPrefixes: string[] | null;
}

/** `abandoned`: an unfinished write of a target the state was moved away from (`retarget`). */
export type JournalState = 'planned' | 'sent' | 'done' | 'failed' | 'abandoned';

export interface UnfinishedWrite {
  action: 'create' | 'update' | 'delete';
  state: JournalState;
  /** HTTP status of the failure; null when no answer came (or none was recorded before a crash). */
  status: number | null;
}

/**
 * Whether the service may have performed a write the journal could not confirm: no answer
 * (sent, then a crash or a network failure), a server error or a rate-limit answer after the
 * handler may have run. A definite refusal (400, 401, 403, 404, 422) did not write.
 */
export function mayHaveWritten(write: UnfinishedWrite): boolean {
  return write.state !== 'failed' || write.status === null || write.status >= 500 || write.status === 429 || write.status === 408;
}

export interface StateStoreOptions {
  /** Injectable clock (ms since epoch). */
  now?: () => number;
}

export class StateError extends UserFacingError {
  override name = 'StateError';
}

/** A lock whose heartbeat is older than this is stale (the owner died without releasing it). */
export const STALE_LOCK_MS = 2 * 60_000;
export const HEARTBEAT_MS = 15_000;

/** Ids per inventory lookup: measured fastest around 500 (SQLite allows up to 32,766 parameters). */
export const HASH_BATCH = 500;

/** The meta key of `rowKeySalt()`. */
export const ROW_KEY_SALT = 'row_key_salt';

/** Row keys from which `setRowKeyPages` rebuilds the row_key index rather than update it. */
const ROW_KEY_BULK = 50_000;
const ROW_KEY_INDEX = 'CREATE INDEX IF NOT EXISTS records_row_key ON records(row_key)';

/** Row keys per page of `rowKeyPages`. */
export const ROW_KEY_PAGE = 50_000;

/**
 * One journaled write, as `rostersync revert` reads it. `undoJson`: the values the write changed
 * (src/revert/undo-record.ts); null for an entry journaled before they were kept.
 */
export interface JournalEntry {
  id: number;
  runId: string;
  clientId: string;
  action: string;
  state: JournalState;
  status: number | null;
  undoJson: string | null;
}

interface JournalDbRow {
  id: number;
  run_id: string;
  client_id: string;
  action: string;
  state: JournalState;
  status: number | null;
  undo_json: string | null;
}

export function toJournalEntry(row: JournalDbRow): JournalEntry {
  return { id: Number(row.id), runId: row.run_id, clientId: row.client_id, action: row.action, state: row.state, status: row.status, undoJson: row.undo_json };
}

/** A successful create or update, as `recordApplied` records it. */
export interface AppliedRecord {
  journalId: number;
  /** Replaces the undo values journaled when the write was planned (an adoption found the record existing). */
  undoJson?: string | undefined;
  clientId: string;
  fieldsJson: string;
  hash: string;
  /** The raw row's key (src/mapping/row-key.ts) when the fields came from a row of the roster. */
  rowKey?: string | undefined;
  runId: string;
  sourceRow: number | null;
  status: number;
  attempts: number;
}

/**
 * A page of the inventory's row keys: `rowKeys` holds `count` keys of ROW_KEY_LENGTH characters
 * each, end to end, and `clientIds` the client_ids joined by NUL, the i-th key being that of the
 * i-th client_id's row. Text rather than an array: a million client_ids as strings cost about
 * 30 MB of heap, and the fast path keeps them as this text (src/plan/known-rows.ts). A client_id
 * holding NUL cannot have a row key (its row has none), and PostgreSQL text holds no NUL at all.
 */
export interface RowKeyPage {
  rowKeys: string;
  clientIds: string;
  count: number;
}

function hashesQuery(count: number): string {
  return `SELECT client_id, hash FROM records WHERE client_id IN (${new Array(count).fill('?').join(',')})`;
}

export class StateStore {
  readonly path: string;
  readonly pipeline: string;
  private readonly db: Database.Database;
  private readonly now: () => number;
  private readonly stmts;

  private constructor(path: string, pipeline: string, db: Database.Database, options: StateStoreOptions) {
    this.path = path;
    this.pipeline = pipeline;
    this.db = db;
    this.now = options.now ?? Date.now;
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
      releaseClaim: db.prepare('DELETE FROM shared.claims WHERE service = ? AND group_id = ? AND client_id = ? AND pipeline = ?'),
      claimOwner: db.prepare<[string, number, string], { pipeline: string }>('SELECT pipeline FROM shared.claims WHERE service = ? AND group_id = ? AND client_id = ?'),
      insertClaim: db.prepare('INSERT OR IGNORE INTO shared.claims(service, group_id, client_id, pipeline, claimed_at) VALUES (?, ?, ?, ?, ?)'),
      hashBatch: db.prepare(hashesQuery(HASH_BATCH)),
      journalInsert: db.prepare(
        `INSERT INTO journal(run_id, client_id, action, state, at, undo_json) VALUES (?, ?, ?, 'planned', ?, ?)`,
      ),
      journalUpdate: db.prepare(
        `UPDATE journal SET state = @state, status = @status, error = @error, attempts = @attempts, at = @at, undo_json = COALESCE(@undo, undo_json) WHERE id = @id`,
      ),
    };
  }

  /** Opens (creating if needed) the state database of one pipeline. */
  static open(path: string, pipeline: string, options: StateStoreOptions = {}): StateStore {
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
    return new StateStore(path, pipeline, db, options);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /**
   * Runs `body` as one transaction: every store call inside it commits together or not at all
   * (`state import`). Synchronous, like the store.
   */
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

  /** Increases on every change of the inventory; saved plans are bound to it. */
  serial(): number {
    return Number(this.getMeta('serial') ?? '0');
  }

  groupId(): number | null {
    const value = this.getMeta('group_id');
    return value === undefined ? null : Number(value);
  }

  /**
   * Records a group id (after creation, or by hand with `state set-group` while the inventory is
   * empty). `createdHere`: this pipeline just created the group, so it owns all of it from the start.
   * Moving an inventory that owns records to another group is `retarget`.
   */
  setGroupId(groupId: number, options: { createdHere?: boolean; name?: string } = {}): void {
    this.db.transaction(() => {
      if (groupId !== this.groupId()) this.stmts.deleteMeta.run('group_name');
      this.setMeta('group_id', String(groupId));
      this.setMeta('group_created_here', options.createdHere ? '1' : '0');
      if (options.name !== undefined) this.setMeta('group_name', options.name);
      this.stmts.deleteMeta.run('group_intent');
      this.stmts.bumpSerial.run();
    })();
  }

  /** Records the name of the group the state is bound to (a state made before names were kept, or a renamed group). */
  setGroupName(name: string): void {
    this.setMeta('group_name', name);
  }

  /** What this state is bound to: service, group and pipeline. */
  identity(): StateIdentity {
    return {
      pipeline: this.pipeline,
      baseUrl: this.getMeta('service_url') ?? null,
      groupId: this.groupId(),
      groupCreatedHere: this.getMeta('group_created_here') === '1',
      groupName: this.getMeta('group_name') ?? null,
    };
  }

  /** Binds the state to a service on its first run (normalized; see `normalizeServiceUrl`). */
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
      if (target.baseUrl === null) this.stmts.deleteMeta.run('service_url');
      else this.setMeta('service_url', normalizeServiceUrl(target.baseUrl));
      if (target.groupId === null) this.stmts.deleteMeta.run('group_id');
      else this.setMeta('group_id', String(target.groupId));
      if (target.groupId !== before.groupId) this.stmts.deleteMeta.run('group_name');
      this.setMeta('group_created_here', '0');
      this.stmts.deleteMeta.run('group_intent');
      this.stmts.bumpSerial.run();
      return { released };
    })();
  }

  /**
   * The secret that keys saved-plan digests (HMAC), created on first use. It never leaves the
   * state, so a plan edited outside rostersync cannot be given a matching digest.
   */
  planSecret(): string {
    const existing = this.getMeta('plan_secret');
    if (existing) return existing;
    const secret = randomBytes(32).toString('hex');
    this.db.prepare("INSERT OR IGNORE INTO meta(key, value) VALUES ('plan_secret', ?)").run(secret);
    return this.getMeta('plan_secret')!;
  }

  // --- claims and targets (shared by the pipelines of one state location) -----------------

  /** The pipeline that claims each of these client_ids on the target (this one included); unclaimed ids are absent. */
  claimOwners(target: Target, clientIds: readonly string[]): Map<string, string> {
    const service = normalizeServiceUrl(target.baseUrl);
    const result = new Map<string, string>();
    for (const clientId of clientIds) {
      const row = this.stmts.claimOwner.get(service, target.groupId, clientId);
      if (row) result.set(clientId, row.pipeline);
    }
    return result;
  }

  /**
   * Claims client_ids on the target for this pipeline, before writing them. Returns the ids
   * another pipeline already claims (those are not claimed and must not be written), with their owner.
   */
  claim(target: Target, clientIds: readonly string[]): Map<string, string> {
    const service = normalizeServiceUrl(target.baseUrl);
    const now = new Date(this.now()).toISOString();
    return this.db.transaction(() => {
      const taken = new Map<string, string>();
      for (const clientId of clientIds) {
        if (this.stmts.insertClaim.run(service, target.groupId, clientId, this.pipeline, now).changes > 0) continue;
        const current = this.stmts.claimOwner.get(service, target.groupId, clientId)?.pipeline;
        if (current !== undefined && current !== this.pipeline) taken.set(clientId, current);
      }
      return taken;
    })();
  }

  /** Gives up this pipeline's claims (after a delete, `state forget`). Claims of other pipelines are left alone. */
  releaseClaims(target: Target, clientIds: readonly string[]): void {
    const service = normalizeServiceUrl(target.baseUrl);
    this.db.transaction(() => {
      for (const clientId of clientIds) this.stmts.releaseClaim.run(service, target.groupId, clientId, this.pipeline);
    })();
  }

  /**
   * Claims every owned record on the target (a state made before claims existed, or bound just
   * now). Returns owned ids another pipeline claims: they are shared by mistake and need a person.
   */
  claimOwned(target: Target): Map<string, string> {
    const service = normalizeServiceUrl(target.baseUrl);
    this.db
      .prepare('INSERT OR IGNORE INTO shared.claims(service, group_id, client_id, pipeline, claimed_at) SELECT ?, ?, client_id, ?, ? FROM records')
      .run(service, target.groupId, this.pipeline, new Date(this.now()).toISOString());
    const rows = this.db
      .prepare('SELECT c.client_id AS clientId, c.pipeline AS pipeline FROM records r JOIN shared.claims c ON c.client_id = r.client_id WHERE c.service = ? AND c.group_id = ? AND c.pipeline <> ?')
      .all(service, target.groupId, this.pipeline) as { clientId: string; pipeline: string }[];
    return new Map(rows.map((row) => [row.clientId, row.pipeline]));
  }

  /** Records that this pipeline writes to the target, and the client_id prefixes it declared if it shares the group. */
  registerTarget(target: Target, sharedPrefixes: readonly string[] | null): void {
    this.db
      .prepare(
        `INSERT INTO shared.targets(service, group_id, pipeline, prefixes, registered_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(service, group_id, pipeline) DO UPDATE SET prefixes = excluded.prefixes`,
      )
      .run(normalizeServiceUrl(target.baseUrl), target.groupId, this.pipeline, sharedPrefixes ? JSON.stringify(sharedPrefixes) : null, new Date(this.now()).toISOString());
  }

  /** Every pipeline registered on the target (this one included). */
  targetsOn(target: Target): TargetRegistration[] {
    const rows = this.db
      .prepare('SELECT pipeline, prefixes FROM shared.targets WHERE service = ? AND group_id = ? ORDER BY pipeline')
      .all(normalizeServiceUrl(target.baseUrl), target.groupId) as { pipeline: string; prefixes: string | null }[];
    return rows.map((row) => ({ pipeline: row.pipeline, sharedPrefixes: row.prefixes === null ? null : (JSON.parse(row.prefixes) as string[]) }));
  }

  /** The intent to create a group, recorded before the (non-idempotent) call. */
  groupIntent(): { name: string; at: string } | null {
    const value = this.getMeta('group_intent');
    return value ? (JSON.parse(value) as { name: string; at: string }) : null;
  }

  recordGroupIntent(name: string): void {
    this.setMeta('group_intent', JSON.stringify({ name, at: new Date(this.now()).toISOString() }));
  }

  clearGroupIntent(): void {
    this.stmts.deleteMeta.run('group_intent');
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
    for (let start = 0; start < clientIds.length; start += HASH_BATCH) {
      const batch = clientIds.slice(start, start + HASH_BATCH);
      const statement = batch.length === HASH_BATCH ? this.stmts.hashBatch : this.db.prepare(hashesQuery(batch.length));
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

  /**
   * The salt of the row keys the last apply stored, by name (`rowKeySaltName` in
   * src/mapping/row-key.ts). Only a hint: a run
   * whose salt differs loads no key (none can match), which saves loading a million useless keys
   * after a mapping, listing or version change. A wrong hint only costs time.
   */
  rowKeySalt(): string | undefined {
    return this.getMeta(ROW_KEY_SALT);
  }

  setRowKeySalt(salt: string): void {
    this.setMeta(ROW_KEY_SALT, salt);
  }

  /**
   * Stores the row keys of records whose row mapped to exactly what the inventory holds. A key is
   * kept only if the record still has `hash` (a write since planning leaves it unset).
   */
  setRowKeys(entries: readonly { clientId: string; rowKey: string; hash: string }[]): void {
    if (entries.length > 0) this.setRowKeyPages([entries], entries.length);
  }

  /**
   * `setRowKeys` for pages of entries, in one transaction; `expected` is about how many. Many keys
   * (the first sync after a mapping, listing or version change stores one for every record) are
   * written with the row_key index dropped and built again after: at a million records, updating
   * the index entry by entry took about 27 s, rebuilding it about 1 s (and the updates 4 s).
   */
  setRowKeyPages(pages: Iterable<readonly { clientId: string; rowKey: string; hash: string }[]>, expected: number): void {
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

  /** Last-applied fields of the given owned records (those the plan needs to diff). */
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

  /** Writes the outcome of a successful create/update together with its journal entry. */
  recordApplied(entry: AppliedRecord): void {
    this.db.transaction(() => {
      this.stmts.upsertRecord.run({
        clientId: entry.clientId,
        fieldsJson: entry.fieldsJson,
        hash: entry.hash,
        runId: entry.runId,
        sourceRow: entry.sourceRow,
        updatedAt: new Date(this.now()).toISOString(),
        rowKey: entry.rowKey ?? null,
      });
      this.finishJournal(entry.journalId, 'done', entry.status, null, entry.attempts, entry.undoJson);
      this.stmts.bumpSerial.run();
    })();
  }

  /** Writes the outcome of a successful delete together with its journal entry. */
  recordDeleted(entry: { journalId: number; clientId: string; status: number; attempts: number }): void {
    this.db.transaction(() => {
      this.stmts.deleteRecord.run(entry.clientId);
      this.releaseBoundClaim(entry.clientId);
      this.finishJournal(entry.journalId, 'done', entry.status, null, entry.attempts);
      this.stmts.bumpSerial.run();
    })();
  }

  /** Adopts a record that already exists in the group (`state import`). */
  adopt(entry: { clientId: string; fieldsJson: string; hash: string; runId: string }): void {
    this.db.transaction(() => {
      this.stmts.upsertRecord.run({ ...entry, sourceRow: null, updatedAt: new Date(this.now()).toISOString(), rowKey: null });
      this.stmts.bumpSerial.run();
    })();
  }

  /** Drops a record from the inventory without touching the service (`state forget`). */
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
    if (baseUrl !== null && groupId !== null) this.stmts.releaseClaim.run(baseUrl, groupId, clientId, this.pipeline);
  }

  // --- journal ----------------------------------------------------------------------------

  /** Journals an operation as planned, with the values it changes (`undoJson`, for `revert`); returns its id. */
  journalPlanned(runId: string, clientId: string, action: string, undoJson: string | null = null): number {
    return Number(this.stmts.journalInsert.run(runId, clientId, action, new Date(this.now()).toISOString(), undoJson).lastInsertRowid);
  }

  journalSent(id: number): void {
    this.stmts.journalUpdate.run({ id, state: 'sent', status: null, error: null, attempts: null, at: new Date(this.now()).toISOString(), undo: null });
  }

  journalFailed(id: number, status: number | null, error: string, attempts: number): void {
    this.finishJournal(id, 'failed', status, error, attempts);
  }

  private finishJournal(id: number, state: JournalState, status: number | null, error: string | null, attempts: number, undo: string | null = null): void {
    this.stmts.journalUpdate.run({ id, state, status, error, attempts, at: new Date(this.now()).toISOString(), undo });
  }

  /** Every write a run journaled, in journal order. */
  runJournal(runId: string): JournalEntry[] {
    return (this.db.prepare('SELECT id, run_id, client_id, action, state, status, undo_json FROM journal WHERE run_id = ? ORDER BY id').all(runId) as JournalDbRow[]).map(toJournalEntry);
  }

  /** Every journaled write of the given client_ids, in journal order (revert looks for later ones). */
  journalOf(clientIds: readonly string[]): JournalEntry[] {
    const entries: JournalEntry[] = [];
    for (let start = 0; start < clientIds.length; start += HASH_BATCH) {
      const batch = clientIds.slice(start, start + HASH_BATCH);
      const rows = this.db
        .prepare(`SELECT id, run_id, client_id, action, state, status, undo_json FROM journal WHERE client_id IN (${batch.map(() => '?').join(',')}) ORDER BY id`)
        .all(...batch) as JournalDbRow[];
      entries.push(...rows.map(toJournalEntry));
    }
    return entries.sort((a, b) => a.id - b.id);
  }

  /**
   * The last journaled write of every client_id whose last write failed or never finished
   * (journaled `sent`, then a crash). The planner writes these again.
   */
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
      .run(run.id, new Date(this.now()).toISOString(), run.dryRun ? 1 : 0, run.sourceSha256);
  }

  finishRun(run: { id: string; outcome: string; validRecords: number; counts: unknown }): void {
    this.db
      .prepare('UPDATE runs SET finished_at = ?, outcome = ?, valid_records = ?, counts_json = ? WHERE id = ?')
      .run(new Date(this.now()).toISOString(), run.outcome, run.validRecords, JSON.stringify(run.counts), run.id);
  }

  /**
   * The last real (not dry) run that applied its plan to the end, even if some rows were rejected
   * or some records failed; the source-drop guard compares the roster against it. A revert
   * (source `revert:<run id>`, src/sync/revert.ts) read no roster, so it is not that baseline.
   */
  lastSuccessfulRun(): RunRow | undefined {
    const row = this.db
      .prepare("SELECT * FROM runs WHERE dry_run = 0 AND outcome IN ('success', 'warning', 'partial') AND (source_sha256 IS NULL OR source_sha256 NOT LIKE 'revert:%') ORDER BY started_at DESC, rowid DESC LIMIT 1")
      .get() as RunDbRow | undefined;
    return row ? toRun(row) : undefined;
  }

  /** One run of the history by id. */
  findRun(id: string): RunRow | undefined {
    const row = this.db.prepare('SELECT * FROM runs WHERE id = ?').get(id) as RunDbRow | undefined;
    return row ? toRun(row) : undefined;
  }

  recentRuns(limit = 10): RunRow[] {
    return (this.db.prepare('SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?').all(limit) as RunDbRow[]).map(toRun);
  }

  // --- lock -------------------------------------------------------------------------------

  /**
   * Takes the pipeline's lock, or refuses with the current owner's details. A lock held on this
   * host is stale only when its owner's process is gone, whatever the clocks say; a lock held on
   * another host is stale when its heartbeat is older than STALE_LOCK_MS.
   */
  acquireLock(runId: string, owner: string = process.env.USER ?? 'unknown'): LockInfo {
    const nowIso = new Date(this.now()).toISOString();
    const mine: LockInfo = { owner, host: hostname(), pid: process.pid, processStart: lockIdentityOf(process.pid), startedAt: nowIso, heartbeatAt: nowIso, runId };
    return this.db.transaction(() => {
      const current = this.readLock();
      if (current && !this.isStale(current)) {
        const sameHost = livenessRule(current.processStart, ourPidScope()) === 'process';
        throw new StateError(
          `pipeline "${this.pipeline}" is locked by run ${current.runId}: ${current.owner} on ${current.host}, pid ${current.pid}, since ${current.startedAt} (heartbeat ${current.heartbeatAt}).`,
          {
            hint: sameHost
              ? `Wait for that run to finish: its process ${current.pid} is alive on this host. If it is not a rostersync run, clear the lock with \`rostersync unlock ${this.pipeline}\`.`
              : `Wait for that run to finish. If it died, the lock turns stale ${STALE_LOCK_MS / 60_000} minutes after its last heartbeat, or clear it now with \`rostersync unlock ${this.pipeline}\`.`,
          },
        );
      }
      this.db.prepare('DELETE FROM lock').run();
      this.db
        .prepare('INSERT INTO lock(id, owner, host, pid, proc_start, started_at, heartbeat_at, run_id) VALUES (1, ?, ?, ?, ?, ?, ?, ?)')
        .run(mine.owner, mine.host, mine.pid, mine.processStart, mine.startedAt, mine.heartbeatAt, mine.runId);
      return mine;
    }).immediate();
  }

  /** Renews the lock; false when it is no longer ours (cleared with `unlock` or taken over as stale). */
  heartbeat(runId: string): boolean {
    return this.db.prepare('UPDATE lock SET heartbeat_at = ? WHERE run_id = ?').run(new Date(this.now()).toISOString(), runId).changes > 0;
  }

  releaseLock(runId: string): void {
    this.db.prepare('DELETE FROM lock WHERE run_id = ?').run(runId);
  }

  readLock(): LockInfo | undefined {
    const row = this.db.prepare('SELECT * FROM lock WHERE id = 1').get() as LockDbRow | undefined;
    return row ? toLock(row) : undefined;
  }

  /** Removes the lock whatever its state (`rostersync unlock`). Returns what was removed. */
  forceUnlock(): LockInfo | undefined {
    const current = this.readLock();
    this.db.prepare('DELETE FROM lock').run();
    return current;
  }

  /**
   * Where the owner's pid means its process (same boot, same PID namespace: see liveness.ts), the
   * process decides, whatever the clocks say (a clock a few minutes ahead must not take the lock
   * of a live run). Elsewhere (another host, another container) only the heartbeat can tell.
   */
  isStale(lock: LockInfo): boolean {
    if (lock.processStart !== null && livenessRule(lock.processStart, ourPidScope()) === 'process') return !ownerAlive(lock.pid, lock.processStart);
    return this.now() - Date.parse(lock.heartbeatAt) > STALE_LOCK_MS;
  }
}

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
function createOwnerOnly(path: string): void {
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
}

/** Tightens the mode of a state file or directory this user owns (a state made by an older version). */
function ownerOnly(path: string, mode: number): void {
  try {
    const stat = statSync(path);
    if ((stat.mode & 0o777) !== mode && stat.uid === process.getuid?.()) chmodSync(path, mode);
  } catch {
    // Absent (-wal/-shm before the first write) or not ours: nothing to tighten.
  }
}

function migrate(db: Database.Database): void {
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
      undo_json TEXT
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
  if (version !== STATE_SCHEMA_VERSION) {
    throw new Error(`state schema version ${version} is not supported (expected ${STATE_SCHEMA_VERSION})`);
  }
  // The fast path reads keys in key order; the index (which carries client_id, the primary key)
  // also makes counting and listing the inventory skip the fields.
  db.exec(ROW_KEY_INDEX);
  // `revert` reads one run's writes.
  db.exec('CREATE INDEX IF NOT EXISTS journal_run ON journal(run_id)');
}

