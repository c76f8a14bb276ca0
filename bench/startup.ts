/**
 * Start-up cost of the installed command: `rostersync --version` (the compiled
 * bin/rostersync.js) against bare `node -e 0`, side by side in the same run.
 *
 *   npm run build && npm run bench:startup [-- --runs 21] [-- --json]
 *
 * Targets: the median wall time within 3x that of `node -e 0`, and peak RSS within 60 MB.
 * `rostersync --help` (the parser and the command list, no command module) is measured for
 * information, without a target.
 *
 * Wall time is taken in this process from spawn to exit. Peak RSS is the child's own
 * `process.resourceUsage().maxRSS`, read by a tiny preload that every measured command gets
 * (so the instrument costs the baseline the same as the command). Runs are interleaved
 * (baseline, command, baseline, ...) after one warm-up each, so a busy machine slows all alike.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/rostersync.js', import.meta.url));
const TARGET_RATIO = 3;
const TARGET_RSS_MB = 60;
/** Every child is killed after this long; a start-up that slow is a failure anyway. */
const CHILD_TIMEOUT_MS = 20_000;

// Reports the child's peak RSS (kB) on fd 3 as it exits.
const PRELOAD = `data:text/javascript,${encodeURIComponent(
  "import { writeSync } from 'node:fs'; process.on('exit', () => { try { writeSync(3, String(process.resourceUsage().maxRSS)); } catch {} });",
)}`;

interface Case {
  name: string;
  args: string[];
}

interface Sample {
  wallMs: number;
  rssKb: number;
}

const CASES: Case[] = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'rostersync --version', args: [BIN, '--version'] },
  { name: 'rostersync --help', args: [BIN, '--help'] },
];

function measureOnce(testCase: Case): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, ['--import', PRELOAD, ...testCase.args], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
      timeout: CHILD_TIMEOUT_MS,
    });
    let rss = '';
    let stderr = '';
    child.stdio[3]?.on('data', (chunk: Buffer) => (rss += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) return reject(new Error(`${testCase.name} exited ${code}: ${stderr.slice(0, 400)}`));
      resolve({ wallMs, rssKb: Number(rss) });
    });
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface CaseResult {
  name: string;
  runs: number;
  wallMs: { median: number; min: number; max: number };
  rssMb: { median: number; min: number; max: number };
}

export async function measureStartup(runs: number): Promise<CaseResult[]> {
  const samples = new Map<string, Sample[]>(CASES.map((c) => [c.name, []]));
  for (const c of CASES) await measureOnce(c); // warm-up: file cache, not counted
  for (let i = 0; i < runs; i++) {
    for (const c of CASES) samples.get(c.name)!.push(await measureOnce(c));
  }
  return CASES.map((c) => {
    const list = samples.get(c.name)!;
    const wall = list.map((s) => s.wallMs);
    const rss = list.map((s) => s.rssKb / 1024);
    return {
      name: c.name,
      runs: list.length,
      wallMs: { median: median(wall), min: Math.min(...wall), max: Math.max(...wall) },
      rssMb: { median: median(rss), min: Math.min(...rss), max: Math.max(...rss) },
    };
  });
}

async function cli(): Promise<void> {
  const argv = process.argv.slice(2);
  const runsFlag = argv.indexOf('--runs');
  const runs = runsFlag >= 0 ? Number(argv[runsFlag + 1]) : 15;
  if (!Number.isInteger(runs) || runs < 3 || runs > 200) {
    process.stderr.write('--runs must be an integer from 3 to 200\n');
    process.exit(1);
  }
  if (!existsSync(new URL('../dist/cli/main.js', import.meta.url))) {
    process.stderr.write('dist/ is missing: run `npm run build` first (the bench measures the compiled command)\n');
    process.exit(1);
  }

  const results = await measureStartup(runs);
  const base = results.find((r) => r.name === 'node -e 0')!;
  const version = results.find((r) => r.name === 'rostersync --version')!;
  const ratio = version.wallMs.median / base.wallMs.median;
  const pass = ratio <= TARGET_RATIO && version.rssMb.max <= TARGET_RSS_MB;

  if (argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify({ node: process.version, runs, results, ratio, pass }, null, 2)}\n`);
  } else {
    const fmt = (n: number): string => n.toFixed(1);
    const lines = [
      `Node ${process.version}, ${runs} interleaved runs each (after one warm-up)`,
      '',
      '| command | wall ms: median (min–max) | × node -e 0 | peak RSS MB: median (min–max) |',
      '|---|---|---|---|',
      ...results.map(
        (r) =>
          `| \`${r.name}\` | ${fmt(r.wallMs.median)} (${fmt(r.wallMs.min)}–${fmt(r.wallMs.max)}) | ${(r.wallMs.median / base.wallMs.median).toFixed(2)} | ${fmt(r.rssMb.median)} (${fmt(r.rssMb.min)}–${fmt(r.rssMb.max)}) |`,
      ),
      '',
      `target for \`rostersync --version\`: median ≤ ${TARGET_RATIO}× node -e 0 and peak RSS ≤ ${TARGET_RSS_MB} MB in every run → ${pass ? 'MET' : 'MISSED'} (${ratio.toFixed(2)}×, max ${fmt(version.rssMb.max)} MB)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  process.exitCode = pass ? 0 : 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await cli();
