/**
 * Pacing against every rate limit the emulator can play: the client writes records as
 * fast as its limiter lets it, against an emulator in its own process (so the server's clock is
 * not stalled by the client's event loop), and the achieved rate is compared with the limit R.
 *
 * `tsx bench/pacing.ts [--quick] [--kind=sliding-window] [--rps=50] [--seconds=12] [--runs=3]
 * [--workload=create-if-absent] [--settle=10]` runs one case alone; `--workloads [--runs=3]
 * [--only=create-if-absent,mixed] [--rates=20,50] [--out=file.json]` runs the real workloads
 * (R = 20 and 50, every kind) with their baselines and prints the figures (`--seconds`:
 * calls the run makes, at R; `--settle`: the steady state starts then); `npm run bench` runs it as the `pacing` section.
 * `PACING_TRACE=1` prints the limiter's pace four times a second, then how often the client itself
 * sent R + 1 calls within one second; `PACING_STALL_MS=60` plays a loaded machine (the client's
 * and the emulator's event loops stall up to that long now and then: bench/event-loop-stalls.mjs).
 * Every run is bounded in records and in time; the emulator listens on 127.0.0.1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { createClient, NotFoundError, RateLimiter, type ServiceClient } from '../src/client/index.js';
import { RATE_LIMIT_KINDS, type RateLimitKind } from '../src/emulator/rate-limits.js';
import { spread, type Spread } from './stats.js';
// PACING_STALL_MS=<ms>: this process and the emulator's stall their event loops now and then.
import './event-loop-stalls.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const API_KEY = 'demo-key-0123456789';
const GROUP_ID = 501;
/** Figures "after the first few seconds" start here, counted from the first answer. */
export const SETTLE_SECONDS = 5;

/**
 * What each record costs, as sync sends it:
 * - `create`: a full POST into a group the run created (one call);
 * - `create-if-absent`: a record new to a group the run did not create: a partial POST that the
 *   service answers 404, then a full POST (two calls; the first sync into an existing group, a run
 *   after a lost state, a legacy migration);
 * - `mixed`: creates, partial updates and deletes of records already in the group, create-if-absent,
 *   and reads of missing records answered 404 (the other 4xx of a real run);
 * - `refresh`: `--refresh` reading back every record of the inventory (GETs).
 */
export const WORKLOADS = ['create', 'create-if-absent', 'mixed', 'refresh'] as const;
export type Workload = (typeof WORKLOADS)[number];

export interface PacingCase {
  kind: RateLimitKind | 'unlimited';
  workload: Workload;
  /** The service's limit R (for `unlimited`, the client's max_rps). */
  serverRps: number;
  /** The client's max_rps; null = the client finds the limit itself. */
  clientMaxRps: number | null;
  records: number;
  concurrency: number;
  /** Clients sharing one limiter (several pipelines on one budget). */
  clients: number;
  runs: number;
  /** Calls the service admitted (answers other than 429) per second / R, from the first to the last answer. */
  achievedOverR: Spread;
  /** The same after the first `settleSeconds` (the steady state). */
  settledOverR: Spread;
  settleSeconds: number;
  /** settledOverR / the baseline's in the same run (what the machine could pace then); null for the baseline itself. */
  settledOverBaseline: Spread | null;
  rateLimited: Spread;
  /** 429s answered after the first SETTLE_SECONDS. */
  lateRateLimited: Spread;
  failed: Spread;
  /** Most requests sent within any one second / R (≤ 1 + 1/R when the client never exceeds R). */
  peakSecondOverR: Spread;
  /** Rate the limiter settled on / R (its pace at the end). */
  finalPaceOverR: Spread;
  seconds: Spread;
  /** Seconds between the first and the last client to finish, over the run's duration (0 = all together). */
  finishSpreadOverDuration: Spread;
}

interface RunningChild {
  url: string;
  child: ChildProcess;
  close(): Promise<void>;
}

