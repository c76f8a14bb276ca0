/**
 * The state store on PostgreSQL: the contract of ../backend.ts, as the embedded SQLite store
 * (../sqlite/) keeps it, for runners that keep no disk between runs and for many
 * pipelines on many hosts sharing one database.
 *
 * - Every table is keyed by pipeline; claims and targets are keyed by service and group, so every
 *   pipeline using the database shares them (across hosts).
 * - Each call is one round trip, and each outcome is committed before the call returns, as with
 *   SQLite: apply never sends a write whose `sent` mark is not durable.
 * - The lock is a session-level advisory lock (advisory-lock.ts): it never goes stale.
 */
import { randomBytes } from 'node:crypto';
import { ROW_KEY_LENGTH } from '../../mapping/row-key-length.js';
import type { FieldValue } from '../../client/schemas.js';
import { normalizeServiceUrl, type StateIdentity } from '../identity.js';
import { JOURNAL_COLUMNS, toJournalEntry, toOwned, type JournalDbRow, type RecordRow } from '../rows.js';
import {
  type AdoptedRecord,
  type AppliedRecord,
  type DeletedRecord,
  type JournalState,
  type OwnedRecord,
  type RowKeyEntry,
  type RowKeyPage,
  type RunRow,
  type StateBackend,
  type StateStoreOptions,
  type Target,
  type UnfinishedWrite,
  type JournalEntry,
} from '../backend.js';
import { StoreBase } from '../store-base.js';
import { PG_SCHEMA as S, requireCurrentSchema } from './migrations.js';
import { AdvisoryLock } from './advisory-lock.js';
import { batches, PG_BATCH, PostgresClaims } from './claims.js';
import { PostgresRuns } from './runs.js';
import type { SyncConnection, Statement } from './sync-connection.js';
/** Rows per worker message in bulk reads and writes of the inventory: a few MB at most. */
const PAGE = 20_000;

export interface PgStoreOptions extends StateStoreOptions {
  /** Longest wait for one answer before the database counts as gone. */
  timeoutMs?: number;
  /** Rows per round trip in bulk reads and writes of the inventory (ownedIds and rowKeys pages, setRowKeys batches); tests make it small. @default 20 000 */
  pageSize?: number;
}

export class PostgresStateStore extends StoreBase implements StateBackend {
  readonly path: string;
  readonly pipeline: string;
  readonly lookupBatch = PG_BATCH;
  protected readonly now: () => number;
  private readonly pageSize: number;
  protected readonly lock: AdvisoryLock;
  protected readonly claims: PostgresClaims;
  private readonly runs: PostgresRuns;

  private constructor(
    private readonly connection: SyncConnection,
    pipeline: string,
    options: PgStoreOptions,
  ) {
    super();
    this.path = `${connection.label} (pipeline ${pipeline})`;
    this.pipeline = pipeline;
    this.now = options.now ?? Date.now;
    this.pageSize = options.pageSize ?? PAGE;
    this.lock = new AdvisoryLock(connection, pipeline, () => this.iso());
    this.claims = new PostgresClaims(connection, pipeline, () => this.iso());
    this.runs = new PostgresRuns(connection, pipeline, () => this.iso());
  }

  /** Opens the state of one pipeline in a migrated database (refuses a schema that is behind). */
  static open(connection: SyncConnection, pipeline: string, options: PgStoreOptions = {}): PostgresStateStore {
    try {
      // A page of 0 rows would never end a stream.
      if (options.pageSize !== undefined && !(Number.isInteger(options.pageSize) && options.pageSize > 0)) throw new RangeError(`pageSize must be a positive integer, not ${options.pageSize}`);
      requireCurrentSchema(connection);
      connection.query(`INSERT INTO ${S}.meta(pipeline, key, value) VALUES ($1, 'serial', '0') ON CONFLICT DO NOTHING`, [pipeline]);
    } catch (error) {
      connection.close();
      throw error;
    }
    return new PostgresStateStore(connection, pipeline, options);
  }

  /** Requests this store sent to its database session (sync-connection.ts). */
  get roundTrips(): number {
    return this.connection.roundTrips;
  }

  close(): void {
    // Closing the session also releases its advisory lock.
    this.connection.close();
  }

  /** The store's own transactions inside it become part of it. */
  transaction<T>(body: () => T): T {
    return this.connection.inTransaction(body);
  }

