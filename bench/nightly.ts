/**
 * The nightly run of a large roster that adds a few new rows: the plan (`sync --dry-run`) as cron
 * runs it after a sync of the same roster, with 0, 1 and 100 new rows, its people from the labelled
 * corpus (realistic name frequencies: the same-person check's cost depends on them,
 * bench/generate.ts writeCorpusCsv). A new client_id makes the check compare the new rows with the
 * roster and the inventory; the nightly without a new row (the fast path alone) is the baseline,
 * measured in the same run, interleaved.
 *
 * The roster of N + 100 corpus rows is cut in two: the state is filled from its first N rows (as a
 * sync of them leaves it, bench/child.ts populate), and the nightly rosters are the first N + K
 * rows. Each plan runs in bench/measure.mjs (compiled build, plain node): wall time and peak RSS.
 *
 *   npm run build && nice npx tsx bench/nightly.ts [--rows=100000,1000000] [--new=0,1,100] [--runs=3,2]
 *
 * Prints the figures and writes them to bench/nightly-results.json.
 */
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { createClient } from '../src/client/client.js';
import { startEmulator } from '../src/emulator/server.js';
import { pipelineYaml, writeCorpusCsv } from './generate.js';
import { spread, type Spread } from './stats.js';

const ROOT = resolve(import.meta.dirname, '..');
const DATA = join(ROOT, 'bench', 'data');
/** New rows at most: the corpus is generated with this many rows more than the state holds. */
const MAX_NEW = 100;

interface Measured {
  ms: number;
  maxRssMb: number;
  exitCode: number;
  valid: number;
  counts: Record<string, Record<string, number>>;
}

export interface NightlyCase {
  rows: number;
  /** New rows in the nightly roster (0: the baseline). */
  newRows: number;
  runs: number;
  ms: Spread;
  maxRssMb: Spread;
  /** Per run, against the baseline (0 new rows) of the same round. */
  msRatio: Spread;
  rssRatio: Spread;
  creates: number;
  /** The same-person check's pairs (found by tier, listed) of the last run. */
  duplicatePeopleFound?: unknown;
}