/** `rostersync emulator` in a child process; resolves once it prints its URL. */
export function startEmulatorProcess(args: string[], timeoutMs = 90_000): Promise<RunningChild> {
  return new Promise((resolvePromise, reject) => {
    const stalls = process.env.PACING_STALL_MS ? ['--import', join(ROOT, 'bench', 'event-loop-stalls.mjs')] : [];
    const child = spawn(process.execPath, [...stalls, join(ROOT, 'bin', 'rostersync-dev.js'), 'emulator', '--host', '127.0.0.1', '--port', '0', ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`emulator did not start within ${timeoutMs} ms: ${err.slice(-500)}`));
    }, timeoutMs);
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (!match) return;
      clearTimeout(timer);
      resolvePromise({
        url: match[1]!,
        child,
        close: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 5000).unref();
          }),
      });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`emulator exited (${code}) before listening: ${err.slice(-500)}`));
    });
  });
}

async function serverStats(url: string): Promise<{ rateLimited: number; writes: { total: number; succeeded: number } }> {
  const response = await fetch(`${url}/_emulator/stats`);
  return (await response.json()) as { rateLimited: number; writes: { total: number; succeeded: number } };
}

function peakInOneSecond(times: number[]): number {
  let peak = 0;
  let from = 0;
  for (let i = 0; i < times.length; i++) {
    while (times[i]! - times[from]! >= 1000) from++;
    peak = Math.max(peak, i - from + 1);
  }
  return peak;
}

/**
 * The limiter, noting when each request is sent ("never above max_rps" is judged on sending, not
 * on answers) and when each answer other than a 429 came (the calls the service admitted).
 */
class SendRecordingLimiter extends RateLimiter {
  readonly sentAt: number[] = [];
  readonly admittedAt: number[] = [];

  override onAdmitted(): void {
    this.admittedAt.push(performance.now());
    super.onAdmitted();
  }

  override run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return super.run(() => {
      this.sentAt.push(performance.now());
      return task();
    }, signal);
  }
}

export interface PacingRunInput {
  kind: RateLimitKind | 'unlimited';
  /** @default 'create' */
  workload?: Workload;
  /** @default SETTLE_SECONDS */
  settleSeconds?: number;
  serverRps: number;
  clientMaxRps: number | null;
  records: number;
  concurrency: number;
  /** Hard bound of one run. */
  timeoutMs: number;
  /** Several clients sharing one limiter (many pipelines, one budget); 1 = one client. */
  clients?: number;
}

export interface PacingRun {
  achievedOverR: number;
  settledOverR: number;
  rateLimited: number;
  lateRateLimited: number;
  failed: number;
  peakSecondOverR: number;
  finalPaceOverR: number;
  seconds: number;
  /** Seconds each client finished after the first answer (fairness across clients). */
  clientFinishSeconds: number[];
}

/**
 * The demo organization with records already in group 501 under `ids`: what the updates,
 * deletes and reads of the `mixed` and `refresh` workloads find.
 */
function seededFixture(ids: string[]): { path: string; remove(): void } {
  const fixture = parseYaml(readFileSync(join(ROOT, 'src', 'emulator', 'default-fixture.yaml'), 'utf8')) as {
    orgs: Array<{ groups: Array<{ id: number; records: Record<string, unknown> }> }>;
  };
  const group = fixture.orgs.flatMap((org) => org.groups).find((g) => g.id === GROUP_ID)!;
  for (const id of ids) group.records[id] = { name: `Seeded expert ${id}` };
  const dir = mkdtempSync(join(tmpdir(), 'rostersync-pacing-'));
  const path = join(dir, 'fixture.json');
  writeFileSync(path, JSON.stringify(fixture));
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A 404 where the workload expects one is the answer it asked for, not a failure. */
async function expect404(call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (error instanceof NotFoundError) return;
    throw error;
  }
  throw new Error('expected a 404');
}

