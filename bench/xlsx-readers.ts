/**
 * XLSX readers compared: rostersync's reader (src/sources/xlsx/reader.ts, yauzl +
 * saxes) against exceljs 4.4's streaming `WorkbookReader` (the reader it replaced, values
 * normalised the same way the old reader did) and exceljs's full-workbook `readFile`.
 *
 *   npx tsx bench/xlsx-readers.ts            # corpus + 10k and 100k rows, 3 runs each
 *   npx tsx bench/xlsx-readers.ts --quick    # corpus (5 reads) + 10k rows, 1 run
 *   npx tsx bench/xlsx-readers.ts --memory   # only the memory-against-rows section
 *
 * 1. Correctness and determinism: every sheet of test/fixtures/xlsx-corpus read N times by each
 *    reader, compared with the openpyxl reference (expected.json). exceljs is given the benefit
 *    of the doubt on policy: a cell it reports as an error or a missing result counts as a reject,
 *    as in our reader; only values are judged.
 * 2. Speed and peak memory: rosters of 10k and 100k rows (bench/generate.ts, written by exceljs's
 *    streaming writer, which stores worksheets before shared strings as Excel for Mac does), each
 *    read in its own child process (peak RSS is that reader's alone). Median time of the runs;
 *    ratio against the bare exceljs streaming read of the same file in the same run.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ExcelJS from 'exceljs';
import type { Cell, Row } from 'exceljs';
import { openSource } from '../src/sources/index.js';
import { normaliseCell, type CellIssue } from './baseline/normalise-cell.js';
import type { CellValue } from '../src/sources/types.js';
import { HEADERS, makeRows, writeXlsx } from './generate.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CORPUS = `${ROOT}test/fixtures/xlsx-corpus/`;
const DATA = `${ROOT}bench/data/xlsx-readers/`;
/** A child that takes longer than this is stopped (every load loop is bounded in count and time). */
const CHILD_TIMEOUT_MS = 10 * 60_000;

type Item = { row: number; values: Record<string, CellValue> } | { row: number; rejected: string[] };
interface SheetResult {
  headers: string[];
  items: Item[];
}
type ReaderName = 'rostersync' | 'exceljs-stream' | 'exceljs-full';

async function readOurs(path: string, sheet: string): Promise<SheetResult> {
  const source = await openSource({ file: path, xlsx: { sheet, header_row: 1 } }, { baseDir: '/' });
  const items: Item[] = [];
  for await (const item of source.items) {
    if (item.kind === 'row') items.push({ row: item.row.provenance.row, values: item.row.values });
    else items.push({ row: item.error.provenance.row, rejected: [...item.error.message.matchAll(/\bcell ([A-Z]+\d+)/g)].map((match) => match[1] as string) });
  }
  return { headers: source.headers, items };
}

/** What the replaced reader did with an exceljs row: normaliseCell on the value (the model for formulas). */
function exceljsRow(row: Row, headers: string[] | undefined, date1904: boolean): { cells: (CellValue)[]; rejected: string[] } {
  const cells: CellValue[] = [];
  const rejected: string[] = [];
  row.eachCell((cell: Cell, column: number) => {
    let issue: CellIssue | undefined;
    const raw = cell.type === ExcelJS.ValueType.Formula ? cell.model : cell.value;
    const value = normaliseCell(raw, { numFmt: cell.numFmt, date1904, onIssue: (found) => (issue = found) });
    if (issue && issue !== 'unsupported') rejected.push(cell.address);
    else if (headers && value !== null && column > headers.length) rejected.push(cell.address);
    cells[column - 1] = value;
  });
  return { cells, rejected };
}

function toResult(rows: Iterable<Row>, date1904: boolean): SheetResult {
  let headers: string[] | undefined;
  const items: Item[] = [];
  for (const row of rows) {
    if (!headers) {
      const { cells } = exceljsRow(row, undefined, date1904);
      while (cells.length > 0 && (cells[cells.length - 1] ?? null) === null) cells.pop();
      headers = Array.from(cells, (cell) => (cell === null || cell === undefined ? '' : String(cell)));
      continue;
    }
    const { cells, rejected } = exceljsRow(row, headers, date1904);
    if (rejected.length > 0) {
      items.push({ row: row.number, rejected });
      continue;
    }
    const values: Record<string, CellValue> = {};
    let filled = 0;
    headers.forEach((header, index) => {
      const value = cells[index] ?? null;
      values[header] = value;
      if (value !== null) filled++;
    });
    if (filled > 0) items.push({ row: row.number, values });
  }
  return { headers: headers ?? [], items };
}

