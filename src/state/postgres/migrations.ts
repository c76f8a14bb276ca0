/**
 * Versioned schema of the PostgreSQL state database. Applied only by `rostersync state migrate`
 * (an operator decision on a database several hosts share); a run against a schema that is behind
 * refuses and names that command, and one against a newer schema refuses to touch it.
 *
 * Every table is keyed by pipeline, so many pipelines share one database and one schema.
 * Times are ISO 8601 text, exactly as the SQLite store keeps them, so export/import is lossless.
 * Migrations are append-only: never edit one that has shipped, add the next version.
 */
import { StateError } from '../backend.js';
import type { SyncConnection } from './sync-connection.js';

export const PG_SCHEMA = 'rostersync';

export interface Migration {
  version: number;
  description: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'inventory, journal, runs, lock owners, meta, claims, targets',
    sql: `
      CREATE TABLE ${PG_SCHEMA}.meta (
        pipeline text NOT NULL, key text NOT NULL, value text NOT NULL,
        PRIMARY KEY (pipeline, key)
      );
      CREATE TABLE ${PG_SCHEMA}.records (
        pipeline text NOT NULL, client_id text COLLATE "C" NOT NULL,
        fields_json text NOT NULL, hash text NOT NULL, run_id text NOT NULL,
        source_row integer, updated_at text NOT NULL,
        PRIMARY KEY (pipeline, client_id)
      );
      CREATE TABLE ${PG_SCHEMA}.journal (
        id bigserial PRIMARY KEY,
        pipeline text NOT NULL, run_id text NOT NULL, client_id text NOT NULL,
        action text NOT NULL, state text NOT NULL,
        status integer, error text, attempts integer, at text NOT NULL
      );
      CREATE INDEX journal_pipeline_client ON ${PG_SCHEMA}.journal (pipeline, client_id, id);
      CREATE TABLE ${PG_SCHEMA}.runs (
        pipeline text NOT NULL, id text NOT NULL, seq bigserial NOT NULL,
        started_at text NOT NULL, finished_at text, outcome text,
        dry_run boolean NOT NULL, valid_records integer, source_sha256 text, counts_json text,
        PRIMARY KEY (pipeline, id)
      );
      CREATE INDEX runs_pipeline_started ON ${PG_SCHEMA}.runs (pipeline, started_at DESC, seq DESC);
      -- Who holds a pipeline's advisory lock, so a refused run can name them. The advisory lock
      -- itself is the truth; this row is only its label.
      CREATE TABLE ${PG_SCHEMA}.lock_owners (
        pipeline text PRIMARY KEY,
        owner text NOT NULL, host text NOT NULL, pid integer NOT NULL,
        started_at text NOT NULL, heartbeat_at text NOT NULL, run_id text NOT NULL,
        process_started_at text
      );
      -- Shared by every pipeline of the database: which pipeline owns each record of a group,
      -- and which pipelines write to a group (with the client_id prefixes they declared).
      CREATE TABLE ${PG_SCHEMA}.claims (
        service text NOT NULL, group_id bigint NOT NULL, client_id text COLLATE "C" NOT NULL,
        pipeline text NOT NULL, claimed_at text NOT NULL,
        PRIMARY KEY (service, group_id, client_id)
      );
      CREATE TABLE ${PG_SCHEMA}.targets (
        service text NOT NULL, group_id bigint NOT NULL, pipeline text NOT NULL,
        prefixes text, registered_at text NOT NULL,
        PRIMARY KEY (service, group_id, pipeline)
      );
    `,
  },
  {
    version: 2,
    description: 'webhook receiver selections and deliveries (deduplicated by order)',
    sql: `
      -- One row per delivered event: the primary key is what makes a repeated delivery (a retry,
      -- or the same event reaching another replica) a no-op.
      CREATE TABLE ${PG_SCHEMA}.webhook_deliveries (
        store text NOT NULL, event_order bigint NOT NULL, manuscript_id bigint NOT NULL,
        received_at text NOT NULL, selection_json text NOT NULL,
        PRIMARY KEY (store, event_order)
      );
      CREATE TABLE ${PG_SCHEMA}.webhook_selections (
        store text NOT NULL, manuscript_id bigint NOT NULL, origin_id text,
        event_order bigint NOT NULL, selection_json text NOT NULL,
        PRIMARY KEY (store, manuscript_id)
      );
    `,
  },
  {
    version: 3,
    description: 'records.row_key: the raw row\'s key beside each record, for the plan\'s fast path',
    sql: `
      -- NULL: unknown, the row takes the full path. Set only together with the hash its row maps to.
      ALTER TABLE ${PG_SCHEMA}.records ADD COLUMN row_key text;
      -- The fast path reads a pipeline's keys in pages, in key order (see PostgresStateStore.rowKeyPages).
      CREATE INDEX records_row_key ON ${PG_SCHEMA}.records (pipeline, row_key COLLATE "C", client_id COLLATE "C") WHERE row_key IS NOT NULL;
    `,
  },
  {
    version: 4,
    description: 'journal.undo_json: the values each write changed, for `rostersync revert`, and an index by run',
    sql: `
      -- NULL for the writes journaled before this version: revert says it cannot undo them.
      ALTER TABLE ${PG_SCHEMA}.journal ADD COLUMN undo_json text;
      CREATE INDEX journal_run ON ${PG_SCHEMA}.journal (pipeline, run_id);
    `,
  },
  {
    version: 5,
    description: 'journal.service and journal.group_id: where each write went, so `rostersync revert` acts there or refuses',
    sql: `
      -- NULL for the writes journaled before this version: revert refuses them and says why.
      ALTER TABLE ${PG_SCHEMA}.journal ADD COLUMN service text;
      ALTER TABLE ${PG_SCHEMA}.journal ADD COLUMN group_id bigint;
    `,
  },
  {
    version: 6,
    description: 'budget_pace: the rate limiter\'s budget shared by the runs of every host on one base URL and API key',
    sql: `
      -- One row per base URL and key (hashed, never the key): src/rate-limit/budget-postgres.ts.
      -- IF NOT EXISTS: a rostersync before this version made the table itself on first use; its
      -- rows are a pace a few seconds long, kept as they are.
      CREATE TABLE IF NOT EXISTS ${PG_SCHEMA}.budget_pace (budget text PRIMARY KEY, state text NOT NULL, updated_at double precision NOT NULL);
    `,
  },
];