/** Record `i` of client `c` under `workload`: the calls sync would send for it. */
async function sendRecord(client: ServiceClient, workload: Workload, c: number, i: number, signal: AbortSignal): Promise<void> {
  const id = `p${c}-${i}`;
  const body = { name: `Expert ${c}-${i}` };
  const options = { signal };
  const createIfAbsent = async () => {
    try {
      await client.patchAuthor(GROUP_ID, id, body, options);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      await client.putAuthor(GROUP_ID, id, body, options);
    }
  };
  switch (workload) {
    case 'create':
      await client.putAuthor(GROUP_ID, id, body, options);
      return;
    case 'create-if-absent':
      return createIfAbsent();
    case 'refresh':
      await client.getAuthor(GROUP_ID, `seed-${c}-${i}`, options);
      return;
    case 'mixed':
      // Of eight records: three creates, two updates, one delete, one create-if-absent, one 404.
      switch (i % 8) {
        case 3:
        case 4:
          await client.patchAuthor(GROUP_ID, `seed-${c}-${i}`, { name: `Renamed expert ${c}-${i}` }, options);
          return;
        case 5:
          await client.deleteAuthor(GROUP_ID, `seed-${c}-${i}`, options);
          return;
        case 6:
          return createIfAbsent();
        case 7:
          return expect404(() => client.getAuthor(GROUP_ID, `missing-${c}-${i}`, options));
        default:
          await client.putAuthor(GROUP_ID, id, body, options);
      }
  }
}

export async function pacingRun(input: PacingRunInput): Promise<PacingRun> {
  const workload = input.workload ?? 'create';
  const clientsCount = input.clients ?? 1;
  const perClient = Math.ceil(input.records / clientsCount);
  const seeded = Array.from({ length: clientsCount * perClient }, (_, n) => `seed-${Math.floor(n / perClient)}-${n % perClient}`);
  const fixture = workload === 'mixed' || workload === 'refresh' ? seededFixture(seeded) : undefined;
  const args = [
    ...(input.kind === 'unlimited' ? [] : ['--rps', String(input.serverRps), '--rate-limit-kind', input.kind]),
    ...(fixture ? ['--fixture', fixture.path] : []),
  ];
  const emulator = await startEmulatorProcess(args).finally(() => fixture?.remove());
  try {
    const limiter = new SendRecordingLimiter({
      ...(input.clientMaxRps !== null ? { rps: input.clientMaxRps } : {}),
      maxInFlight: input.concurrency,
      now: performance.now.bind(performance),
      sleep: (ms, signal) => new Promise((done, fail) => {
        const timer = setTimeout(done, ms);
        signal?.addEventListener('abort', () => (clearTimeout(timer), fail(signal.reason)), { once: true });
      }),
    });
    const clients = Array.from({ length: clientsCount }, () => createClient({ baseUrl: emulator.url, apiKey: API_KEY, limiter }));
    const successes: number[] = [];
    const refusedAt: number[] = [];
    let failed = 0;
    let seen429 = 0;
    const deadline = AbortSignal.timeout(input.timeoutMs);
    const finish: number[] = new Array<number>(clientsCount).fill(0);
    const started = performance.now();
    const trace = process.env.PACING_TRACE
      ? setInterval(() => {
          const st = limiter.stats();
          const since = performance.now() - 1000;
          const recent = (times: number[]) => times.filter((t) => t > since).length;
          process.stderr.write(
            `${((performance.now() - started) / 1000).toFixed(2)}s pace ${st.currentRps.toFixed(1)} est ${st.estimatedLimitRps.toFixed(1)} 429s ${st.rateLimited} last 1 s: sent ${recent(limiter.sentAt)} admitted ${recent(limiter.admittedAt)} records ${recent(successes)}; inflight ${st.inFlight}\n`,
          );
        }, 250)
      : undefined;
    await Promise.all(
      clients.map(async (client, c) => {
        let next = 0;
        // As many workers per client as calls in flight, like apply: the limiter is the only pace.
        const workers = Array.from({ length: input.concurrency }, async () => {
          while (next < perClient && !deadline.aborted) {
            const i = next++;
            try {
              await sendRecord(client, workload, c, i, deadline);
              successes.push(performance.now());
            } catch {
              failed++;
            }
            const limited = clients.reduce((sum, each) => sum + each.stats().rateLimited, 0);
            for (; seen429 < limited; seen429++) refusedAt.push(performance.now());
          }
        });
        await Promise.all(workers);
        finish[c] = performance.now();
      }),
    );
    clearInterval(trace);
    if (trace) {
      // Did the client itself ever send more than R calls within one second (what a sliding
      // window refuses), or were the late 429s the network's and the server's timing?
      const sent = limiter.sentAt;
      let tooClose = 0;
      let closest = Infinity;
      for (let k = 0; k + input.serverRps < sent.length; k++) {
        const span = sent[k + input.serverRps]! - sent[k]!;
        if (sent[k]! - started < 3000) continue;
        closest = Math.min(closest, span);
        if (span < 1000) tooClose++;
      }
      process.stderr.write(`after 3 s: ${tooClose} spans of R + 1 sends under 1 s; the shortest ${closest.toFixed(1)} ms\n`);
    }
    const stats = await serverStats(emulator.url);
    // Rates count the calls the service admitted (a 404 as much as a 200): a record may take two.
    const admitted = limiter.admittedAt;
    const first = admitted[0] ?? started;
    const last = admitted.at(-1) ?? started;
    const settleFrom = first + (input.settleSeconds ?? SETTLE_SECONDS) * 1000;
    const late = admitted.filter((t) => t >= settleFrom);
    const settledRate = late.length > 1 ? (late.length - 1) / ((late.at(-1)! - late[0]!) / 1000) : NaN;
    return {
      achievedOverR: (admitted.length - 1) / ((last - first) / 1000) / input.serverRps,
      settledOverR: settledRate / input.serverRps,
      rateLimited: input.kind === 'unlimited' ? seen429 : stats.rateLimited,
      lateRateLimited: refusedAt.filter((t) => t >= settleFrom).length,
      // Calls that threw, and any the deadline left unmade.
      failed: Math.max(failed, perClient * clientsCount - successes.length),
      peakSecondOverR: peakInOneSecond(limiter.sentAt) / input.serverRps,
      finalPaceOverR: limiter.stats().currentRps / input.serverRps,
      seconds: (last - first) / 1000,
      clientFinishSeconds: finish.map((t) => (t - first) / 1000),
    };
  } finally {
    await emulator.close();
  }
}

