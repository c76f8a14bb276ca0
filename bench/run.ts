/**
 * `npm run bench [-- --quick] [-- --only=plan,read,calls,rate,pacing,faults,duplicates,firstsync]`: the benchmarks of reading, planning and pacing.
 * `--only=firstsync --firstsync-rows=100000` runs only the named first-sync sizes (bench/first-sync.ts).
 * `--only=plan --plan-cases=csv:100000` runs only the named plan cases.
 * `--only=read --read-baseline=<dist dir>` also times another build's CSV reader (e.g. the previous
 * release's dist/) on the same roster, interleaved with this one's.
 * Writes bench/results.json and regenerates the table in docs/benchmarks.md.
 *
 * Every figure is the median of several runs with min and max; every ratio is taken within one
 * run (rostersync and its baseline measured back to back on the same data). Servers listen on
 * 127.0.0.1 only; every loop is bounded in count and each child process in time.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { createClient } from '../src/client/client.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/server.js';
import { runSync, type RunOptions } from '../src/sync/run-sync.js';
import { generateRoster, writeCsv, type GeneratedRoster } from './generate.js';
import { naiveSync } from './naive-sync.js';
import { pacingBenchmark, type PacingCase } from './pacing.js';
import { duplicatePeopleBenchmark, type DuplicatesResult } from './duplicate-people.js';
import { firstSyncCase, type FirstSyncCase } from './first-sync.js';
import { renderDoc } from './report.js';
import { spread, type Spread } from './stats.js';

const ROOT = resolve(import.meta.dirname, '..');
const DATA = join(ROOT, 'bench', 'data');
const API_KEY = 'demo-key-0123456789';
const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const onlyArg = argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const only = onlyArg ? new Set(onlyArg.split(',')) : null;
const wanted = (name: string) => only === null || only.has(name);

export type { Spread } from './stats.js';

function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// Child processes (peak RSS per task)

interface ChildResult {
  task: string;
  ms: number;
  maxRssMb: number;
  [key: string]: unknown;
}

function runChild(args: string[], timeoutMs: number): Promise<ChildResult> {
  return new Promise((resolvePromise, reject) => {
    // Filling a state uses the TypeScript sources (tsx); the measured tasks run under plain node.
    const script = args[0] === 'populate' ? ['--import', 'tsx', join(ROOT, 'bench', 'child.ts')] : [join(ROOT, 'bench', 'measure.mjs')];
    const child = spawn(process.execPath, [...script, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{')) {
        reject(new Error(`child ${args.join(' ')} failed (exit ${code}): ${stderr.slice(-2000)}`));
        return;
      }
      resolvePromise(JSON.parse(line) as ChildResult);
    });
  });
}

async function ensureRoster(format: 'csv' | 'xlsx', rows: number): Promise<GeneratedRoster> {
  const dir = join(DATA, `${format}-${rows}`);
  const marker = join(dir, '.complete');
  const roster = join(dir, `roster.${format}`);
  if (!existsSync(marker)) {
    log(`generating ${format} roster of ${rows} rows`);
    await generateRoster(dir, { format, rows, seed: 42 });
    writeFileSync(marker, `${rows}\n`);
  }
  return { dir, roster, mapping: join(dir, 'mapping.yaml'), pipeline: join(dir, 'pipeline.yaml'), rows };
}

async function ensureFieldsFile(): Promise<string> {
  const path = join(DATA, 'fields.json');
  const emulator = await startEmulator({ port: 0, host: '127.0.0.1' });
  try {
    const client = createClient({ baseUrl: emulator.url, apiKey: API_KEY });
    writeFileSync(path, JSON.stringify(await client.listCustomFields()));
  } finally {
    await emulator.close();
  }
  return path;
}

// ---------------------------------------------------------------------------------------------
// 1 + 5. Plan overhead and scaling

export interface PlanCase {
  format: 'csv' | 'xlsx';
  rows: number;
  runs: number;
  /** The plan as a nightly run makes it: the fast path takes the unchanged rows. */
  planMs: Spread;
  bareMs: Spread;
  /** plan / bare, per run. */
  ratio: Spread;
  /** The same plan with `--no-fast-path` (every row mapped, as a first run after a mapping change). */
  fullPathMs?: Spread;
  fullPathRatio?: Spread;
  fullPathRssMb?: Spread;
  /**
   * CSV only: the first plan after the mapping file changed in a way that maps every row as before
   * (every key misses, every row is mapped, and every record gets its row key stored again: as
   * after an upgrade of rostersync, whose version is in the key).
   */
  afterChangeMs?: Spread;
  afterChangeRatio?: Spread;
  afterChangeRssMb?: Spread;
  /** CSV only: plan / csv-parse with `columns: true` (objects keyed by header, as a script would read). */
  ratioColumns?: Spread;
  planRssMb: Spread;
  bareRssMb: Spread;
  /** Valid records the plan found (must equal rows) and planned noops. */
  valid: number;
  noop: number;
}

