/**
 * Claims and targets on SQLite, in `_shared.sqlite` (attached as `shared`), which every pipeline
 * of one state directory opens: the claim of each record (service, group, client_id → pipeline)
 * and which pipelines target which group, with their declared client_id prefixes.
 */
import type Database from 'better-sqlite3';
import type { Target, TargetRegistration } from '../backend.js';
import { normalizeServiceUrl } from '../identity.js';

export class SqliteClaims {
  private readonly stmts;

  constructor(
    private readonly db: Database.Database,
    private readonly pipeline: string,
    private readonly iso: () => string,
  ) {
    this.stmts = {
      claimOwner: db.prepare<[string, number, string], { pipeline: string }>('SELECT pipeline FROM shared.claims WHERE service = ? AND group_id = ? AND client_id = ?'),
      insertClaim: db.prepare('INSERT OR IGNORE INTO shared.claims(service, group_id, client_id, pipeline, claimed_at) VALUES (?, ?, ?, ?, ?)'),
      releaseClaim: db.prepare('DELETE FROM shared.claims WHERE service = ? AND group_id = ? AND client_id = ? AND pipeline = ?'),
    };
  }

  owners(target: Target, clientIds: readonly string[]): Map<string, string> {
    const service = normalizeServiceUrl(target.baseUrl);
    const result = new Map<string, string>();
    for (const clientId of clientIds) {
      const row = this.stmts.claimOwner.get(service, target.groupId, clientId);
      if (row) result.set(clientId, row.pipeline);
    }
    return result;
  }

  claim(target: Target, clientIds: readonly string[]): Map<string, string> {
    const service = normalizeServiceUrl(target.baseUrl);
    const now = this.iso();
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

  release(target: Target, clientIds: readonly string[]): void {
    const service = normalizeServiceUrl(target.baseUrl);
    this.db.transaction(() => {
      for (const clientId of clientIds) this.stmts.releaseClaim.run(service, target.groupId, clientId, this.pipeline);
    })();
  }

  claimOwned(target: Target): Map<string, string> {
    const service = normalizeServiceUrl(target.baseUrl);
    this.db
      .prepare('INSERT OR IGNORE INTO shared.claims(service, group_id, client_id, pipeline, claimed_at) SELECT ?, ?, client_id, ?, ? FROM records')
      .run(service, target.groupId, this.pipeline, this.iso());
    const rows = this.db
      .prepare('SELECT c.client_id AS clientId, c.pipeline AS pipeline FROM records r JOIN shared.claims c ON c.client_id = r.client_id WHERE c.service = ? AND c.group_id = ? AND c.pipeline <> ?')
      .all(service, target.groupId, this.pipeline) as { clientId: string; pipeline: string }[];
    return new Map(rows.map((row) => [row.clientId, row.pipeline]));
  }

  registerTarget(target: Target, sharedPrefixes: readonly string[] | null): void {
    this.db
      .prepare(
        `INSERT INTO shared.targets(service, group_id, pipeline, prefixes, registered_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(service, group_id, pipeline) DO UPDATE SET prefixes = excluded.prefixes`,
      )
      .run(normalizeServiceUrl(target.baseUrl), target.groupId, this.pipeline, sharedPrefixes ? JSON.stringify(sharedPrefixes) : null, this.iso());
  }

  targetsOn(target: Target): TargetRegistration[] {
    const rows = this.db
      .prepare('SELECT pipeline, prefixes FROM shared.targets WHERE service = ? AND group_id = ? ORDER BY pipeline')
      .all(normalizeServiceUrl(target.baseUrl), target.groupId) as { pipeline: string; prefixes: string | null }[];
    return rows.map((row) => ({ pipeline: row.pipeline, sharedPrefixes: row.prefixes === null ? null : (JSON.parse(row.prefixes) as string[]) }));
  }
}
