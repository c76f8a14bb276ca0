/**
 * The heaviest run users make: a first `sync --create-group` of a large roster, every row a create,
 * its people from the labelled corpus (realistic name frequencies, bench/generate.ts writeCorpusCsv).
 * Measured per run: wall time, the sync process's peak RSS, and the sizes of the report files.
 *
 * The emulator runs in a process of its own (`rostersync emulator`, no rate limit), so its memory
 * (a million records in its world) is not counted; the sync runs in bench/measure.mjs, from the
 * compiled build, under plain node. Each run starts on a fresh emulator and an empty state.
 *
 *   npx tsx bench/run.ts --only=firstsync [--firstsync-rows=100000,1000000] [--quick]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pipelineYaml, writeCorpusCsv } from './generate.js';
import { spread, type Spread } from './stats.js';

const ROOT = resolve(import.meta.dirname, '..');

export interface FirstSyncCase {
  rows: number;
  runs: number;
  ms: Spread;
  maxRssMb: Spread;
  /** Records created per second of the whole run (read, plan, writes, report). */
  recordsPerSecond: Spread;
  /** Sizes of the report files of the last run, in bytes, by file name. */
  reportBytes: Record<string, number>;
  created: number;
  failed: number;
  /** Memory of the last run at the phase boundaries (planned, applied, reported). */
  stages: Measured['stages'];
  /** False when the run was stopped at its time limit: the peak RSS is then VmHWM sampled until then. */
  completed: boolean;
}

interface Measured {
  ms: number;
  maxRssMb: number;
  exitCode: number;
  created: number;
  failed: number;
  reportDir: string;
  /**
   * process.memoryUsage() once planned (the first outcome), once applied, once the report is
   * written (`externalMb` holds `arrayBuffersMb`), and the peak RSS so far at each (`peakMb`).
   */
  stages: Record<string, { rssMb: number; heapMb: number; externalMb: number; arrayBuffersMb?: number; peakMb?: number }>;
}

/** `rostersync emulator --port 0` from dist/; resolves with its URL once it listens. */
function startEmulatorProcess(timeoutMs: number): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolveStart, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'rostersync.js'), 'emulator', '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the emulator did not start in time'));
    }, timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolveStart({ url: match[1]!, child });
      }
    });
    child.stderr!.resume();
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the emulator exited (${code}) before listening`));
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
}

/** The process's peak RSS so far, in MB (Linux: VmHWM); undefined once it is gone. */
function highWaterMb(pid: number | undefined): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs one measured sync. A run stopped at its time limit still reports how far it got: its peak
 * RSS sampled every second and its wall time, with `completed: false`.
 */
function measure(args: string[], timeoutMs: number, log: (message: string) => void): Promise<Measured & { completed: boolean }> {
  return new Promise((resolveRun, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [join(ROOT, 'bench', 'measure.mjs'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let sampledMb = 0;
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    const sampler = setInterval(() => (sampledMb = Math.max(sampledMb, highWaterMb(child.pid) ?? 0)), 1000);
    const timer = setTimeout(() => {
      timedOut = true;
      log(`first sync: stopped at the time limit (${Math.round(timeoutMs / 1000)} s), peak RSS so far ${Math.round(sampledMb)} MB`);
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      clearInterval(sampler);
      const line = stdout.trim().split('\n').pop() ?? '';
      if (timedOut) resolveRun({ ms: performance.now() - started, maxRssMb: sampledMb, exitCode: -1, created: 0, failed: 0, reportDir: '', stages: {}, completed: false });
      else if (code !== 0 || !line.startsWith('{')) reject(new Error(`first-sync child failed (exit ${code}): ${stderr}`));
      else resolveRun({ ...(JSON.parse(line) as Measured), completed: true });
    });
  });
}

/** Bytes of each file in a report folder (one level: the records' pages too). */
function folderSizes(dir: string): Record<string, number> {
  const sizes: Record<string, number> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isFile()) sizes[entry.name] = statSync(path).size;
    else if (entry.isDirectory()) {
      const inner = readdirSync(path);
      sizes[`${entry.name}/ (${inner.length} files)`] = inner.reduce((sum, name) => sum + statSync(join(path, name)).size, 0);
    }
  }
  return sizes;
}

export async function firstSyncCase(dataDir: string, rows: number, runs: number, log: (message: string) => void): Promise<FirstSyncCase> {
  // People from the labelled corpus: realistic name frequencies (many share common names and large
  // institutions), duplicates and look-alikes planted, an affiliation on every row; so the check
  // for the same person under two client_ids meets what it meets in real rosters.
  const dir = join(dataDir, `first-sync-corpus-${rows}`);
  const marker = join(dir, '.complete');
  if (!existsSync(marker)) {
    log(`first sync ${rows}: generating the roster`);
    await writeCorpusCsv(dir, rows, 42);
    writeFileSync(marker, `${rows}\n`);
  }
  // The emulator has no limit here; a max_rps far above what it serves keeps the client from pacing.
  writeFileSync(join(dir, 'pipeline.yaml'), pipelineYaml('roster.csv', { maxRps: 100_000, concurrency: 16 }));
  const measured: Array<Measured & { completed: boolean }> = [];
  // 10 ms a row (100 records/s: 2.8 h for a million) unless FIRST_SYNC_TIMEOUT_S says otherwise.
  const timeoutMs = Number(process.env['FIRST_SYNC_TIMEOUT_S'] ?? rows / 100) * 1000;
  for (let run = 0; run < runs; run++) {
    log(`first sync ${rows}: run ${run + 1}/${runs}`);
    const stateDir = join(dir, 'state');
    const reportDir = join(dir, 'report');
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(reportDir, { recursive: true, force: true });
    const emulator = await startEmulatorProcess(60_000);
    try {
      const result = await measure(['first-sync', join(dir, 'pipeline.yaml'), stateDir, reportDir, emulator.url], timeoutMs, log);
      if (result.completed && (result.created !== rows || result.failed > 0)) throw new Error(`first sync ${rows}: ${result.created} created, ${result.failed} failed (exit ${result.exitCode})`);
      measured.push(result);
    } finally {
      await stop(emulator.child);
    }
  }
  const last = measured[measured.length - 1]!;
  const finished = measured.filter((m) => m.completed);
  return {
    rows,
    runs,
    ms: spread(measured.map((m) => m.ms)),
    maxRssMb: spread(measured.map((m) => m.maxRssMb)),
    recordsPerSecond: spread(finished.map((m) => rows / (m.ms / 1000))),
    reportBytes: last.completed ? folderSizes(last.reportDir) : {},
    created: last.created,
    failed: last.failed,
    stages: (finished[finished.length - 1] ?? last).stages,
    completed: finished.length === measured.length,
  };
}