type CaseInput = Omit<PacingRunInput, 'timeoutMs'>;

function timeoutOf(input: CaseInput): number {
  const callsPerRecord = input.workload === 'create-if-absent' ? 2 : 1;
  return Math.max(30_000, ((input.records * callsPerRecord) / (input.clientMaxRps ?? input.serverRps)) * 3000);
}

/** Summarises the runs of one case; `baselines` (same run index) give the ratio to what the machine could pace. */
function summarise(input: CaseInput, runs: PacingRun[], baselines: PacingRun[] | null): PacingCase {
  const pick = (f: (r: PacingRun) => number) => spread(runs.map(f));
  return {
    kind: input.kind,
    workload: input.workload ?? 'create',
    settleSeconds: input.settleSeconds ?? SETTLE_SECONDS,
    serverRps: input.serverRps,
    clientMaxRps: input.clientMaxRps,
    records: input.records,
    concurrency: input.concurrency,
    clients: input.clients ?? 1,
    runs: runs.length,
    achievedOverR: pick((r) => r.achievedOverR),
    settledOverR: pick((r) => r.settledOverR),
    settledOverBaseline: baselines ? spread(runs.map((r, i) => r.settledOverR / baselines[i]!.settledOverR)) : null,
    rateLimited: pick((r) => r.rateLimited),
    lateRateLimited: pick((r) => r.lateRateLimited),
    failed: pick((r) => r.failed),
    peakSecondOverR: pick((r) => r.peakSecondOverR),
    finalPaceOverR: pick((r) => r.finalPaceOverR),
    seconds: pick((r) => r.seconds),
    finishSpreadOverDuration: pick((r) => (Math.max(...r.clientFinishSeconds) - Math.min(...r.clientFinishSeconds)) / r.seconds),
  };
}

export async function pacingCase(input: CaseInput & { runs: number; log?: (m: string) => void }): Promise<PacingCase> {
  const runs: PacingRun[] = [];
  for (let run = 0; run < input.runs; run++) {
    input.log?.(`pacing ${input.kind} R=${input.serverRps} max_rps=${input.clientMaxRps ?? 'none'} clients=${input.clients ?? 1}: run ${run + 1}/${input.runs}`);
    runs.push(await pacingRun({ ...input, timeoutMs: timeoutOf(input) }));
  }
  return summarise(input, runs, null);
}

