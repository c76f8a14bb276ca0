/**
 * Claims and targets on PostgreSQL, shared by every pipeline of the database (across hosts): the
 * claim of each record (service, group, client_id → pipeline) and which pipelines target which
 * group, with their declared client_id prefixes. Lookups go in batches of one array parameter.
 */
import type { Target, TargetRegistration } from '../backend.js';
import { normalizeServiceUrl } from '../identity.js';
import { PG_SCHEMA as S } from './migrations.js';
import type { SyncConnection } from './sync-connection.js';

/** Ids per lookup round trip: one array parameter, so far larger batches than SQLite's. */
export const PG_BATCH = 5_000;

export class PostgresClaims {
  constructor(
    private readonly connection: SyncConnection,
    private readonly pipeline: string,
    private readonly iso: () => string,
  ) {}

  owners(target: Target, clientIds: readonly string[]): Map<string, string> {
    const result = new Map<string, string>();
    for (const batch of batches(clientIds, PG_BATCH)) {
      const rows = this.connection.query<{ client_id: string; pipeline: string }>(
        `SELECT client_id, pipeline FROM ${S}.claims WHERE service = $1 AND group_id = $2 AND client_id = ANY($3::text[])`,
        [normalizeServiceUrl(target.baseUrl), target.groupId, batch],
      );
      for (const row of rows) result.set(row.client_id, row.pipeline);
    }
    return result;
  }

  claim(target: Target, clientIds: readonly string[]): Map<string, string> {
    const service = normalizeServiceUrl(target.baseUrl);
    const taken = new Map<string, string>();
    for (const batch of batches(clientIds, PG_BATCH)) {
      // Two statements, not one: the second sees claims another pipeline committed while the
      // first waited on them (a conflicting insert waits, then does nothing).
      const [, owners] = this.connection.transaction([
        {
          text: `INSERT INTO ${S}.claims(service, group_id, client_id, pipeline, claimed_at)
                 SELECT $1, $2, id, $4, $5 FROM unnest($3::text[]) AS id ON CONFLICT DO NOTHING`,
          values: [service, target.groupId, batch, this.pipeline, this.iso()],
        },
        {
          text: `SELECT client_id, pipeline FROM ${S}.claims WHERE service = $1 AND group_id = $2 AND client_id = ANY($3::text[]) AND pipeline <> $4`,
          values: [service, target.groupId, batch, this.pipeline],
        },
      ]);
      for (const row of owners!.rows as { client_id: string; pipeline: string }[]) taken.set(row.client_id, row.pipeline);
    }
    return taken;
  }

  release(target: Target, clientIds: readonly string[]): void {
    const service = normalizeServiceUrl(target.baseUrl);
    this.connection.transaction(
      batches(clientIds, PG_BATCH).map((batch) => ({
        text: `DELETE FROM ${S}.claims WHERE service = $1 AND group_id = $2 AND client_id = ANY($3::text[]) AND pipeline = $4`,
        values: [service, target.groupId, batch, this.pipeline],
      })),
    );
  }

  claimOwned(target: Target): Map<string, string> {
    const service = normalizeServiceUrl(target.baseUrl);
    const [, shared] = this.connection.transaction([
      {
        text: `INSERT INTO ${S}.claims(service, group_id, client_id, pipeline, claimed_at)
               SELECT $1, $2, client_id, $3, $4 FROM ${S}.records WHERE pipeline = $3 ON CONFLICT DO NOTHING`,
        values: [service, target.groupId, this.pipeline, this.iso()],
      },
      {
        text: `SELECT c.client_id, c.pipeline FROM ${S}.records r JOIN ${S}.claims c ON c.client_id = r.client_id
               WHERE r.pipeline = $3 AND c.service = $1 AND c.group_id = $2 AND c.pipeline <> $3`,
        values: [service, target.groupId, this.pipeline],
      },
    ]);
    return new Map((shared!.rows as { client_id: string; pipeline: string }[]).map((row) => [row.client_id, row.pipeline]));
  }

  registerTarget(target: Target, sharedPrefixes: readonly string[] | null): void {
    this.connection.query(
      `INSERT INTO ${S}.targets(service, group_id, pipeline, prefixes, registered_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (service, group_id, pipeline) DO UPDATE SET prefixes = excluded.prefixes`,
      [normalizeServiceUrl(target.baseUrl), target.groupId, this.pipeline, sharedPrefixes ? JSON.stringify(sharedPrefixes) : null, this.iso()],
    );
  }

  targetsOn(target: Target): TargetRegistration[] {
    const rows = this.connection.query<{ pipeline: string; prefixes: string | null }>(
      `SELECT pipeline, prefixes FROM ${S}.targets WHERE service = $1 AND group_id = $2 ORDER BY pipeline`,
      [normalizeServiceUrl(target.baseUrl), target.groupId],
    );
    return rows.map((row) => ({ pipeline: row.pipeline, sharedPrefixes: row.prefixes === null ? null : (JSON.parse(row.prefixes) as string[]) }));
  }
}

export function batches<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}
