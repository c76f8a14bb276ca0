/**
 * One measured task per process, so peak RSS (`process.resourceUsage().maxRSS`) belongs to that
 * task alone. Prints one JSON line: { ms, maxRssMb, ...task figures }. Time is measured in-process
 * around the task (module loading and tsx startup excluded, identically for every task). exceljs is
 * imported only by the task that uses it: loaded, it adds about 130 MB to every other task's peak RSS.
 *
 *   tsx bench/child.ts plan <pipeline.yaml> <stateDir> <fields.json> <reportDir>
 *   tsx bench/child.ts plan-full-path <pipeline.yaml> <stateDir> <fields.json> <reportDir>   (--no-fast-path)
 *   tsx bench/child.ts bare-csv <roster.csv>
 *   tsx bench/child.ts bare-xlsx <roster.xlsx>
 *   tsx bench/child.ts populate <pipeline.yaml> <stateDir> <fields.json>
 */
import { createReadStream, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse';
import type { CustomFieldsListing } from '../src/client/schemas.js';
import { loadPipeline } from '../src/config/load.js';
import { compileMapping } from '../src/mapping/compile.js';
import { mapRoster } from '../src/mapping/roster.js';
import { rowKeyOf, rowKeySalt } from '../src/mapping/row-key.js';
import { canonicalJson, hashJson } from '../src/plan/canonical.js';
import { KnownRows } from '../src/plan/known-rows.js';
import { openSource } from '../src/sources/index.js';
import { runSync as runSyncFromSources } from '../src/sync/run-sync.js';
import { openState, stateFile } from '../src/state/paths.js';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** The group id recorded in populated states; dry runs never call the service, so any id works. */
const BENCH_GROUP_ID = 9001;

/**
 * The plan as users run it: the compiled build (dist/, which `npm run bench` builds first) when
 * BENCH_DIST is set, else the TypeScript sources through tsx.
 */
async function plan(pipelinePath: string, stateDir: string, fieldsFile: string, reportDir: string, fastPath = true): Promise<Record<string, unknown>> {
  const runSync = process.env['BENCH_DIST'] ? ((await import(join(ROOT, 'dist', 'sync', 'run-sync.js'))) as typeof import('../src/sync/run-sync.js')).runSync : runSyncFromSources;
  const result = await runSync({
    fastPath,
    pipelinePath,
    // A dry run with a saved custom-fields listing makes no call; the URL is never contacted.
    service: { baseUrl: 'http://127.0.0.1:9', apiKey: 'demo-key-0123456789' },
    dryRun: true,
    // An empty state is a first run: the group is to be created (dry: nothing is).
    createGroup: true,
    stateDir,
    fieldsFile,
    reportDir,
  });
  return { exitCode: result.exitCode, valid: result.report.input.valid, counts: result.report.counts };
}

async function bareCsv(file: string): Promise<Record<string, unknown>> {
  let rows = 0;
  for await (const record of createReadStream(file).pipe(parse())) if (record) rows++;
  return { rows: rows - 1 };
}

async function bareCsvColumns(file: string): Promise<Record<string, unknown>> {
  let rows = 0;
  for await (const record of createReadStream(file).pipe(parse({ columns: true }))) if (record) rows++;
  return { rows };
}

/** The same WorkbookReader options our reader needs (dates need styles, see src/sources/xlsx-reader.ts). */
async function bareXlsx(file: string): Promise<Record<string, unknown>> {
  let rows = 0;
  const { default: ExcelJS } = await import('exceljs');
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(file, { worksheets: 'emit', sharedStrings: 'cache', styles: 'cache', hyperlinks: 'cache' });
  for await (const worksheet of reader) {
    for await (const row of worksheet) {
      if (row.values) rows++;
    }
    break;
  }
  return { rows: rows - 1 };
}

/**
 * A state as a previous successful sync of this roster leaves it: every record owned with the
 * hash of its current fields. Written in bulk (one transaction per 20k rows) rather than by 1M
 * real writes, which would benchmark the emulator instead.
 */
async function populate(pipelinePath: string, stateDir: string, fieldsFile: string): Promise<Record<string, unknown>> {
  const pipeline = loadPipeline(pipelinePath);
  const store = openState(pipeline, { stateDir });
  store.setGroupId(BENCH_GROUP_ID);
  store.close();
  const listing = JSON.parse(readFileSync(fieldsFile, 'utf8')) as CustomFieldsListing;
  const compiled = compileMapping(pipeline.mapping, listing, { mappingFile: pipeline.mappingFile });
  const reopen = () => openSource(pipeline.source, { baseDir: pipeline.dir });
  const opened = await reopen();
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
  // Row keys as a sync stores them (src/sync/gather.ts), so the plan can take its fast path.
  const salt = rowKeySalt({ mappingHash: pipeline.mappingHash, listing, headers: opened.headers, format: opened.format });
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
const started = performance.now();
let figures: Record<string, unknown>;
switch (task) {
  case 'plan':
    figures = await plan(args[0]!, args[1]!, args[2]!, args[3]!);
    break;
  case 'plan-full-path':
    figures = await plan(args[0]!, args[1]!, args[2]!, args[3]!, false);
    break;
  case 'bare-csv':
    figures = await bareCsv(args[0]!);
    break;
  case 'bare-csv-columns':
    figures = await bareCsvColumns(args[0]!);
    break;
  case 'bare-xlsx':
    figures = await bareXlsx(args[0]!);
    break;
  case 'populate':
    figures = await populate(args[0]!, args[1]!, args[2]!);
    break;
  default:
    throw new Error(`unknown task ${task}`);
}
const ms = performance.now() - started;
process.stdout.write(`${JSON.stringify({ task, ms, maxRssMb: process.resourceUsage().maxRSS / 1024, ...figures })}\n`);