function log(message: string): void {
  process.stderr.write(`[nightly ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

function runChild(script: string[], args: string[], timeoutMs: number): Promise<Record<string, unknown>> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [...script, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`${args.join(' ')} failed (exit ${code}): ${stderr}`));
      else resolveRun(JSON.parse(line) as Record<string, unknown>);
    });
  });
}

/** The first `lines` lines of a file (its header and rows: corpus cells hold no line break). */
async function copyHead(from: string, to: string, lines: number): Promise<void> {
  const out = createWriteStream(to);
  let written = 0;
  const reader = createInterface({ input: createReadStream(from), crlfDelay: Infinity });
  for await (const line of reader) {
    if (written++ >= lines) break;
    if (!out.write(`${line}\n`)) await new Promise<void>((done) => out.once('drain', () => done()));
  }
  reader.close();
  await new Promise<void>((done, fail) => out.end((error?: Error | null) => (error ? fail(error) : done())));
}

/** The corpus roster of rows + MAX_NEW rows, cut into the synced roster and the nightly ones. */
async function ensureRosters(rows: number, newRows: readonly number[]): Promise<string> {
  const dir = join(DATA, `nightly-corpus-${rows}`);
  const marker = join(dir, '.complete');
  if (!existsSync(marker)) {
    log(`${rows}: generating the corpus roster (${rows} + ${MAX_NEW} rows)`);
    await writeCorpusCsv(dir, rows + MAX_NEW, 42);
    writeFileSync(marker, `${rows}\n`);
  }
  for (const k of newRows) {
    const roster = join(dir, `roster-${k}.csv`);
    if (!existsSync(roster)) await copyHead(join(dir, 'roster.csv'), roster, 1 + rows + k);
    // One pipeline name (one state) for every roster: the same mapping, the same rows' keys.
    writeFileSync(join(dir, `pipeline-${k}.yaml`), pipelineYaml(`roster-${k}.csv`));
  }
  return dir;
}

/** The emulator's custom-fields listing, saved: a dry run with it makes no call. */
async function writeFieldsFile(path: string): Promise<void> {
  const emulator = await startEmulator({ port: 0, host: '127.0.0.1' });
  try {
    writeFileSync(path, JSON.stringify(await createClient({ baseUrl: emulator.url, apiKey: 'demo-key-0123456789' }).listCustomFields()));
  } finally {
    await emulator.close();
  }
}

/** The report.json a dry run wrote under `dir`. */
function reportOf(dir: string): Record<string, unknown> | undefined {
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const path = join(dir, entry);
    if (entry.endsWith('report.json') && statSync(path).isFile()) return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  }
  return undefined;
}

export async function nightlyCases(rows: number, newRows: readonly number[], runs: number): Promise<NightlyCase[]> {
  const wanted = [0, ...newRows.filter((k) => k > 0 && k <= MAX_NEW)];
  const dir = await ensureRosters(rows, wanted);
  const stateDir = join(dir, 'state');
  const fieldsFile = join(DATA, 'fields.json');
  if (!existsSync(fieldsFile)) await writeFieldsFile(fieldsFile);
  const timeout = 30 * 60_000;
  if (!existsSync(join(dir, '.populated'))) {
    rmSync(stateDir, { recursive: true, force: true });
    log(`${rows}: filling the state from the first ${rows} rows`);
    const populated = await runChild(['--import', 'tsx', join(ROOT, 'bench', 'child.ts')], ['populate', join(dir, 'pipeline-0.yaml'), stateDir, fieldsFile], timeout);
    if (populated['records'] !== rows) throw new Error(`populate mapped ${String(populated['records'])} of ${rows} rows`);
    writeFileSync(join(dir, '.populated'), `${rows}\n`);
  }
  const measured = new Map<number, Array<Measured & { report?: Record<string, unknown> }>>(wanted.map((k) => [k, []]));
  for (let run = 0; run < runs; run++) {
    for (const k of wanted) {
      log(`${rows} rows, ${k} new: run ${run + 1}/${runs}`);
      const reportDir = join(dir, `report-${k}`);
      rmSync(reportDir, { recursive: true, force: true });
      const result = (await runChild([join(ROOT, 'bench', 'measure.mjs')], ['plan', join(dir, `pipeline-${k}.yaml`), stateDir, fieldsFile, reportDir], timeout)) as unknown as Measured;
      const creates = result.counts['create']?.['planned'] ?? 0;
      if (result.valid !== rows + k || creates !== k) throw new Error(`${rows} rows, ${k} new: ${result.valid} valid, ${creates} creates planned`);
      const report = reportOf(reportDir);
      measured.get(k)!.push({ ...result, ...(report ? { report } : {}) });
      log(`  ${Math.round(result.ms)} ms, ${Math.round(result.maxRssMb)} MB`);
    }
  }
  const baseline = measured.get(0)!;
  return wanted.map((k) => {
    const runsOf = measured.get(k)!;
    const last = runsOf[runsOf.length - 1]!;
    return {
      rows,
      newRows: k,
      runs,
      ms: spread(runsOf.map((m) => m.ms)),
      maxRssMb: spread(runsOf.map((m) => m.maxRssMb)),
      msRatio: spread(runsOf.map((m, i) => m.ms / baseline[i]!.ms)),
      rssRatio: spread(runsOf.map((m, i) => m.maxRssMb / baseline[i]!.maxRssMb)),
      creates: k,
      ...(last.report?.['duplicatePeopleFound'] ? { duplicatePeopleFound: last.report['duplicatePeopleFound'] } : {}),
    };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3).split(',').map(Number);
  const sizes = arg('rows') ?? [100_000, 1_000_000];
  const newRows = arg('new') ?? [1, 100];
  const runs = arg('runs') ?? [3, 2];
  mkdirSync(DATA, { recursive: true });
  const results: NightlyCase[] = [];
  for (const [i, rows] of sizes.entries()) results.push(...(await nightlyCases(rows, newRows, runs[Math.min(i, runs.length - 1)]!)));
  for (const c of results) {
    log(`${c.rows} rows, ${c.newRows} new (n=${c.runs}): ${Math.round(c.ms.median)} ms (x${c.msRatio.median.toFixed(2)}), ${Math.round(c.maxRssMb.median)} MB (x${c.rssRatio.median.toFixed(2)}) ${c.duplicatePeopleFound ? JSON.stringify(c.duplicatePeopleFound) : ''}`);
  }
  writeFileSync(join(ROOT, 'bench', 'nightly-results.json'), `${JSON.stringify({ generatedAt: new Date().toISOString(), node: process.version, cases: results }, null, 2)}\n`);
}
