/**
 * Where the webhook receiver keeps referee selections: the same backends as the pipeline state.
 *
 * - SQLite (the default, `webhook-referees.sqlite`): one receiver.
 * - PostgreSQL (`--store postgres://...` or ROSTERSYNC_STATE_URL): several receiver replicas
 *   behind a load balancer share one store.
 * - A `.json` file: the store of earlier versions, still read and written.
 *
 * In the databases, every delivery is a row keyed by its `order` (unique and increasing, the way
 * to order events): a repeated delivery, whichever replica it reaches, hits the key and changes
 * nothing. The selection of a manuscript moves only to a higher order, in the same transaction,
 * so a late retry never overwrites a newer selection.
 */
import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import pg from 'pg';
import type { WebhookEnvelope } from '../client/schemas.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { connectionStringFor, isPostgresUrl, LATEST_PG_VERSION, PG_SCHEMA as S, redactStateUrl, STATE_URL_ENV } from '../state/shared-database.js';
import { listSelections, RefereeStore, storedSelectionSchema, type ApplyResult, type StoredSelection } from './store.js';

export interface SelectionStore {
  /** Where it is, for messages (no password). */
  readonly location: string;
  /** Applies an event unless its order was delivered before or a later order was applied for its manuscript. */
  apply(envelope: WebhookEnvelope): Promise<ApplyResult>;
  /** Selections sorted by manuscript id, optionally one origin_id. */
  list(originId?: string): Promise<StoredSelection[]>;
  close(): Promise<void>;
}

export const DEFAULT_SELECTION_STORE = 'webhook-referees.sqlite';
/** The default store of earlier versions. */
export const LEGACY_JSON_STORE = 'webhook-referees.json';

/** The selection a delivery carries, as stored. */
function selectionOf(envelope: WebhookEnvelope, receivedAt: string): StoredSelection {
  return {
    manuscript_id: envelope.payload.manuscript_id,
    origin_id: envelope.payload.origin_id,
    order: envelope.order,
    timestamp: envelope.timestamp,
    received_at: receivedAt,
    payload_version: envelope.payload.version,
    authors_groups_settings: envelope.payload.authors_groups_settings,
    referees: envelope.payload.candidates,
  };
}

function parseSelection(text: string): StoredSelection {
  return storedSelectionSchema.parse(JSON.parse(text));
}

/**
 * Opens the store named by `--store` (a path or a postgres:// URL); without one,
 * ROSTERSYNC_STATE_URL when set, else DEFAULT_SELECTION_STORE in `cwd`.
 */
export async function openSelectionStore(
  location: string | undefined,
  options: { cwd?: string; env?: NodeJS.ProcessEnv; now?: () => Date } = {},
): Promise<SelectionStore> {
  const env = options.env ?? process.env;
  const now = options.now ?? (() => new Date());
  const chosen = location ?? (env[STATE_URL_ENV]?.trim() || defaultFile(options.cwd ?? process.cwd()));
  if (isPostgresUrl(chosen)) {
    const fromFlag = location !== undefined;
    return PgSelectionStore.open(connectionStringFor(chosen, { origin: fromFlag ? '--store' : STATE_URL_ENV, fromEnvironment: !fromFlag }, env), redactStateUrl(chosen), now);
  }
  const path = resolve(options.cwd ?? process.cwd(), chosen);
  if (path.endsWith('.json')) return jsonStore(await RefereeStore.open(path, { now }));
  return SqliteSelectionStore.open(path, now);
}

/** The SQLite default, unless only the JSON file of an earlier version is there: it stays in use. */
function defaultFile(cwd: string): string {
  return !existsSync(resolve(cwd, DEFAULT_SELECTION_STORE)) && existsSync(resolve(cwd, LEGACY_JSON_STORE)) ? LEGACY_JSON_STORE : DEFAULT_SELECTION_STORE;
}

function jsonStore(store: RefereeStore): SelectionStore {
  return {
    location: store.path,
    apply: (envelope) => store.apply(envelope),
    list: async (originId) => listSelections(store.snapshot(), originId),
    close: async () => {},
  };
}

export class SqliteSelectionStore implements SelectionStore {
  private constructor(
    readonly location: string,
    private readonly db: Database.Database,
    private readonly now: () => Date,
  ) {}

  static open(path: string, now: () => Date): SqliteSelectionStore {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // It holds names and emails: owner-only before SQLite first writes it.
    if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
    let db: Database.Database;
    try {
      db = new Database(path);
      db.pragma('journal_mode = WAL');
      db.pragma('busy_timeout = 5000');
      db.exec(`
        CREATE TABLE IF NOT EXISTS deliveries (
          event_order INTEGER PRIMARY KEY, manuscript_id INTEGER NOT NULL, received_at TEXT NOT NULL, selection_json TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS selections (
          manuscript_id INTEGER PRIMARY KEY, origin_id TEXT, event_order INTEGER NOT NULL, selection_json TEXT NOT NULL
        );
      `);
      for (const suffix of ['-wal', '-shm']) if (existsSync(path + suffix)) chmodSync(path + suffix, 0o600);
    } catch (error) {
      throw new UserFacingError(`webhook store ${path} is not a rostersync webhook store: ${(error as Error).message}`, {
        hint: 'Point --store at the file `rostersync webhook serve` writes, or at a new file.',
        cause: error,
      });
    }
    return new SqliteSelectionStore(path, db, now);
  }