  private get bumpSerial(): Statement {
    return { text: `UPDATE ${S}.meta SET value = (value::bigint + 1)::text WHERE pipeline = $1 AND key = 'serial'`, values: [this.pipeline] };
  }

  private metaStatement(key: string, value: string): Statement {
    return {
      text: `INSERT INTO ${S}.meta(pipeline, key, value) VALUES ($1, $2, $3) ON CONFLICT (pipeline, key) DO UPDATE SET value = excluded.value`,
      values: [this.pipeline, key, value],
    };
  }

  private deleteMetaStatement(key: string): Statement {
    return { text: `DELETE FROM ${S}.meta WHERE pipeline = $1 AND key = $2`, values: [this.pipeline, key] };
  }

  // --- meta -------------------------------------------------------------------------------

  getMeta(key: string): string | undefined {
    return this.connection.query<{ value: string }>(`SELECT value FROM ${S}.meta WHERE pipeline = $1 AND key = $2`, [this.pipeline, key])[0]?.value;
  }

  setMeta(key: string, value: string): void {
    this.connection.run([this.metaStatement(key, value)]);
  }

  protected deleteMeta(key: string): void {
    this.connection.run([this.deleteMetaStatement(key)]);
  }

  setGroupId(groupId: number, options: { createdHere?: boolean; name?: string } = {}): void {
    const name = options.name ?? (groupId === this.groupId() ? undefined : null);
    this.connection.transaction([
      ...(name === undefined ? [] : [name === null ? this.deleteMetaStatement('group_name') : this.metaStatement('group_name', name)]),
      this.metaStatement('group_id', String(groupId)),
      this.metaStatement('group_created_here', options.createdHere ? '1' : '0'),
      this.deleteMetaStatement('group_intent'),
      this.bumpSerial,
    ]);
  }

  identity(): StateIdentity {
    const rows = this.connection.query<{ key: string; value: string }>(
      `SELECT key, value FROM ${S}.meta WHERE pipeline = $1 AND key IN ('service_url', 'group_id', 'group_created_here', 'group_name')`,
      [this.pipeline],
    );
    const meta = new Map(rows.map((row) => [row.key, row.value]));
    const group = meta.get('group_id');
    return {
      pipeline: this.pipeline,
      baseUrl: meta.get('service_url') ?? null,
      groupId: group === undefined ? null : Number(group),
      groupCreatedHere: meta.get('group_created_here') === '1',
      groupName: meta.get('group_name') ?? null,
    };
  }

  bindService(baseUrl: string): void {
    this.connection.transaction([this.metaStatement('service_url', normalizeServiceUrl(baseUrl)), this.bumpSerial]);
  }

  retarget(target: { baseUrl: string | null; groupId: number | null }): { released: number } {
    const before = this.identity();
    const statements: Statement[] = [{ text: `SELECT count(*)::int AS n FROM ${S}.records WHERE pipeline = $1`, values: [this.pipeline] }];
    if (before.baseUrl !== null && before.groupId !== null) {
      const bound = [before.baseUrl, before.groupId, this.pipeline];
      statements.push({ text: `DELETE FROM ${S}.claims WHERE service = $1 AND group_id = $2 AND pipeline = $3`, values: bound });
      statements.push({ text: `DELETE FROM ${S}.targets WHERE service = $1 AND group_id = $2 AND pipeline = $3`, values: bound });
    }
    statements.push(
      { text: `DELETE FROM ${S}.records WHERE pipeline = $1`, values: [this.pipeline] },
      { text: `UPDATE ${S}.journal SET state = 'abandoned' WHERE pipeline = $1 AND state IN ('planned', 'sent', 'failed')`, values: [this.pipeline] },
      target.baseUrl === null ? this.deleteMetaStatement('service_url') : this.metaStatement('service_url', normalizeServiceUrl(target.baseUrl)),
      target.groupId === null ? this.deleteMetaStatement('group_id') : this.metaStatement('group_id', String(target.groupId)),
      ...(target.groupId === before.groupId ? [] : [this.deleteMetaStatement('group_name')]),
      this.metaStatement('group_created_here', '0'),
      this.deleteMetaStatement('group_intent'),
      this.bumpSerial,
    );
    const [count] = this.connection.transaction(statements);
    return { released: Number((count!.rows[0] as { n: number }).n) };
  }