async function planCase(format: 'csv' | 'xlsx', rows: number, runs: number, fieldsFile: string): Promise<PlanCase> {
  const roster = await ensureRoster(format, rows);
  const stateDir = join(roster.dir, 'state');
  const reportDir = join(roster.dir, 'report');
  rmSync(stateDir, { recursive: true, force: true });
  const timeout = 10 * 60_000;
  log(`plan ${format} ${rows}: populating the state`);
  const populated = await runChild(['populate', roster.pipeline, stateDir, fieldsFile], timeout);
  if (populated['records'] !== rows) throw new Error(`populate mapped ${String(populated['records'])} of ${rows} rows`);
  const plan: ChildResult[] = [];
  const fullPath: ChildResult[] = [];
  const afterChange: ChildResult[] = [];
  // The same pipeline with a comment added to its mapping: a new mapping hash, the same records.
  const changedPipeline = join(roster.dir, 'pipeline-after-change.yaml');
  if (format === 'csv') {
    writeFileSync(join(roster.dir, 'mapping-after-change.yaml'), `${readFileSync(roster.mapping, 'utf8')}\n# Changed: a new mapping hash, the same records.\n`);
    writeFileSync(changedPipeline, readFileSync(roster.pipeline, 'utf8').replace(/^mapping: .*$/m, 'mapping: mapping-after-change.yaml'));
  }
  const bare: ChildResult[] = [];
  const bareColumns: ChildResult[] = [];
  for (let run = 0; run < runs; run++) {
    log(`plan ${format} ${rows}: run ${run + 1}/${runs}`);
    bare.push(await runChild([format === 'csv' ? 'bare-csv' : 'bare-xlsx', roster.roster], timeout));
    plan.push(await runChild(['plan', roster.pipeline, stateDir, fieldsFile, reportDir], timeout));
    fullPath.push(await runChild(['plan-full-path', roster.pipeline, stateDir, fieldsFile, reportDir], timeout));
    if (fullPath[run]!['valid'] !== plan[run]!['valid'] || JSON.stringify(fullPath[run]!['counts']) !== JSON.stringify(plan[run]!['counts'])) {
      throw new Error(`plan ${format} ${rows}: the fast path and the full path planned differently`);
    }
    if (format === 'csv') {
      bareColumns.push(await runChild(['bare-csv-columns', roster.roster], timeout));
      afterChange.push(await runChild(['plan', changedPipeline, stateDir, fieldsFile, reportDir], timeout));
      if (JSON.stringify(afterChange[run]!['counts']) !== JSON.stringify(plan[run]!['counts'])) {
        throw new Error(`plan ${format} ${rows}: the plan after a mapping change that maps the same records differs`);
      }
    }
  }
  const last = plan[plan.length - 1]!;
  const counts = last['counts'] as { noop: { planned?: number } };
  return {
    format,
    rows,
    runs,
    planMs: spread(plan.map((p) => p.ms)),
    bareMs: spread(bare.map((b) => b.ms)),
    ratio: spread(plan.map((p, i) => p.ms / bare[i]!.ms)),
    fullPathMs: spread(fullPath.map((p) => p.ms)),
    fullPathRatio: spread(fullPath.map((p, i) => p.ms / bare[i]!.ms)),
    fullPathRssMb: spread(fullPath.map((p) => p.maxRssMb)),
    ...(format === 'csv'
      ? {
          ratioColumns: spread(plan.map((p, i) => p.ms / bareColumns[i]!.ms)),
          afterChangeMs: spread(afterChange.map((p) => p.ms)),
          afterChangeRatio: spread(afterChange.map((p, i) => p.ms / bare[i]!.ms)),
          afterChangeRssMb: spread(afterChange.map((p) => p.maxRssMb)),
        }
      : {}),
    planRssMb: spread(plan.map((p) => p.maxRssMb)),
    bareRssMb: spread(bare.map((b) => b.maxRssMb)),
    valid: Number(last['valid']),
    noop: counts.noop.planned ?? 0,
  };
}

