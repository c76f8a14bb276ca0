/**
 * Fills a state for the plan benchmarks, in a process of its own (run under tsx: it uses the
 * TypeScript sources). The measured tasks run in bench/measure.mjs, under plain node.
 *
 *   tsx bench/child.ts populate <pipeline.yaml> <stateDir> <fields.json>
 */
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { CustomFieldsListing } from '../src/client/schemas.js';
import { loadPipeline } from '../src/config/load.js';
import { compileMapping } from '../src/mapping/compile.js';
import { mapRoster } from '../src/mapping/roster.js';
import { rowKeyOf, rowKeySalt, rowKeySaltName } from '../src/mapping/row-key.js';
import { canonicalJson, hashJson } from '../src/plan/canonical.js';
import { KnownRows } from '../src/plan/known-rows.js';
import { openSource } from '../src/sources/index.js';
import { openState } from '../src/state/open.js';
import { stateFile } from '../src/state/paths.js';

/** The group id recorded in populated states; dry runs never call the service, so any id works. */
const BENCH_GROUP_ID = 9001;

/**
 * A state as a previous successful sync of this roster leaves it: every record owned with the
 * hash of its current fields. Written in bulk (one transaction per 20k rows) rather than by 1M
 * real writes, which would benchmark the emulator instead.
 */
async function populate(pipelinePath: string, stateDir: string, fieldsFile: string): Promise<Record<string, unknown>> {
  const pipeline = loadPipeline(pipelinePath);
  const listing = JSON.parse(readFileSync(fieldsFile, 'utf8')) as CustomFieldsListing;
  const compiled = compileMapping(pipeline.mapping, listing, { mappingFile: pipeline.mappingFile });
  const reopen = () => openSource(pipeline.source, { baseDir: pipeline.dir });
  const opened = await reopen();
  // Row keys as a sync stores them (src/sync/gather.ts), so the plan can take its fast path.
  const salt = rowKeySalt({ mappingHash: pipeline.mappingHash, listing, headers: opened.headers, format: opened.format });
  const store = openState(pipeline, { stateDir });
  store.setGroupId(BENCH_GROUP_ID);
  store.setRowKeySalt(rowKeySaltName(salt));
  store.close();
  const db = new Database(stateFile(pipeline, { stateDir }));
  db.pragma('journal_mode = WAL');
  const insert = db.prepare(
    "INSERT OR REPLACE INTO records(client_id, fields_json, hash, run_id, source_row, updated_at, row_key) VALUES (?, ?, ?, 'bench-populate', ?, '2025-01-01T00:00:00Z', ?)",
  );
  type Row = [string, string, string, number | null, string | null];
  let batch: Row[] = [];
  const flush = db.transaction((rows: Row[]) => {
    for (const row of rows) insert.run(...row);
  });
  let records = 0;
  await mapRoster(opened, compiled, {
    reopen,
    fastPath: { rowKey: (row) => rowKeyOf(salt, opened.headers, row), known: KnownRows.from([], 0), onKnown: () => undefined },
    onRecord: (record) => {
      const json = canonicalJson(record.fields);
      const row = record.provenance.row;
      batch.push([record.clientId, json, hashJson(json), row, record.rowKey ?? null]);
      records++;
      if (batch.length >= 20_000) {
        flush(batch);
        batch = [];
      }
    },
  });
  flush(batch);
  db.close();
  return { records };
}

const [task, ...args] = process.argv.slice(2);
if (task !== 'populate') throw new Error(`unknown task ${task} (the measured tasks are in bench/measure.mjs)`);
const started = performance.now();
const figures = await populate(args[0]!, args[1]!, args[2]!);
process.stdout.write(`${JSON.stringify({ task, ms: performance.now() - started, maxRssMb: process.resourceUsage().maxRSS / 1024, ...figures })}\n`);