  async apply(envelope: WebhookEnvelope): Promise<ApplyResult> {
    const selection = selectionOf(envelope, this.now().toISOString());
    const json = JSON.stringify(selection);
    return this.db.transaction((): ApplyResult => {
      const delivered = this.db
        .prepare('INSERT INTO deliveries(event_order, manuscript_id, received_at, selection_json) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING')
        .run(envelope.order, selection.manuscript_id, selection.received_at, json);
      if (delivered.changes === 0) return 'stale';
      const moved = this.db
        .prepare(
          `INSERT INTO selections(manuscript_id, origin_id, event_order, selection_json) VALUES (?, ?, ?, ?)
           ON CONFLICT(manuscript_id) DO UPDATE SET origin_id = excluded.origin_id, event_order = excluded.event_order, selection_json = excluded.selection_json
           WHERE excluded.event_order > selections.event_order`,
        )
        .run(selection.manuscript_id, selection.origin_id, envelope.order, json);
      return moved.changes > 0 ? 'applied' : 'stale';
    }).immediate();
  }

  async list(originId?: string): Promise<StoredSelection[]> {
    // Filtered in SQL, as the PostgreSQL store does: only the asked-for selections are parsed.
    const rows = this.db
      .prepare('SELECT selection_json FROM selections WHERE (@origin IS NULL OR origin_id = @origin) ORDER BY manuscript_id')
      .pluck()
      .all({ origin: originId ?? null }) as string[];
    return rows.map(parseSelection);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

/** The store every receiver replica shares; `store` names it inside the database. */
const STORE_NAME = 'referees';

export class PgSelectionStore implements SelectionStore {
  private constructor(
    readonly location: string,
    private readonly pool: pg.Pool,
    private readonly now: () => Date,
  ) {}

  static async open(connectionString: string, label: string, now: () => Date): Promise<PgSelectionStore> {
    const pool = new pg.Pool({ connectionString, max: 4, application_name: 'rostersync-webhook', connectionTimeoutMillis: 10_000 });
    // An idle client losing its connection must not crash the receiver; the next query reconnects.
    pool.on('error', () => {});
    try {
      const present = await pool.query<{ present: boolean }>(`SELECT to_regclass('${S}.schema_migrations') IS NOT NULL AS present`);
      const version = present.rows[0]?.present ? Number((await pool.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${S}.schema_migrations`)).rows[0]?.v ?? 0) : 0;
      if (version < LATEST_PG_VERSION) {
        throw new UserFacingError(`the database ${label} has schema version ${version}; the webhook store needs version ${LATEST_PG_VERSION}.`, {
          hint: `Run \`${STATE_URL_ENV}=${label} rostersync state migrate\` once, then start the receivers.`,
        });
      }
    } catch (error) {
      await pool.end().catch(() => {});
      if (error instanceof UserFacingError) throw error;
      throw new UserFacingError(`cannot open the webhook store ${label}: ${(error as Error).message}`, {
        hint: 'Check the URL and the password (PGPASSWORD, ROSTERSYNC_STATE_PASSWORD_FILE or ~/.pgpass).',
        cause: error,
      });
    }
    return new PgSelectionStore(label, pool, now);
  }

  async apply(envelope: WebhookEnvelope): Promise<ApplyResult> {
    const selection = selectionOf(envelope, this.now().toISOString());
    const json = JSON.stringify(selection);
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const delivered = await client.query(
        `INSERT INTO ${S}.webhook_deliveries(store, event_order, manuscript_id, received_at, selection_json) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
        [STORE_NAME, envelope.order, selection.manuscript_id, selection.received_at, json],
      );
      let result: ApplyResult = 'stale';
      if (delivered.rowCount === 1) {
        // A conflicting insert from another replica waits for it, then compares orders: the
        // selection only ever moves forward.
        const moved = await client.query(
          `INSERT INTO ${S}.webhook_selections(store, manuscript_id, origin_id, event_order, selection_json) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (store, manuscript_id) DO UPDATE SET origin_id = excluded.origin_id, event_order = excluded.event_order, selection_json = excluded.selection_json
           WHERE excluded.event_order > ${S}.webhook_selections.event_order`,
          [STORE_NAME, selection.manuscript_id, selection.origin_id, envelope.order, json],
        );
        result = moved.rowCount === 1 ? 'applied' : 'stale';
      }
      await client.query('COMMIT');
      return result;
    } catch (error) {
      broken = error as Error;
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      // A client whose connection failed is dropped from the pool, not reused.
      client.release(broken);
    }
  }

  async list(originId?: string): Promise<StoredSelection[]> {
    const rows = await this.pool.query<{ selection_json: string }>(
      `SELECT selection_json FROM ${S}.webhook_selections WHERE store = $1 AND ($2::text IS NULL OR origin_id = $2) ORDER BY manuscript_id`,
      [STORE_NAME, originId ?? null],
    );
    return rows.rows.map((row) => parseSelection(row.selection_json));
  }

  /** Every stored delivery in order (for audits and tests). */
  async deliveries(): Promise<{ order: number; manuscriptId: number }[]> {
    const rows = await this.pool.query<{ event_order: string; manuscript_id: string }>(
      `SELECT event_order, manuscript_id FROM ${S}.webhook_deliveries WHERE store = $1 ORDER BY event_order`,
      [STORE_NAME],
    );
    return rows.rows.map((row) => ({ order: Number(row.event_order), manuscriptId: Number(row.manuscript_id) }));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
