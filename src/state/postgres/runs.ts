/** The run history of a pipeline on PostgreSQL (`runs`, keyed by pipeline). */
import type { RunRow } from '../backend.js';
import { toRun, type RunDbRow } from '../rows.js';
import { PG_SCHEMA as S } from './migrations.js';
import type { SyncConnection } from './sync-connection.js';

export class PostgresRuns {
  constructor(
    private readonly connection: SyncConnection,
    private readonly pipeline: string,
    private readonly iso: () => string,
  ) {}

  start(run: { id: string; dryRun: boolean; sourceSha256: string }): void {
    this.connection.query(`INSERT INTO ${S}.runs(pipeline, id, started_at, dry_run, source_sha256) VALUES ($1, $2, $3, $4, $5)`, [
      this.pipeline,
      run.id,
      this.iso(),
      run.dryRun,
      run.sourceSha256,
    ]);
  }

  finish(run: { id: string; outcome: string; validRecords: number; counts: unknown }): void {
    this.connection.query(`UPDATE ${S}.runs SET finished_at = $3, outcome = $4, valid_records = $5, counts_json = $6 WHERE pipeline = $1 AND id = $2`, [
      this.pipeline,
      run.id,
      this.iso(),
      run.outcome,
      run.validRecords,
      JSON.stringify(run.counts),
    ]);
  }

  lastSuccessful(): RunRow | undefined {
    const row = this.connection.query<RunDbRow>(
      `SELECT * FROM ${S}.runs WHERE pipeline = $1 AND NOT dry_run AND outcome IN ('success', 'warning', 'partial') AND (source_sha256 IS NULL OR source_sha256 NOT LIKE 'revert:%') ORDER BY started_at DESC, seq DESC LIMIT 1`,
      [this.pipeline],
    )[0];
    return row ? toRun(row) : undefined;
  }

  find(id: string): RunRow | undefined {
    const row = this.connection.query<RunDbRow>(`SELECT * FROM ${S}.runs WHERE pipeline = $1 AND id = $2`, [this.pipeline, id])[0];
    return row ? toRun(row) : undefined;
  }

  lastWriting(): RunRow | undefined {
    const wrote = ['create', 'update', 'delete'].flatMap((action) => ['done', 'failed'].map((state) => `COALESCE((counts_json::jsonb #>> '{${action},${state}}')::numeric, 0)`)).join(' + ');
    const row = this.connection.query<RunDbRow>(
      `SELECT * FROM ${S}.runs r WHERE pipeline = $1 AND NOT dry_run
         AND (EXISTS (SELECT 1 FROM ${S}.journal j WHERE j.pipeline = r.pipeline AND j.run_id = r.id) OR (counts_json IS NOT NULL AND ${wrote} > 0))
       ORDER BY started_at DESC, seq DESC LIMIT 1`,
      [this.pipeline],
    )[0];
    return row ? toRun(row) : undefined;
  }

  recent(limit = 10): RunRow[] {
    return this.connection
      .query<RunDbRow>(`SELECT * FROM ${S}.runs WHERE pipeline = $1 ORDER BY started_at DESC, seq DESC LIMIT $2`, [this.pipeline, limit])
      .map(toRun);
  }
}