/**
 * The `pacing` section of `npm run bench`. The cases take turns within each run, after a
 * baseline — the same client at max_rps R against an emulator with no limit, i.e. what this
 * machine can pace right now — so a loaded machine shows as a low baseline, and "settled /
 * baseline" compares each limit kind with it under the same load.
 */
export async function pacingBenchmark(quick: boolean, log: (m: string) => void): Promise<PacingCase[]> {
  const runs = quick ? 1 : 3;
  const R = 50;
  const seconds = quick ? 8 : 10;
  const baseline: CaseInput = { kind: 'unlimited', serverRps: R, clientMaxRps: R, records: R * seconds, concurrency: 8 };
  const inputs: CaseInput[] = [
    ...RATE_LIMIT_KINDS.map((kind): CaseInput => ({ kind, serverRps: R, clientMaxRps: null, records: R * seconds, concurrency: 8 })),
    // max_rps configured at the limit of the strictest kind.
    { kind: 'sliding-window', serverRps: R, clientMaxRps: R, records: R * seconds, concurrency: 8 },
    // Twenty pipelines' clients sharing one limiter (as `sync a.yaml b.yaml …` wires them), no max_rps.
    { kind: 'sliding-window', serverRps: R, clientMaxRps: null, records: R * seconds, concurrency: 4, clients: 20 },
    // The classic hard case: five calls in any sliding second, no max_rps (no baseline: at 5 req/s load does not matter).
    { kind: 'sliding-window', serverRps: 5, clientMaxRps: null, records: quick ? 60 : 75, concurrency: 8 },
    // The workloads of real runs, judged after their first 10 s: 404s (create-if-absent, the
    // mixed run's misses) are calls the service admitted, and the pace must learn from them.
    ...realWorkloads(quick),
  ];
  const baselineRuns: PacingRun[] = [];
  const caseRuns: PacingRun[][] = inputs.map(() => []);
  for (let run = 0; run < runs; run++) {
    log(`pacing run ${run + 1}/${runs}: baseline (no limit, max_rps ${R})`);
    baselineRuns.push(await pacingRun({ ...baseline, timeoutMs: timeoutOf(baseline) }));
    for (const [i, input] of inputs.entries()) {
      log(`pacing run ${run + 1}/${runs}: ${input.kind} R=${input.serverRps} max_rps=${input.clientMaxRps ?? 'none'} clients=${input.clients ?? 1}`);
      caseRuns[i]!.push(await pacingRun({ ...input, timeoutMs: timeoutOf(input) }));
    }
  }
  return [
    summarise(baseline, baselineRuns, null),
    ...inputs.map((input, i) => summarise(input, caseRuns[i]!, input.serverRps === R ? baselineRuns : null)),
  ];
}

/** The real workloads at R = 20 and 50 on every limit kind, 20 s of calls each (10 s settling, 10 s measured). */
export function realWorkloads(quick: boolean): CaseInput[] {
  const workloads: Workload[] = quick ? ['create-if-absent'] : ['create-if-absent', 'mixed', 'refresh'];
  const seconds = 20;
  return [20, 50].flatMap((R) =>
    workloads.flatMap((workload) =>
      RATE_LIMIT_KINDS.map((kind): CaseInput => ({
        kind,
        workload,
        settleSeconds: 10,
        serverRps: R,
        clientMaxRps: null,
        records: (R * seconds) / (workload === 'create-if-absent' ? 2 : 1),
        concurrency: 8,
      })),
    ),
  );
}

/**
 * The real workloads alone, the cases taking turns within each run after a baseline per R: the
 * same workload at max_rps R against an emulator with no limit (what the loaded machine could
 * pace then), so "settled / baseline" tells the limiter's loss from the machine's.
 */