async function readExceljsStream(path: string, sheet: string): Promise<SheetResult> {
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(path, { worksheets: 'emit', sharedStrings: 'cache', styles: 'cache', hyperlinks: 'cache', entries: 'ignore' });
  const model = reader as unknown as { properties?: { model?: { date1904?: boolean } } };
  for await (const worksheet of reader) {
    const named = worksheet as unknown as { name: string } & AsyncIterable<Row>;
    if (named.name.normalize('NFC') !== sheet.normalize('NFC')) continue;
    const rows: Row[] = [];
    for await (const row of named) rows.push(row);
    return toResult(rows, model.properties?.model?.date1904 === true);
  }
  throw new Error(`sheet "${sheet}" not found`);
}

async function readExceljsFull(path: string, sheet: string): Promise<SheetResult> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(path);
  const worksheet = workbook.worksheets.find((candidate) => candidate.name.normalize('NFC') === sheet.normalize('NFC'));
  if (!worksheet) throw new Error(`sheet "${sheet}" not found`);
  const rows: Row[] = [];
  worksheet.eachRow((row) => rows.push(row));
  return toResult(rows, workbook.properties.date1904 === true);
}

const READERS: Record<ReaderName, (path: string, sheet: string) => Promise<SheetResult>> = {
  rostersync: readOurs,
  'exceljs-stream': readExceljsStream,
  'exceljs-full': readExceljsFull,
};

/** JSON with object keys sorted, so results compare whatever order their keys were set in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

interface CorpusScore {
  sheets: number;
  /** Sheets read right on every read. */
  alwaysRight: number;
  /** Sheets whose reads did not all give the same result (or failed only sometimes). */
  nondeterministic: number;
  reads: number;
  rightReads: number;
  failedReads: number;
  /** Uncaught errors during this reader's reads: each would have killed a real process. */
  uncaught: number;
  /** Over all reads that finished: cells (and whole rows) with a wrong value... */
  wrongCells: number;
  /** ...of which only the representation of a time, duration or date-time differs (the old reader had none). */
  timeRepresentation: number;
  wrong: string[];
}

const TIME_LIKE = /^(\d{4}-\d{2}-\d{2} )?-?\d+:\d{2}:\d{2}$/;

/** Counts wrong cells of one read; a missing or extra row counts as one wrong cell per value it should hold. */
function countWrongCells(expected: SheetResult, actual: SheetResult, score: CorpusScore): void {
  const actualByRow = new Map(actual.items.map((item) => [item.row, item]));
  const expectedRows = new Set(expected.items.map((item) => item.row));
  for (const item of expected.items) {
    const found = actualByRow.get(item.row);
    if ('rejected' in item) {
      if (!found || !('rejected' in found) || canonical(found.rejected) !== canonical(item.rejected)) score.wrongCells += item.rejected.length;
      continue;
    }
    const values = found && 'values' in found ? found.values : {};
    for (const [key, value] of Object.entries(item.values)) {
      if (canonical(values[key] ?? null) === canonical(value)) continue;
      score.wrongCells++;
      if (typeof value === 'string' && TIME_LIKE.test(value)) score.timeRepresentation++;
    }
  }
  for (const item of actual.items) if (!expectedRows.has(item.row)) score.wrongCells++;
}