// ---------------------------------------------------------------------------------------------
// 1b. The CSV reader alone: a 100k-row roster read through openSource, against a bare csv-parse
// read of the same file (and, with --read-baseline, another build's reader), interleaved per run.

export interface ReadCase {
  rows: number;
  runs: number;
  readMs: Spread;
  bareMs: Spread;
  /** read / bare, per run. */
  ratio: Spread;
  readRssMb: Spread;
  baseline?: { dist: string; readMs: Spread; ratio: Spread; readRssMb: Spread };
}

async function readCase(rows: number, runs: number, baselineDist: string | undefined): Promise<ReadCase> {
  const roster = await ensureRoster('csv', rows);
  const timeout = 5 * 60_000;
  const bare: ChildResult[] = [];
  const read: ChildResult[] = [];
  const base: ChildResult[] = [];
  for (let run = 0; run < runs; run++) {
    log(`read csv ${rows}: run ${run + 1}/${runs}`);
    bare.push(await runChild(['bare-csv', roster.roster], timeout));
    read.push(await runChild(['read-csv', roster.roster], timeout));
    if (read[run]!['rows'] !== rows) throw new Error(`read csv ${rows}: ${String(read[run]!['rows'])} rows read`);
    if (baselineDist) base.push(await runChild(['read-csv', roster.roster, baselineDist], timeout));
  }
  return {
    rows,
    runs,
    readMs: spread(read.map((r) => r.ms)),
    bareMs: spread(bare.map((b) => b.ms)),
    ratio: spread(read.map((r, i) => r.ms / bare[i]!.ms)),
    readRssMb: spread(read.map((r) => r.maxRssMb)),
    ...(baselineDist
      ? { baseline: { dist: baselineDist, readMs: spread(base.map((r) => r.ms)), ratio: spread(base.map((r, i) => r.ms / bare[i]!.ms)), readRssMb: spread(base.map((r) => r.maxRssMb)) } }
      : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// 2. Calls issued vs a naive script

interface SyncRun {
  ms: number;
  groupId: number | null;
  writes: number;
  calls: number;
  failed: number;
  exitCode: number;
}

async function timedSync(emulator: RunningEmulator, options: Omit<RunOptions, 'service'>): Promise<SyncRun> {
  const before = emulator.stats.snapshot();
  const started = performance.now();
  // Each benchmark project's first run creates its group (an explicit first run); later runs know it.
  const result = await runSync({ ...options, createGroup: true, service: { baseUrl: emulator.url, apiKey: API_KEY } });
  const ms = performance.now() - started;
  const after = emulator.stats.snapshot();
  const failed = Object.values(result.report.counts).reduce((sum, byOutcome) => sum + ((byOutcome as { failed?: number }).failed ?? 0), 0);
  return { ms, groupId: result.report.target.groupId, writes: after.writes.total - before.writes.total, calls: after.total - before.total, failed, exitCode: result.exitCode };
}

export interface CallsResult {
  rows: number;
  runs: number;
  latencyMs: number;
  noChangeWrites: Spread;
  onePercentWrites: Spread;
  expectedOnePercentWrites: number;
  naiveCalls: Spread;
  oursCalls: Spread;
  /** naive calls / our calls, 1 % changed. */
  callRatio: Spread;
  /** naive wall time / our wall time, 1 % changed. */
  wallRatio: Spread;
  /** naive wall time / our wall time, nothing changed. */
  wallRatioNoChange: Spread;
  oursMs: Spread;
  naiveMs: Spread;
}

async function callsBenchmark(rows: number, runs: number): Promise<CallsResult> {
  const latencyMs = 50;
  const dir = join(DATA, `calls-${rows}`);
  rmSync(dir, { recursive: true, force: true });
  const roster = await generateRoster(dir, { format: 'csv', rows, seed: 7 });
  const emulator = await startEmulator({ port: 0, host: '127.0.0.1', latencyMs });
  try {
    const common = { pipelinePath: roster.pipeline, stateDir: join(dir, 'state'), reportDir: join(dir, 'report') };
    log(`calls: initial sync of ${rows} records`);
    const initial = await timedSync(emulator, { ...common, maxRps: 500, concurrency: 16 });
    if (initial.failed > 0 || initial.writes < rows) throw new Error(`calls: initial sync wrote ${initial.writes} of ${rows}`);
    const groupId = initial.groupId;
    if (groupId === null) throw new Error('calls: the initial sync created no group');
    const noChange: SyncRun[] = [];
    const changed: SyncRun[] = [];
    const naive: Array<{ calls: number; ms: number; failed: number }> = [];
    for (let run = 1; run <= runs; run++) {
      log(`calls: run ${run}/${runs}`);
      noChange.push(await timedSync(emulator, common));
      await writeCsv(roster.roster, { format: 'csv', rows, seed: 7, variant: run, changedPercent: 1 });
      changed.push(await timedSync(emulator, common));
      naive.push(await naiveSync({ baseUrl: emulator.url, apiKey: API_KEY, groupId, rosterFile: roster.roster, concurrency: 4 }));
    }
    if (naive.some((n) => n.failed > 0)) throw new Error('calls: the naive script had failures');
    return {
      rows,
      runs,
      latencyMs,
      noChangeWrites: spread(noChange.map((r) => r.writes)),
      onePercentWrites: spread(changed.map((r) => r.writes)),
      expectedOnePercentWrites: rows / 100,
      naiveCalls: spread(naive.map((n) => n.calls)),
      oursCalls: spread(changed.map((r) => r.calls)),
      callRatio: spread(naive.map((n, i) => n.calls / changed[i]!.calls)),
      wallRatio: spread(naive.map((n, i) => n.ms / changed[i]!.ms)),
      wallRatioNoChange: spread(naive.map((n, i) => n.ms / noChange[i]!.ms)),
      oursMs: spread(changed.map((r) => r.ms)),
      naiveMs: spread(naive.map((n) => n.ms)),
    };
  } finally {
    await emulator.close();
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Rate fidelity and adaptation

export interface RateCase {
  serverRps: number;
  clientRps: number;
  concurrency: number;
  records: number;
  runs: number;
  /** Achieved write rate / server rate (between the first and last outcome). */
  achievedOverR: Spread;
  rateLimited: Spread;
  failed: Spread;
  /** Seconds from the start of apply to the last 429 (0 when none). */
  settleSeconds: Spread;
}

async function rateCase(serverRps: number, clientRps: number, seconds: number, runs: number, concurrency = 8): Promise<RateCase> {
  const records = serverRps * seconds;
  const dir = join(DATA, `rate-${serverRps}-${clientRps}-${concurrency}`);
  const achieved: number[] = [];
  const limited: number[] = [];
  const failed: number[] = [];
  const settle: number[] = [];
  for (let run = 0; run < runs; run++) {
    log(`rate R=${serverRps} client=${clientRps} concurrency=${concurrency}: run ${run + 1}/${runs}`);
    rmSync(dir, { recursive: true, force: true });
    const roster = await generateRoster(dir, { format: 'csv', rows: records, seed: 100 + run });
    const emulator = await startEmulator({ port: 0, host: '127.0.0.1', rps: serverRps });
    try {
      const outcomes: number[] = [];
      let last429At = 0;
      let seen429 = 0;
      let applyStart = 0;
      const poll = setInterval(() => {
        const n = emulator.stats.snapshot().rateLimited;
        if (n > seen429) {
          seen429 = n;
          last429At = performance.now();
        }
      }, 25);
      let result: SyncRun;
      try {
        result = await timedSync(emulator, {
          pipelinePath: roster.pipeline,
          stateDir: join(dir, 'state'),
          reportDir: join(dir, 'report'),
          maxRps: clientRps,
          concurrency,
          onProgress: () => {
            if (outcomes.length === 0) applyStart = performance.now();
            outcomes.push(performance.now());
          },
        });
      } finally {
        clearInterval(poll);
      }
      const first = outcomes[0] ?? 0;
      const lastAt = outcomes[outcomes.length - 1] ?? 0;
      // n outcomes span n-1 intervals of the achieved rate.
      achieved.push((outcomes.length - 1) / ((lastAt - first) / 1000) / serverRps);
      limited.push(emulator.stats.snapshot().rateLimited);
      failed.push(result.failed);
      settle.push(seen429 > 0 ? Math.max(0, (last429At - applyStart) / 1000) : 0);
    } finally {
      await emulator.close();
    }
  }
  return {
    serverRps,
    clientRps,
    concurrency,
    records,
    runs,
    achievedOverR: spread(achieved),
    rateLimited: spread(limited),
    failed: spread(failed),
    settleSeconds: spread(settle),
  };
}

// ---------------------------------------------------------------------------------------------
// 4. Faults

export interface FaultsResult {
  records: number;
  runs: number;
  faults: { status503: number; status429: number; reset: number };
  failed: Spread;
  /** Total service calls / the minimum (listing + group creation + one POST per record). */
  callsOverMinimum: Spread;
  injected: Spread;
  /** Write calls of a fault-free rerun right after (0 = converged). */
  rerunWrites: Spread;
  ms: Spread;
}

async function faultsBenchmark(records: number, runs: number): Promise<FaultsResult> {
  const faults = { status503: 0.05, status429: 0.02, reset: 0.01 };
  const dir = join(DATA, 'faults');
  const failed: number[] = [];
  const ratio: number[] = [];
  const injected: number[] = [];
  const rerun: number[] = [];
  const ms: number[] = [];
  for (let run = 0; run < runs; run++) {
    log(`faults: run ${run + 1}/${runs}`);
    rmSync(dir, { recursive: true, force: true });
    const roster = await generateRoster(dir, { format: 'csv', rows: records, seed: 200 + run });
    const emulator = await startEmulator({ port: 0, host: '127.0.0.1', faults, seed: 1000 + run });
    try {
      const common = { pipelinePath: roster.pipeline, stateDir: join(dir, 'state'), reportDir: join(dir, 'report'), maxRps: 200, concurrency: 8 };
      const result = await timedSync(emulator, common);
      const snapshot = emulator.stats.snapshot();
      const minimum = records + 2;
      failed.push(result.failed);
      ratio.push(snapshot.total / minimum);
      injected.push(snapshot.faults.status503 + snapshot.faults.status429 + snapshot.faults.reset);
      ms.push(result.ms);
      emulator.runtime.update({ faults: { status503: 0, status429: 0, reset: 0 } });
      const again = await timedSync(emulator, common);
      rerun.push(again.writes);
    } finally {
      await emulator.close();
    }
  }
  return { records, runs, faults, failed: spread(failed), callsOverMinimum: spread(ratio), injected: spread(injected), rerunWrites: spread(rerun), ms: spread(ms) };
}

// ---------------------------------------------------------------------------------------------

export interface BenchResults {
  version: 1;
  generatedAt: string;
  quick: boolean;
  machine: { nproc: number; cpu: string; memoryGb: number; node: string; platform: string };
  durationSeconds: number;
  plan?: PlanCase[];
  read?: ReadCase;
  calls?: CallsResult;
  rate?: RateCase[];
  pacing?: PacingCase[];
  faults?: FaultsResult;
  duplicates?: DuplicatesResult;
  firstSync?: FirstSyncCase[];
}

async function main(): Promise<void> {
  const started = performance.now();
  mkdirSync(DATA, { recursive: true });
  const results: BenchResults = {
    version: 1,
    generatedAt: new Date().toISOString(),
    quick,
    machine: {
      nproc: cpus().length,
      cpu: cpus()[0]?.model ?? 'unknown',
      memoryGb: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
    },
    durationSeconds: 0,
  };
  if (wanted('plan')) {
    const fieldsFile = await ensureFieldsFile();
    const cases: Array<['csv' | 'xlsx', number, number]> = quick
      ? [['csv', 10_000, 3], ['csv', 100_000, 1], ['xlsx', 10_000, 3]]
      : // The large cases run fewer times to keep the whole bench near 15 minutes on 2 cores.
        [['csv', 10_000, 3], ['csv', 100_000, 3], ['csv', 1_000_000, 3], ['xlsx', 10_000, 3], ['xlsx', 100_000, 2]];
    // `--plan-cases=csv:100000` runs only the named cases (format:rows, comma-separated).
    const pick = argv.find((a) => a.startsWith('--plan-cases='))?.slice('--plan-cases='.length).split(',');
    if (pick) cases.splice(0, cases.length, ...cases.filter(([format, rows]) => pick.includes(`${format}:${rows}`)));
    log('plan: building dist/ (the plan is measured as the installed CLI runs it)');
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'ignore' });
    results.plan = [];
    for (const [format, rows, runs] of cases) results.plan.push(await planCase(format, rows, runs, fieldsFile));
  }
  if (wanted('read')) {
    const baseline = argv.find((a) => a.startsWith('--read-baseline='))?.slice('--read-baseline='.length);
    if (!wanted('plan')) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'ignore' });
    results.read = await readCase(100_000, quick ? 3 : 5, baseline ? resolve(baseline) : undefined);
  }
  if (wanted('calls')) results.calls = await callsBenchmark(quick ? 300 : 1000, quick ? 1 : 3);
  if (wanted('rate')) {
    // Two runs: the pacing section below measures every limit kind three times.
    const runs = quick ? 1 : 2;
    const seconds = quick ? 4 : 8;
    results.rate = [];
    for (const r of [20, 100]) {
      results.rate.push(await rateCase(r, r, seconds, runs));
      results.rate.push(await rateCase(r, 2 * r, seconds, runs));
    }
  }
  if (wanted('pacing')) results.pacing = await pacingBenchmark(quick, log);
  if (wanted('faults')) results.faults = await faultsBenchmark(quick ? 200 : 500, quick ? 1 : 3);
  if (wanted('duplicates')) results.duplicates = await duplicatePeopleBenchmark(quick, log);
  if (wanted('firstsync')) {
    // A million creates take many minutes: one run of each size unless --firstsync-runs says more.
    const sizes = (argv.find((a) => a.startsWith('--firstsync-rows='))?.slice('--firstsync-rows='.length).split(',') ?? (quick ? ['100000'] : ['100000', '1000000'])).map(Number);
    const runs = Number(argv.find((a) => a.startsWith('--firstsync-runs='))?.slice('--firstsync-runs='.length) ?? 1);
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'ignore' });
    results.firstSync = [];
    for (const rows of sizes) results.firstSync.push(await firstSyncCase(DATA, rows, runs, log));
  }
  results.durationSeconds = Math.round((performance.now() - started) / 1000);

  const resultsPath = join(ROOT, 'bench', 'results.json');
  // A partial run (--only) keeps the other sections of the last full results.
  const previous = only && existsSync(resultsPath) ? (JSON.parse(readFileSync(resultsPath, 'utf8')) as Partial<BenchResults>) : {};
  const merged = { ...previous, ...results } as BenchResults;
  // Picked plan cases replace theirs among the last results; the other cases stay.
  if (results.plan && previous.plan && argv.some((a) => a.startsWith('--plan-cases='))) {
    merged.plan = previous.plan.map((old) => results.plan!.find((fresh) => fresh.format === old.format && fresh.rows === old.rows) ?? old);
  }
  // Picked first-sync sizes replace theirs among the last results; the other sizes stay.
  if (results.firstSync && previous.firstSync) {
    merged.firstSync = [...previous.firstSync.filter((old) => !results.firstSync!.some((fresh) => fresh.rows === old.rows)), ...results.firstSync].sort((a, b) => a.rows - b.rows);
  }
  writeFileSync(resultsPath, `${JSON.stringify(merged, null, 2)}\n`);
  const docPath = join(ROOT, 'docs', 'benchmarks.md');
  writeFileSync(docPath, renderDoc(merged));
  log(`done in ${results.durationSeconds} s: bench/results.json, docs/benchmarks.md`);
}

if (argv.includes('--render')) {
  // Re-render docs/benchmarks.md from the saved results (after editing bench/analysis.md).
  const saved = JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as BenchResults;
  writeFileSync(join(ROOT, 'docs', 'benchmarks.md'), renderDoc(saved));
} else {
  await main();
}