export async function workloadsBenchmark(input: { runs: number; quick: boolean; log: (m: string) => void; only?: Workload[]; rates?: number[] }): Promise<PacingCase[]> {
  const inputs = realWorkloads(input.quick).filter((c) => (!input.only || input.only.includes(c.workload!)) && (!input.rates || input.rates.includes(c.serverRps)));
  const rates = [...new Set(inputs.map((c) => c.serverRps))];
  const baselines = rates.map((R): CaseInput => ({ ...inputs.find((c) => c.serverRps === R)!, kind: 'unlimited', clientMaxRps: R }));
  const baselineRuns: PacingRun[][] = baselines.map(() => []);
  const caseRuns: PacingRun[][] = inputs.map(() => []);
  for (let run = 0; run < input.runs; run++) {
    for (const [b, baseline] of baselines.entries()) {
      input.log(`workloads run ${run + 1}/${input.runs}: baseline R=${baseline.serverRps} ${baseline.workload}`);
      baselineRuns[b]!.push(await pacingRun({ ...baseline, timeoutMs: timeoutOf(baseline) }));
    }
    for (const [i, c] of inputs.entries()) {
      input.log(`workloads run ${run + 1}/${input.runs}: ${c.kind} ${c.workload} R=${c.serverRps}`);
      caseRuns[i]!.push(await pacingRun({ ...c, timeoutMs: timeoutOf(c) }));
    }
  }
  return [
    ...baselines.map((b, i) => summarise(b, baselineRuns[i]!, null)),
    ...inputs.map((c, i) => summarise(c, caseRuns[i]!, baselineRuns[rates.indexOf(c.serverRps)]!)),
  ];
}

function summary(c: PacingCase): string {
  const f = (s: Spread, d = 3) => `${s.median.toFixed(d)} (${s.min.toFixed(d)}–${s.max.toFixed(d)})`;
  return [
    `${c.kind} ${c.workload} R=${c.serverRps} max_rps=${c.clientMaxRps ?? 'none'} clients=${c.clients} records=${c.records} n=${c.runs}:`,
    `achieved/R ${f(c.achievedOverR)}`,
    `settled/R after ${c.settleSeconds} s ${f(c.settledOverR)}`,
    ...(c.settledOverBaseline ? [`settled/baseline ${f(c.settledOverBaseline)}`] : []),
    ...(c.clients > 1 ? [`finish spread ${f(c.finishSpreadOverDuration)}`] : []),
    `429s ${f(c.rateLimited, 0)}, after ${c.settleSeconds} s ${f(c.lateRateLimited, 0)}`,
    `failed ${f(c.failed, 0)}`,
    `peak 1s/R ${f(c.peakSecondOverR, 2)}`,
    `final pace/R ${f(c.finalPaceOverR)}`,
    `${f(c.seconds, 1)} s`,
  ].join('  ');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const argv = process.argv.slice(2);
  const arg = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const log = (m: string) => process.stderr.write(`[pacing] ${m}\n`);
  if (arg('kind')) {
    const kind = arg('kind') as RateLimitKind | 'unlimited';
    const rps = Number(arg('rps') ?? 50);
    const seconds = Number(arg('seconds') ?? 12);
    const maxRps = arg('max-rps');
    const workload = (arg('workload') ?? 'create') as Workload;
    const callsPerRecord = workload === 'create-if-absent' ? 2 : 1;
    const result = await pacingCase({
      kind,
      workload,
      settleSeconds: Number(arg('settle') ?? SETTLE_SECONDS),
      serverRps: rps,
      clientMaxRps: maxRps === undefined ? null : Number(maxRps),
      records: Math.round((rps * seconds) / callsPerRecord),
      concurrency: Number(arg('concurrency') ?? 8),
      clients: Number(arg('clients') ?? 1),
      runs: Number(arg('runs') ?? 1),
      log,
    });
    process.stdout.write(`${summary(result)}\n`);
  } else if (argv.includes('--workloads')) {
    // Only the real workloads, with a baseline per R in each run; the figures are also saved as JSON.
    const only = arg('only')?.split(',') as Workload[] | undefined;
    const rates = arg('rates')?.split(',').map(Number);
    const results = await workloadsBenchmark({ runs: Number(arg('runs') ?? 3), quick: argv.includes('--quick'), log, ...(only ? { only } : {}), ...(rates ? { rates } : {}) });
    for (const result of results) process.stdout.write(`${summary(result)}\n`);
    const out = arg('out');
    if (out) writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  } else {
    for (const result of await pacingBenchmark(argv.includes('--quick'), log)) process.stdout.write(`${summary(result)}\n`);
  }
}