export const LATEST_PG_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** A key no other application is likely to use for the migration advisory lock. */
const MIGRATE_LOCK_KEY = '7237891640112233';

/** The schema version of the database; 0 when rostersync never migrated it. */
export function schemaVersion(connection: SyncConnection): number {
  // Two statements: a query naming a table that does not exist fails before it runs.
  const [exists] = connection.query<{ present: boolean }>(`SELECT to_regclass('${PG_SCHEMA}.schema_migrations') IS NOT NULL AS present`);
  if (!exists?.present) return 0;
  const rows = connection.query<{ version: number | null }>(`SELECT max(version) AS version FROM ${PG_SCHEMA}.schema_migrations`);
  return Number(rows[0]?.version ?? 0);
}

/** Refuses to work on a schema this version of rostersync does not match. */
export function requireCurrentSchema(connection: SyncConnection): void {
  const version = schemaVersion(connection);
  if (version < LATEST_PG_VERSION) {
    throw new StateError(
      `the state database ${connection.label} has schema version ${version}; this rostersync needs version ${LATEST_PG_VERSION}.`,
      { hint: 'Run `rostersync state migrate <pipeline>` once (with ROSTERSYNC_STATE_URL or the pipeline\'s `state:` key pointing at this database), then run again. Migrations are explicit because several hosts share this database.' },
    );
  }
  if (version > LATEST_PG_VERSION) {
    throw new StateError(
      `the state database ${connection.label} has schema version ${version}, newer than this rostersync knows (${LATEST_PG_VERSION}).`,
      { hint: 'Upgrade rostersync on this host to the version that migrated the database.' },
    );
  }
}

export interface MigrateResult {
  from: number;
  to: number;
  applied: { version: number; description: string }[];
}

/** Applies every missing migration, each in its own transaction, one migrator at a time. */
export function migrate(connection: SyncConnection): MigrateResult {
  connection.query(`SELECT pg_advisory_lock(${MIGRATE_LOCK_KEY})`);
  try {
    connection.transaction([
      { text: `CREATE SCHEMA IF NOT EXISTS ${PG_SCHEMA}` },
      {
        text: `CREATE TABLE IF NOT EXISTS ${PG_SCHEMA}.schema_migrations (
                 version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      },
    ]);
    const from = schemaVersion(connection);
    if (from > LATEST_PG_VERSION) requireCurrentSchema(connection);
    const applied: MigrateResult['applied'] = [];
    for (const migration of MIGRATIONS.filter((m) => m.version > from)) {
      connection.transaction([
        { text: migration.sql },
        { text: `INSERT INTO ${PG_SCHEMA}.schema_migrations(version, description) VALUES ($1, $2)`, values: [migration.version, migration.description] },
      ]);
      applied.push({ version: migration.version, description: migration.description });
    }
    return { from, to: Math.max(from, LATEST_PG_VERSION), applied };
  } finally {
    if (!connection.isLost) connection.query(`SELECT pg_advisory_unlock(${MIGRATE_LOCK_KEY})`);
  }
}