/** Uncaught exceptions seen since the bench started (exceljs's temp-file ENOENT). */
let uncaughtErrors = 0;
const READ_TIMEOUT_MS = 30_000;

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('read did not finish (stalled)')), READ_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function scoreCorpus(reader: ReaderName, reads: number): Promise<CorpusScore> {
  const expected = JSON.parse(readFileSync(`${CORPUS}expected.json`, 'utf8')) as Record<string, { sheets: Array<SheetResult & { name: string }> }>;
  const score: CorpusScore = { sheets: 0, alwaysRight: 0, nondeterministic: 0, reads: 0, rightReads: 0, failedReads: 0, uncaught: 0, wrongCells: 0, timeRepresentation: 0, wrong: [] };
  const uncaughtBefore = uncaughtErrors;
  for (const [file, { sheets }] of Object.entries(expected)) {
    for (const sheet of sheets) {
      score.sheets++;
      const outcomes = new Set<string>();
      let right = 0;
      for (let read = 0; read < reads; read++) {
        score.reads++;
        let outcome: string;
        try {
          const result = await withTimeout(READERS[reader](`${CORPUS}${file}`, sheet.name));
          outcome = canonical(result);
          if (outcome === canonical({ headers: sheet.headers, items: sheet.items })) right++;
          else countWrongCells(sheet, canonical(result.headers) === canonical(sheet.headers) ? result : { headers: result.headers, items: [] }, score);
        } catch (error) {
          score.failedReads++;
          outcome = `failed: ${error instanceof Error ? error.message : String(error)}`;
        }
        outcomes.add(outcome);
      }
      score.rightReads += right;
      if (right === reads) score.alwaysRight++;
      else score.wrong.push(`${file} "${sheet.name}" (${right}/${reads} right)`);
      if (outcomes.size > 1) score.nondeterministic++;
    }
  }
  score.uncaught = uncaughtErrors - uncaughtBefore;
  return score;
}

/** Child mode: read every row of the first sheet and touch every value. */
async function child(reader: ReaderName, path: string, sampleHeap: boolean): Promise<void> {
  const started = performance.now();
  let rows = 0;
  let cells = 0;
  /** Largest live heap after a full GC, sampled every 25k rows (only with --heap: the GCs cost time). */
  let liveHeapMb = 0;
  const gc = (globalThis as { gc?: () => void }).gc;
  if (reader === 'rostersync') {
    const source = await openSource({ file: path }, { baseDir: '/' });
    for await (const item of source.items) {
      if (item.kind !== 'row') continue;
      rows++;
      for (const key in item.row.values) if (item.row.values[key] !== null) cells++;
      if (sampleHeap && gc && rows % 25_000 === 0) {
        gc();
        liveHeapMb = Math.max(liveHeapMb, Math.round(process.memoryUsage().heapUsed / 1024 / 1024));
      }
    }
    if (sampleHeap && gc) {
      gc();
      liveHeapMb = Math.max(liveHeapMb, Math.round(process.memoryUsage().heapUsed / 1024 / 1024));
    }
  } else if (reader === 'exceljs-stream') {
    // The bare streaming read, as bench/measure.mjs `bare-xlsx` does it, touching each value.
    const workbook = new ExcelJS.stream.xlsx.WorkbookReader(path, { worksheets: 'emit', sharedStrings: 'cache', styles: 'cache', hyperlinks: 'cache', entries: 'ignore' });
    for await (const worksheet of workbook) {
      for await (const row of worksheet as unknown as AsyncIterable<Row>) {
        rows++;
        row.eachCell((cell) => {
          if (cell.value !== null) cells++;
        });
      }
      break;
    }
    rows--; // header
  } else {
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(path);
    workbook.worksheets[0]?.eachRow((row) => {
      rows++;
      row.eachCell((cell) => {
        if (cell.value !== null) cells++;
      });
    });
    rows--;
  }
  const ms = performance.now() - started;
  console.log(JSON.stringify({ ms: Math.round(ms), maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024), rows, cells, liveHeapMb }));
}

interface ChildResult {
  ms: number;
  maxRssMb: number;
  rows: number;
  cells: number;
  liveHeapMb: number;
}