  planSecret(): string {
    const secret = randomBytes(32).toString('hex');
    const rows = this.connection.transaction([
      { text: `INSERT INTO ${S}.meta(pipeline, key, value) VALUES ($1, 'plan_secret', $2) ON CONFLICT DO NOTHING`, values: [this.pipeline, secret] },
      { text: `SELECT value FROM ${S}.meta WHERE pipeline = $1 AND key = 'plan_secret'`, values: [this.pipeline] },
    ]);
    return (rows[1]!.rows[0] as { value: string }).value;
  }

  // --- inventory --------------------------------------------------------------------------

  ownedCount(): number {
    return Number(this.connection.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${S}.records WHERE pipeline = $1`, [this.pipeline])[0]!.n);
  }

  ownedHashesOf(clientIds: readonly string[]): Map<string, string> {
    const result = new Map<string, string>();
    for (const batch of batches(clientIds, PG_BATCH)) {
      const [found] = this.connection.run([
        { text: `SELECT client_id, hash FROM ${S}.records WHERE pipeline = $1 AND client_id = ANY($2::text[])`, values: [this.pipeline, batch], rowMode: 'array' },
      ]);
      for (const [clientId, hash] of found!.rows as unknown as [string, string][]) result.set(clientId, hash);
    }
    return result;
  }

  /**
   * `client_id` and `columns` of this pipeline's records matching `condition`, in client_id order
   * (byte order like SQLite's), one page per round trip: keyset pagination, so a million records
   * never travel through the worker in one message, and each page is a query of its own (writes
   * between pages are allowed).
   */
  private *recordPages<Row extends [string, ...unknown[]]>(columns: string, condition = 'true'): IterableIterator<Row> {
    let after: string | null = null;
    for (;;) {
      const [page] = this.connection.run([
        {
          text: `SELECT client_id${columns ? `, ${columns}` : ''} FROM ${S}.records
                 WHERE pipeline = $1 AND ($2::text IS NULL OR client_id > $2) AND (${condition})
                 ORDER BY client_id LIMIT $3`,
          values: [this.pipeline, after, this.pageSize],
          rowMode: 'array',
        },
      ]);
      const rows = page!.rows as unknown as Row[];
      yield* rows;
      if (rows.length < this.pageSize) return;
      after = rows[rows.length - 1]![0];
    }
  }

  /** Every owned client_id, in pages. */
  *ownedIds(): IterableIterator<string> {
    for (const [clientId] of this.recordPages<[string]>('')) yield clientId;
  }

  /**
   * The row keys the inventory knows, in pages: one query and one message per
   * page of two values (the keys end to end, and the client_ids as a JSON array, joined here by
   * NUL, which PostgreSQL text cannot hold), not a row each.
   */
  *rowKeyPages(pageSize = this.pageSize): IterableIterator<RowKeyPage> {
    let after: [string, string] = ['', ''];
    for (;;) {
      const [result] = this.connection.run([
        {
          text: `SELECT string_agg(row_key, '' ORDER BY row_key COLLATE "C", client_id COLLATE "C"),
                        json_agg(client_id ORDER BY row_key COLLATE "C", client_id COLLATE "C")
                 FROM (SELECT row_key, client_id FROM ${S}.records
                       WHERE pipeline = $1 AND row_key IS NOT NULL AND length(row_key) = ${ROW_KEY_LENGTH}
                         AND (row_key COLLATE "C", client_id COLLATE "C") > ($2, $3)
                       ORDER BY row_key COLLATE "C", client_id COLLATE "C" LIMIT $4) page`,
          values: [this.pipeline, ...after, pageSize],
          rowMode: 'array',
        },
      ]);
      const [rowKeys, clientIds] = result!.rows[0] as unknown as [string | null, string[] | null];
      if (rowKeys === null || clientIds === null) return;
      yield { rowKeys, clientIds: clientIds.join('\0'), count: clientIds.length };
      if (clientIds.length < pageSize) return;
      after = [rowKeys.slice(-ROW_KEY_LENGTH), clientIds[clientIds.length - 1]!];
    }
  }

  /** Here a transaction per page. */
  setRowKeyPages(pages: Iterable<readonly RowKeyEntry[]>, _expected: number): void {
    for (const page of pages) this.setRowKeys(page);
  }

  /**
   * Stores row keys, each only while its record still has `hash`. One transaction, in batches of
   * arrays (one message each) so a large inventory is not one message.
   */
  setRowKeys(entries: readonly RowKeyEntry[]): void {
    const statements = batches(entries, this.pageSize).map((batch): Statement => {
      // The last entry of a client_id wins, as with SQLite's statement per entry (an UPDATE ... FROM
      // would apply an arbitrary one of several matches).
      const last = [...new Map(batch.map((entry) => [entry.clientId, entry])).values()];
      return {
        text: `UPDATE ${S}.records r SET row_key = v.row_key
               FROM unnest($2::text[], $3::text[], $4::text[]) AS v(client_id, row_key, hash)
               WHERE r.pipeline = $1 AND r.client_id = v.client_id AND r.hash = v.hash`,
        values: [this.pipeline, last.map((e) => e.clientId), last.map((e) => e.rowKey), last.map((e) => e.hash)],
      };
    });
    if (statements.length === 0) return;
    if (statements.length === 1) {
      this.connection.transaction(statements);
      return;
    }
    this.connection.inTransaction(() => {
      for (const statement of statements) this.connection.run([statement]);
    });
  }

  getOwned(clientId: string): OwnedRecord | undefined {
    const row = this.connection.query<RecordRow>(`SELECT * FROM ${S}.records WHERE pipeline = $1 AND client_id = $2`, [this.pipeline, clientId])[0];
    return row ? toOwned(row) : undefined;
  }

  lastApplied(clientIds: Iterable<string>): Map<string, Record<string, FieldValue>> {
    const result = new Map<string, Record<string, FieldValue>>();
    for (const batch of batches([...clientIds], PG_BATCH)) {
      const rows = this.connection.query<{ client_id: string; fields_json: string }>(
        `SELECT client_id, fields_json FROM ${S}.records WHERE pipeline = $1 AND client_id = ANY($2::text[])`,
        [this.pipeline, batch],
      );
      for (const row of rows) result.set(row.client_id, JSON.parse(row.fields_json) as Record<string, FieldValue>);
    }
    return result;
  }

  listOwned(limit = Number.MAX_SAFE_INTEGER): OwnedRecord[] {
    const rows = this.connection.query<RecordRow>(`SELECT * FROM ${S}.records WHERE pipeline = $1 ORDER BY client_id LIMIT $2`, [
      this.pipeline,
      Math.min(limit, 2 ** 62),
    ]);
    return rows.map(toOwned);
  }

  /** Every write of a record's fields sets its row key too: the given one, or NULL (unknown). */
  private upsertRecord(entry: { clientId: string; fieldsJson: string; hash: string; runId: string; sourceRow: number | null; rowKey: string | null }): Statement {
    return {
      text: `INSERT INTO ${S}.records(pipeline, client_id, fields_json, hash, run_id, source_row, updated_at, row_key)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (pipeline, client_id) DO UPDATE SET fields_json = excluded.fields_json, hash = excluded.hash,
               run_id = excluded.run_id, source_row = excluded.source_row, updated_at = excluded.updated_at, row_key = excluded.row_key`,
      values: [this.pipeline, entry.clientId, entry.fieldsJson, entry.hash, entry.runId, entry.sourceRow, this.iso(), entry.rowKey],
    };
  }

  private journalStatement(id: number, state: JournalState, status: number | null, error: string | null, attempts: number | null, undoJson: string | null = null): Statement {
    return {
      text: `UPDATE ${S}.journal SET state = $2, status = $3, error = $4, attempts = $5, at = $6, undo_json = COALESCE($7, undo_json) WHERE id = $1`,
      values: [id, state, status, error, attempts, this.iso(), undoJson],
    };
  }

  /** Releasing the claim of a record no longer owned, on the target the state is bound to. */
  private releaseBoundClaim(clientId: string): Statement {
    return {
      text: `DELETE FROM ${S}.claims c USING (
               SELECT max(value) FILTER (WHERE key = 'service_url') AS service, (max(value) FILTER (WHERE key = 'group_id'))::bigint AS group_id
               FROM ${S}.meta WHERE pipeline = $1) bound
             WHERE c.service = bound.service AND c.group_id = bound.group_id AND c.client_id = $2 AND c.pipeline = $1`,
      values: [this.pipeline, clientId],
    };
  }

  recordApplied(entry: AppliedRecord): void {
    this.connection.transaction([this.upsertRecord({ ...entry, rowKey: entry.rowKey ?? null }), this.journalStatement(entry.journalId, 'done', entry.status, null, entry.attempts, entry.undoJson ?? null), this.bumpSerial]);
  }

  recordDeleted(entry: DeletedRecord): void {
    this.connection.transaction([
      { text: `DELETE FROM ${S}.records WHERE pipeline = $1 AND client_id = $2`, values: [this.pipeline, entry.clientId] },
      this.releaseBoundClaim(entry.clientId),
      this.journalStatement(entry.journalId, 'done', entry.status, null, entry.attempts),
      this.bumpSerial,
    ]);
  }

  adopt(entry: AdoptedRecord): void {
    this.connection.transaction([this.upsertRecord({ ...entry, sourceRow: null, rowKey: null }), this.bumpSerial]);
  }

  forget(clientId: string): boolean {
    const [, forgotten] = this.connection.transaction([
      this.releaseBoundClaim(clientId),
      {
        text: `WITH gone AS (DELETE FROM ${S}.records WHERE pipeline = $1 AND client_id = $2 RETURNING 1)
               UPDATE ${S}.meta SET value = (value::bigint + 1)::text WHERE pipeline = $1 AND key = 'serial' AND EXISTS (SELECT 1 FROM gone) RETURNING 1`,
        values: [this.pipeline, clientId],
      },
    ]);
    return forgotten!.rowCount > 0;
  }

  // --- journal ----------------------------------------------------------------------------

  journalSent(runId: string, clientId: string, action: string, undoJson: string | null = null, target: Target | null = null): number {
    const rows = this.connection.query<{ id: string }>(
      `INSERT INTO ${S}.journal(pipeline, run_id, client_id, action, state, at, undo_json, service, group_id) VALUES ($1, $2, $3, $4, 'sent', $5, $6, $7, $8) RETURNING id`,
      [this.pipeline, runId, clientId, action, this.iso(), undoJson, target?.baseUrl ?? null, target?.groupId ?? null],
    );
    return Number(rows[0]!.id);
  }

  runJournal(runId: string): JournalEntry[] {
    return this.connection
      .query<JournalDbRow>(`SELECT ${JOURNAL_COLUMNS} FROM ${S}.journal WHERE pipeline = $1 AND run_id = $2 ORDER BY id`, [this.pipeline, runId])
      .map(toJournalEntry);
  }

  journalOf(clientIds: readonly string[]): JournalEntry[] {
    if (clientIds.length === 0) return [];
    return this.connection
      .query<JournalDbRow>(`SELECT ${JOURNAL_COLUMNS} FROM ${S}.journal WHERE pipeline = $1 AND client_id = ANY($2::text[]) ORDER BY id`, [
        this.pipeline,
        clientIds,
      ])
      .map(toJournalEntry);
  }

  journalFailed(id: number, status: number | null, error: string, attempts: number): void {
    this.connection.run([this.journalStatement(id, 'failed', status, error, attempts)]);
  }

  unfinishedOrFailed(): Map<string, UnfinishedWrite> {
    const rows = this.connection.query<{ client_id: string; action: UnfinishedWrite['action']; state: JournalState; status: number | null }>(
      `SELECT client_id, action, state, status FROM (
         SELECT DISTINCT ON (client_id) client_id, action, state, status FROM ${S}.journal WHERE pipeline = $1 ORDER BY client_id, id DESC
       ) last WHERE state IN ('failed', 'sent', 'planned')`,
      [this.pipeline],
    );
    return new Map(rows.map((row) => [row.client_id, { action: row.action, state: row.state, status: row.status }]));
  }

  // --- runs (runs.ts) -----------------------------------------------------------------------

  startRun(run: { id: string; dryRun: boolean; sourceSha256: string }): void {
    this.runs.start(run);
  }

  finishRun(run: { id: string; outcome: string; validRecords: number; counts: unknown }): void {
    this.runs.finish(run);
  }

  lastSuccessfulRun(): RunRow | undefined {
    return this.runs.lastSuccessful();
  }

  findRun(id: string): RunRow | undefined {
    return this.runs.find(id);
  }

  lastWritingRun(): RunRow | undefined {
    return this.runs.lastWriting();
  }

  recentRuns(limit = 10): RunRow[] {
    return this.runs.recent(limit);
  }
}