function runChild(reader: ReaderName, path: string, sampleHeap = false): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...(sampleHeap ? ['--expose-gc'] : []), '--import', 'tsx', fileURLToPath(import.meta.url), '--child', reader, path, ...(sampleHeap ? ['--heap'] : [])],
      { timeout: CHILD_TIMEOUT_MS, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${reader} on ${path} failed: ${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as ChildResult);
      },
    );
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : Math.round(((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2);
}

async function correctnessAndSpeed(reads: number, sizes: number[], runs: number, readers: ReaderName[]): Promise<void> {
  console.log(`## Corpus: ${reads} reads of every sheet\n`);
  // exceljs's streaming reader can throw from a temp-file stream nobody listens to; count it
  // instead of dying, as a sync process would.
  process.on('uncaughtException', () => uncaughtErrors++);
  console.log('| reader | sheets right on every read | right reads | failed reads | sheets with differing reads | uncaught errors (would kill the process) | wrong cells in finished reads | of which time/duration/date-time form only |');
  console.log('|---|---|---|---|---|---|---|---|');
  const wrongs: string[] = [];
  for (const reader of readers) {
    const score = await scoreCorpus(reader, reads);
    console.log(`| ${reader} | ${score.alwaysRight}/${score.sheets} | ${score.rightReads}/${score.reads} | ${score.failedReads} | ${score.nondeterministic} | ${score.uncaught} | ${score.wrongCells} | ${score.timeRepresentation} |`);
    if (score.wrong.length > 0) wrongs.push(`- ${reader}: ${score.wrong.join('; ')}`);
  }
  if (wrongs.length > 0) console.log(`\nNot always right:\n${wrongs.join('\n')}`);

  mkdirSync(DATA, { recursive: true });
  console.log(`\n## Speed and peak memory: median of ${runs} run(s), each reader in its own process\n`);
  console.log('| rows | reader | median ms | vs exceljs-stream | peak RSS MB | rows read |');
  console.log('|---|---|---|---|---|---|');
  for (const size of sizes) {
    const path = `${DATA}roster-${size}.xlsx`;
    if (!existsSync(path)) await writeXlsx(path, { rows: size, format: 'xlsx' });
    const figures = new Map<ReaderName, { ms: number; rss: number; rows: number }>();
    for (const reader of readers) {
      const results: ChildResult[] = [];
      for (let run = 0; run < runs; run++) results.push(await runChild(reader, path));
      figures.set(reader, { ms: median(results.map((result) => result.ms)), rss: Math.max(...results.map((result) => result.maxRssMb)), rows: results[0]?.rows ?? 0 });
    }
    const baseline = figures.get('exceljs-stream')?.ms ?? 1;
    for (const [reader, { ms, rss, rows }] of figures) {
      console.log(`| ${size.toLocaleString('en')} | ${reader} | ${ms} | ${(ms / baseline).toFixed(2)}x | ${rss} | ${rows} |`);
    }
  }
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const reads = quick ? 5 : 20;
  const sizes = quick ? [10_000] : [10_000, 100_000];
  const runs = quick ? 1 : 3;
  const readers: ReaderName[] = ['rostersync', 'exceljs-stream', 'exceljs-full'];

  const memoryOnly = process.argv.includes('--memory');
  if (!memoryOnly) await correctnessAndSpeed(reads, sizes, runs, readers);
  if (quick) return;
  // Flat memory in the rows: our reader alone, on rosters with shared strings (the table grows
  // with the unique texts, and every XLSX reader must hold it) and with inline strings (nothing
  // grows with the rows).
  console.log(`\n## Memory against rows: rostersync alone, median of ${runs} run(s)\n`);
  console.log('| rows | strings | median ms | peak RSS MB | live heap after GC, max MB |');
  console.log('|---|---|---|---|---|');
  for (const inline of [false, true]) {
    for (const size of [10_000, 100_000, 300_000]) {
      const path = `${DATA}roster-${size}${inline ? '-inline' : ''}.xlsx`;
      if (!existsSync(path)) await (inline ? writeInlineXlsx(path, size) : writeXlsx(path, { rows: size, format: 'xlsx' }));
      const results: ChildResult[] = [];
      for (let run = 0; run < runs; run++) results.push(await runChild('rostersync', path));
      const heap = await runChild('rostersync', path, true);
      console.log(`| ${size.toLocaleString('en')} | ${inline ? 'inline' : 'shared'} | ${median(results.map((result) => result.ms))} | ${Math.max(...results.map((result) => result.maxRssMb))} | ${heap.liveHeapMb} |`);
    }
  }
}

/** The bench roster with inline strings instead of a shared-strings table. */
async function writeInlineXlsx(path: string, rows: number): Promise<void> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useSharedStrings: false, useStyles: true });
  const sheet = workbook.addWorksheet('Roster');
  sheet.columns = HEADERS.map((header) => ({ header, key: header, ...(header === 'Last review' ? { style: { numFmt: 'yyyy-mm-dd' } } : {}) }));
  for (const row of makeRows({ rows, format: 'xlsx' })) {
    sheet.addRow([row.id, row.name, row.email, row.orcid || null, row.level, row.areas, row.reviews, row.lastReview]).commit();
  }
  sheet.commit();
  await workbook.commit();
}

if (process.argv[2] === '--child') await child(process.argv[3] as ReaderName, process.argv[4] as string, process.argv[5] === '--heap');
else await main();
