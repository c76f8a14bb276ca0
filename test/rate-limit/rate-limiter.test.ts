import { describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import { API_KEY } from '../client/helpers.js';
import { createClient, DEFAULT_RETRY_POLICY, decideRetry, RateLimiter, type RateLimiterOptions } from '../../src/client/index.js';
import { createServerRateLimit, RATE_LIMIT_KINDS, rateLimitedReply, type RateLimitKind } from '../../src/emulator/rate-limits.js';
import { NotFoundError } from '../../src/client/errors.js';
import { seededRandom } from '../../src/runtime/seeded-random.js';


/**
 * A discrete-event clock: `sleep` registers a timer, and `runUntil` lets every pending promise
 * settle before jumping to the next timer. Concurrent sleepers (the limiter's pace, request
 * latencies) then interleave exactly as they would in real time, without waiting for it.
 */
function simClock() {
  let now = 0;
  let sequence = 0;
  const timers: Array<{ at: number; order: number; resolve: () => void }> = [];
  const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    now: () => now,
    sleep: (ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        signal?.throwIfAborted();
        timers.push({ at: now + Math.max(0, ms), order: sequence++, resolve });
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      }),
    /** Advances time timer by timer until `done()` or `limitMs` of simulated time. */
    async runUntil(done: () => boolean, limitMs: number): Promise<void> {
      for (let steps = 0; steps < 1_000_000; steps++) {
        await flush();
        if (done() || timers.length === 0) return;
        timers.sort((a, b) => a.at - b.at || a.order - b.order);
        const next = timers.shift()!;
        if (next.at > limitMs) return;
        now = Math.max(now, next.at);
        next.resolve();
      }
    },
  };
}

type Sim = ReturnType<typeof simClock>;

function limiterOn(clock: Sim, options: Omit<RateLimiterOptions, 'now' | 'sleep'>) {
  return new RateLimiter({ ...options, now: clock.now, sleep: clock.sleep });
}

/** Hands out `count` turns to `count` concurrent waiters and returns when each came. */
async function turns(clock: Sim, limiter: RateLimiter, count: number): Promise<number[]> {
  const at: number[] = [];
  const all = Promise.all(Array.from({ length: count }, () => limiter.turn().then(() => at.push(clock.now()))));
  await clock.runUntil(() => at.length === count, 600_000);
  await all;
  return at;
}

describe('pacing (simulated clock)', () => {
  it('spaces requests evenly at max_rps, with no burst', async () => {
    const clock = simClock();
    const limiter = limiterOn(clock, { rps: 10, burst: 5 });
    expect(await turns(clock, limiter, 6)).toEqual([0, 100, 200, 300, 400, 500]);
  });

  it('with max_rps set, never exceeds it however long the demand lasts', async () => {
    const clock = simClock();
    const limiter = limiterOn(clock, { rps: 20 });
    const at = await turns(clock, limiter, 400);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(50);
    expect(limiter.stats().currentRps).toBe(20);
    expect(limiter.stats().configuredRps).toBe(20);
  });

  it('when the event loop stalls past a turn, the turns after it keep their interval from it', async () => {
    // Timers fire up to 60 ms late now and then. A late turn may be made up for by at most 25 ms,
    // so any 21 turns at 20 req/s span at least 20 intervals less 25 ms: a sliding window of 20
    // a second never sees 21 calls. Before, the turn after a late one kept the old schedule and
    // followed it closer than an interval (21 turns within 941 ms here).
    const clock = simClock();
    const random = seededRandom(11);
    const limiter = new RateLimiter({
      rps: 20,
      now: clock.now,
      sleep: (ms, signal) => clock.sleep(ms + (random() < 0.3 ? random() * 60 : 0), signal),
    });
    const at = await turns(clock, limiter, 400);
    const spans = at.slice(20).map((t, k) => t - at[k]!);
    expect(Math.min(...spans)).toBeGreaterThanOrEqual(20 * 50 - 25);
  });

  it('without max_rps starts conservatively and doubles while requests wait for it', async () => {
    const clock = simClock();
    const limiter = limiterOn(clock, { startRps: 4 });
    expect(limiter.stats()).toMatchObject({ currentRps: 4, configuredRps: 0, estimatedLimitRps: 0 });
    const at = await turns(clock, limiter, 200);
    expect(at[1]! - at[0]!).toBe(250);
    // 200 turns take a couple of seconds, not the 50 s the starting rate would need.
    expect(at.at(-1)!).toBeLessThan(3000);
    expect(limiter.stats().currentRps).toBeGreaterThan(100);
  });

  it('does not raise the pace while nobody waits for it', async () => {
    const clock = simClock();
    const limiter = limiterOn(clock, { startRps: 4 });
    for (let i = 0; i < 20; i++) {
      await turns(clock, limiter, 1);
      void clock.sleep(1000);
      await clock.runUntil(() => false, clock.now() + 1000);
    }
    expect(limiter.stats().currentRps).toBe(4);
  });

  it('a 429 neither halves the pace nor pauses the other waiters', async () => {
    const clock = simClock();
    const limiter = limiterOn(clock, { rps: 100 });
    // One second at 100 rps admitted, then a 429: the service's limit is about 100.
    const first = await turns(clock, limiter, 100);
    first.forEach(() => limiter.onAdmitted());
    // Refusals worth 5 % of the answers say the pace is at the limit.
    for (let i = 0; i < 6; i++) limiter.onRateLimited();
    const { currentRps, estimatedLimitRps } = limiter.stats();
    expect(estimatedLimitRps).toBe(100);
    expect(currentRps).toBeGreaterThanOrEqual(95);
    expect(currentRps).toBeLessThan(100);
    const next = await turns(clock, limiter, 3);
    // The next turn comes one interval after the last, not after a pause.
    expect(next[0]! - first.at(-1)!).toBeLessThanOrEqual(11);
  });

  it('a lone 429 far under the pace (a fault, not the limit) changes nothing', async () => {
    const clock = simClock();
    const limiter = limiterOn(clock, { rps: 100 });
    // 40 answers in the last second at a pace of 100: the demand, not the limit, set the rate.
    (await turns(clock, limiter, 40)).forEach(() => limiter.onAdmitted());
    limiter.onRateLimited();
    expect(limiter.stats()).toMatchObject({ currentRps: 100, estimatedLimitRps: 0, rateLimited: 1 });
  });

  it('a lone 429 while answered at the full pace (max_rps at the limit) settles just under it', async () => {
    const clock = simClock();
    const limiter = limiterOn(clock, { rps: 100 });
    (await turns(clock, limiter, 100)).forEach(() => limiter.onAdmitted());
    limiter.onRateLimited();
    expect(limiter.stats()).toMatchObject({ currentRps: 97, estimatedLimitRps: 100 });
    // Later lone 429s nudge the estimate, never below 0.9 of it (random 429s cannot ratchet it down).
    for (let i = 0; i < 50; i++) {
      // A second apart, so that each 429 sees only its own 90 admissions in the window.
      void clock.sleep(1000);
      await clock.runUntil(() => false, clock.now() + 1000);
      (await turns(clock, limiter, 90)).forEach(() => limiter.onAdmitted());
      limiter.onRateLimited();
    }
    expect(limiter.stats().estimatedLimitRps).toBeCloseTo(90, 5);
  });

  it('answers that come in a bunch at the settled pace do not raise the estimate above what the limit admits', async () => {
    // A loaded machine: the event loop stalls, then hands over the answers of several turns at
    // once, so one second of answer times holds more than the pace sent. Before, the next 429
    // "learned" that count as a higher limit (21 for a sliding window of 20), put the pace above
    // the limit, failed its trial at the next 429, and then capped every probe for 30 s.
    const clock = simClock();
    const limiter = limiterOn(clock, { maxInFlight: 8 });
    await turns(clock, limiter, 60);
    for (let i = 0; i < 20; i++) limiter.onAdmitted();
    for (let i = 0; i < 3; i++) limiter.onRateLimited();
    expect(limiter.stats()).toMatchObject({ estimatedLimitRps: 20, currentRps: 19.4 });
    const wait = async (ms: number) => {
      void clock.sleep(ms);
      await clock.runUntil(() => false, clock.now() + ms);
    };
    // A lone 429 after a quiet while: jitter, nothing changes.
    await wait(5000);
    limiter.onRateLimited();
    expect(limiter.stats().estimatedLimitRps).toBe(20);
    // 1.5 s later, 21 answers handed over at once, then another 429.
    await wait(1500);
    for (let i = 0; i < 21; i++) limiter.onAdmitted();
    limiter.onRateLimited();
    expect(limiter.stats().estimatedLimitRps).toBeLessThanOrEqual(20);
    expect(limiter.stats().currentRps).toBeLessThan(19.5);
  });

  it('two limiters do not share state', async () => {
    const clock = simClock();
    const a = limiterOn(clock, { rps: 1 });
    const b = limiterOn(clock, { rps: 1 });
    await turns(clock, a, 1);
    for (let i = 0; i < 3; i++) a.onRateLimited();
    expect(a.stats().estimatedLimitRps).toBeGreaterThan(0);
    expect(await turns(clock, b, 1)).toEqual([clock.now()]);
    expect(b.stats()).toMatchObject({ rateLimited: 0, estimatedLimitRps: 0, currentRps: 1 });
    expect(a.stats().rateLimited).toBe(3);
  });

  it('an aborted waiter leaves the queue and the others keep their pace', async () => {
    const clock = simClock();
    const limiter = limiterOn(clock, { rps: 10 });
    const controller = new AbortController();
    const at: number[] = [];
    const first = limiter.turn().then(() => at.push(clock.now()));
    const aborted = limiter.turn(controller.signal).catch(() => 'aborted');
    const third = limiter.turn().then(() => at.push(clock.now()));
    controller.abort();
    await clock.runUntil(() => at.length === 2, 10_000);
    await Promise.all([first, third]);
    expect(await aborted).toBe('aborted');
    expect(at).toEqual([0, 100]);
  });
});

/**
 * The client's pace against each limit the emulator can play, in simulated time: the emulator's
 * own limit classes judge each request, which reaches them after a latency with jitter (a
 * seeded 1–15 ms), as requests bunch on a real network. `jitterEveryMs`: besides the limit's own
 * refusals, one call that often is refused anyway, as a sliding window refuses a call whose
 * latency came out longer than the pace's margin.
 */
async function againstLimit(kind: RateLimitKind, R: number, maxRps: number | undefined, seconds: number, seed: number, jitterEveryMs = Infinity, clientStallMs = 0) {
  const clock = simClock();
  const serverLimit = createServerRateLimit({ kind, rps: R }, clock.now);
  const random = seededRandom(seed);
  // A loaded client: its event loop stalls for up to `clientStallMs` every 0–400 ms, and what falls
  // due meanwhile (the limiter's timers, the handling of answers) runs when the stall ends.
  const stalls: Array<{ from: number; to: number }> = [];
  const stallRandom = seededRandom(seed + 1000);
  for (let at = 0; clientStallMs > 0 && at < seconds * 3000; ) {
    const from = at + stallRandom() * 400;
    at = from + stallRandom() * clientStallMs;
    stalls.push({ from, to: at });
  }
  const waitOutStall = async () => {
    const stall = stalls.find((each) => clock.now() >= each.from && clock.now() < each.to);
    if (stall) await clock.sleep(stall.to - clock.now());
  };
  const limiter = new RateLimiter({
    ...(maxRps !== undefined ? { rps: maxRps } : {}),
    maxInFlight: 8,
    now: clock.now,
    sleep: async (ms, signal) => {
      await clock.sleep(ms, signal);
      await waitOutStall();
    },
  });
  const admittedAt: number[] = [];
  const refusedAt: number[] = [];
  let maxRefusalsOfOneRecord = 0;
  const records = R * seconds;
  let next = 0;
  let finished = 0;
  let jitterAt = jitterEveryMs;
  const worker = async () => {
    while (next < records) {
      next += 1;
      for (let refusals = 0; ; refusals++) {
        const admitted = await limiter.run(async () => {
          await clock.sleep(1 + random() * 14);
          let admitted = false;
          if (clock.now() < jitterAt) admitted = serverLimit.admit().waitMs === 0;
          else jitterAt += jitterEveryMs;
          await waitOutStall();
          return admitted;
        });
        if (admitted) {
          admittedAt.push(clock.now());
          limiter.onAdmitted();
          maxRefusalsOfOneRecord = Math.max(maxRefusalsOfOneRecord, refusals);
          break;
        }
        refusedAt.push(clock.now());
        limiter.onRateLimited();
      }
      finished += 1;
    }
  };
  const workers = Promise.all(Array.from({ length: 8 }, worker));
  await clock.runUntil(() => finished === records, seconds * 10_000);
  await workers;
  const settleFrom = 5000;
  const late = admittedAt.filter((t) => t >= settleFrom);
  return {
    settledOverR: (late.length - 1) / ((late.at(-1)! - late[0]!) / 1000) / R,
    lateRefusals: refusedAt.filter((t) => t >= settleFrom).length,
    maxRefusalsOfOneRecord,
    peakInOneSecond: peakInOneSecond(admittedAt),
    limiter: limiter.stats(),
  };
}

function peakInOneSecond(times: number[]): number {
  let peak = 0;
  for (let i = 0, from = 0; i < times.length; i++) {
    while (times[i]! - times[from]! >= 1000) from++;
    peak = Math.max(peak, i - from + 1);
  }
  return peak;
}

describe('pacing against every limit the emulator plays (simulated clock)', () => {
  for (const kind of RATE_LIMIT_KINDS) {
    it(`${kind}: finds the limit without max_rps, settles at ≥ 0.95 R with a handful of late 429s`, async () => {
      for (const seed of [1, 2]) {
        const result = await againstLimit(kind, 20, undefined, 30, seed);
        expect(result.settledOverR).toBeGreaterThanOrEqual(0.95);
        expect(result.settledOverR).toBeLessThanOrEqual(1.01);
        expect(result.lateRefusals).toBeLessThanOrEqual(5);
        expect(result.maxRefusalsOfOneRecord).toBeLessThan(20);
        expect(result.limiter.estimatedLimitRps).toBeGreaterThan(19);
        expect(result.limiter.estimatedLimitRps).toBeLessThan(22);
      }
    });

    it(`${kind}: with max_rps above the limit, settles under the limit`, async () => {
      const result = await againstLimit(kind, 20, 40, 30, 3);
      expect(result.settledOverR).toBeGreaterThanOrEqual(0.95);
      expect(result.lateRefusals).toBeLessThanOrEqual(5);
      expect(result.limiter.currentRps).toBeLessThanOrEqual(40);
    });
  }

  for (const kind of ['sliding-window', 'hidden'] as const) {
    it(`${kind}: a lone 429 every 5 s (latency jitter on a loaded machine) does not ratchet the pace down`, async () => {
      // Before: each one cut the estimate 1 % and restarted the 10 s hold before any probe, so
      // the pace sank to 0.9 of the limit (0.87 R) within a minute and stayed there.
      const result = await againstLimit(kind, 20, undefined, 60, 5, 5000);
      expect(result.settledOverR).toBeGreaterThanOrEqual(0.95);
      expect(result.limiter.estimatedLimitRps).toBeGreaterThan(19.5);
      expect(result.limiter.currentRps).toBeGreaterThanOrEqual(0.95 * 20);
      // The jitter's own 429s (one in 5 s) and hardly any more.
      expect(result.lateRefusals).toBeLessThanOrEqual(60 / 5 + 3);
    });
  }

  for (const kind of ['sliding-window', 'hidden'] as const) {
    it(`${kind}: on a loaded client (event loop stalls up to 40 ms) the pace neither bunches nor ratchets down`, async () => {
      // Before: a turn the stall made late was followed by the next one on the old schedule, the
      // turn a window later found R + 1 calls in it, and the 429s that followed nudged the estimate
      // down (19.8 after 25 s, or 4 late 429s).
      for (const seed of [1, 2]) {
        const result = await againstLimit(kind, 20, undefined, 30, seed, Infinity, 40);
        expect(result.settledOverR).toBeGreaterThanOrEqual(0.95);
        expect(result.lateRefusals).toBeLessThanOrEqual(3);
        expect(result.limiter.estimatedLimitRps).toBeGreaterThanOrEqual(19.9);
      }
    });
  }

  it('with max_rps under the limit, never passes max_rps and never meets a 429', async () => {
    const result = await againstLimit('sliding-window', 50, 20, 20, 4);
    expect(result.peakInOneSecond).toBeLessThanOrEqual(21);
    expect(result.lateRefusals).toBe(0);
    expect(result.limiter.rateLimited).toBe(0);
  });
});

describe('the retry of a 429', () => {
  const policy = DEFAULT_RETRY_POLICY;
  const random = () => 0.5;
  const rateLimited = (retryAfterMs?: number) => ({ kind: 'status' as const, status: 429, retryAfterMs });

  it('goes back to the pace at once when Retry-After asks for a second or less, or says nothing', () => {
    for (const retryAfterMs of [undefined, 0, 1000]) {
      expect(decideRetry({ outcome: rateLimited(retryAfterMs), attempt: 1, rateLimitedAttempts: 1, elapsedMs: 0, mode: 'idempotent', policy, random })).toEqual({
        retry: true,
        delayMs: 0,
        reason: 'paced',
      });
    }
  });

  it('waits out a longer Retry-After', () => {
    expect(decideRetry({ outcome: rateLimited(5000), attempt: 1, rateLimitedAttempts: 1, elapsedMs: 0, mode: 'idempotent', policy, random })).toMatchObject({ delayMs: 5000, reason: 'retry-after' });
  });

  it('has its own budget: 429s do not use up the attempts of other failures, nor the reverse', () => {
    const decide = (attempt: number, rateLimitedAttempts: number, outcome: Parameters<typeof decideRetry>[0]['outcome']) =>
      decideRetry({ outcome, attempt, rateLimitedAttempts, elapsedMs: 0, mode: 'idempotent', policy, random }).retry;
    expect(decide(10, 10, rateLimited())).toBe(true);
    expect(decide(policy.maxRateLimitedAttempts, policy.maxRateLimitedAttempts, rateLimited())).toBe(false);
    // Ten 429s then a 503: the 503 is the first failure of its kind.
    expect(decide(11, 10, { kind: 'status', status: 503 })).toBe(true);
    expect(decide(policy.maxAttempts + 10, 10, { kind: 'status', status: 503 })).toBe(false);
  });
});

/**
 * Create-if-absent into a group the run did not create, as apply sends it: a partial POST that
 * the service answers 404, then a full POST. The answers are synthetic (undici's MockAgent as the
 * dispatcher, the emulator's own limit classes deciding 429 or not), in simulated time; the
 * client itself reports each answer to its limiter. A 404 was admitted by the limit as much as a
 * 200: a limiter that learns only from 2xx settles at a fraction of the limit.
 */
async function createIfAbsentAgainstLimit(kind: RateLimitKind, R: number, seconds: number, seed: number) {
  const clock = simClock();
  const serverLimit = createServerRateLimit({ kind, rps: R }, clock.now);
  const agent = new MockAgent();
  agent.disableNetConnect();
  const origin = 'http://127.0.0.1:9';
  const answeredAt: number[] = [];
  const refusedAt: number[] = [];
  const json = { 'content-type': 'application/json' };
  agent
    .get(origin)
    .intercept({ path: /.*/, method: /.*/ })
    .reply((request) => {
      const admission = serverLimit.admit();
      if (admission.waitMs > 0) {
        refusedAt.push(clock.now());
        const reply = rateLimitedReply(admission);
        return { statusCode: reply.status, data: JSON.stringify(reply.body), responseOptions: { headers: { ...json, ...reply.headers } } };
      }
      answeredAt.push(clock.now());
      // The partial POST finds no record (docs/service-contract.md, call 3): 404. The full POST creates it.
      return request.path.endsWith('/partial/')
        ? { statusCode: 404, data: JSON.stringify({ ok: false, error: { code: 'not_found', message: 'no such author' } }), responseOptions: { headers: json } }
        : { statusCode: 200, data: JSON.stringify({ ok: true }), responseOptions: { headers: json } };
    })
    .persist();
  const limiter = limiterOn(clock, { maxInFlight: 8 });
  const client = createClient({ baseUrl: origin, apiKey: API_KEY, dispatcher: agent, limiter, now: clock.now, sleep: clock.sleep, random: seededRandom(seed) });
  const records = (R * seconds) / 2;
  let next = 0;
  let finished = 0;
  let failed = 0;
  const worker = async () => {
    while (next < records) {
      const id = `new-${next++}`;
      try {
        try {
          await client.patchAuthor(501, id, { name: `Expert ${id}` });
        } catch (error) {
          if (!(error instanceof NotFoundError)) throw error;
          await client.putAuthor(501, id, { name: `Expert ${id}` });
        }
      } catch {
        failed += 1;
      }
      finished += 1;
    }
  };
  const workers = Promise.all(Array.from({ length: 8 }, worker));
  await clock.runUntil(() => finished === records, seconds * 10_000);
  await workers;
  await agent.close();
  const settleFrom = 10_000;
  const late = answeredAt.filter((t) => t >= settleFrom);
  return {
    settledOverR: (late.length - 1) / ((late.at(-1)! - late[0]!) / 1000) / R,
    lateRefusals: refusedAt.filter((t) => t >= settleFrom).length,
    failed,
    limiter: limiter.stats(),
  };
}

describe('create-if-absent: 404 answers count as admitted (simulated clock, synthetic answers)', () => {
  for (const kind of RATE_LIMIT_KINDS) {
    it(`${kind}: partial POSTs answered 404 then full POSTs pace at ≥ 0.95 R after 10 s`, async () => {
      const result = await createIfAbsentAgainstLimit(kind, 20, 40, 3);
      expect(result.failed).toBe(0);
      expect(result.settledOverR).toBeGreaterThanOrEqual(0.95);
      expect(result.settledOverR).toBeLessThanOrEqual(1.01);
      expect(result.lateRefusals).toBeLessThanOrEqual(5);
    });
  }
});

describe('a probe while the client cannot keep up with its pace (simulated clock)', () => {
  /**
   * A loaded client: for 20 s its event loop stalls now and then, so the limiter's timers fire up
   * to 60 ms late and it sends fewer calls than its pace, though calls wait for their turn. A
   * token bucket of 50 req/s refuses nothing meanwhile (its burst absorbs the probe). Before, the
   * probe's pace kept rising far above R on the strength of that waiting, and once the load
   * lifted the client sent a burst at that pace and met a volley of 429s (pace 392 req/s, then
   * 12 refusals within 1.3 s). Now the probe stays within a fifth above what the service admitted.
   */
  it('token-bucket: the pace stays near what was admitted, and the end of the load meets few 429s', async () => {
    const R = 50;
    const clock = simClock();
    const random = seededRandom(7);
    const loaded = () => clock.now() >= 5000 && clock.now() < 25_000;
    const serverLimit = createServerRateLimit({ kind: 'token-bucket', rps: R }, clock.now);
    const limiter = new RateLimiter({ maxInFlight: 8, now: clock.now, sleep: (ms, signal) => clock.sleep(ms + (loaded() ? random() * 60 : 0), signal) });
    const refusedAt: number[] = [];
    let paceAtEndOfLoad = 0;
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const admitted = await limiter.run(async () => {
          await clock.sleep(5);
          return serverLimit.admit().waitMs === 0;
        });
        if (admitted) limiter.onAdmitted();
        else {
          refusedAt.push(clock.now());
          limiter.onRateLimited();
        }
      }
    };
    const workers = Promise.all(Array.from({ length: 8 }, worker));
    const watch = (async () => {
      await clock.sleep(25_000);
      paceAtEndOfLoad = limiter.stats().currentRps;
    })();
    await clock.runUntil(() => clock.now() >= 40_000, 40_000);
    stop = true;
    void workers;
    await watch;
    expect(paceAtEndOfLoad).toBeLessThan(1.25 * R);
    // The 10 s after the load lifted (the next regular probe may come later).
    expect(refusedAt.filter((t) => t >= 25_000 && t < 35_000).length).toBeLessThanOrEqual(3);
  });
});

describe('after another client leaves (no shared state)', () => {
  /**
   * Another process spends half of the limit for the first 20 s, then finishes. The limiter
   * settles at the half it was admitted, then must probe back up to the whole limit and stay
   * there: a lone 429 met by the probe says the limit is about what was just admitted, not the
   * old estimate.
   */
  for (const kind of RATE_LIMIT_KINDS) it(`${kind}: probes back up to the whole limit and stays there`, async () => {
    const R = 20;
    const clock = simClock();
    const serverLimit = createServerRateLimit({ kind, rps: R }, clock.now);
    const limiter = limiterOn(clock, { maxInFlight: 8 });
    const admittedAt: number[] = [];
    let stop = false;
    const other = (async () => {
      while (clock.now() < 20_000) {
        await clock.sleep(100);
        serverLimit.admit();
      }
    })();
    const worker = async () => {
      while (!stop) {
        const admitted = await limiter.run(async () => {
          await clock.sleep(5);
          return serverLimit.admit().waitMs === 0;
        });
        if (admitted) {
          admittedAt.push(clock.now());
          limiter.onAdmitted();
        } else limiter.onRateLimited();
      }
    };
    const workers = Promise.all(Array.from({ length: 8 }, worker));
    await clock.runUntil(() => clock.now() >= 80_000, 80_000);
    // The workers left waiting on simulated timers are dropped with the clock.
    stop = true;
    void workers;
    await other;
    const rateIn = (from: number, to: number) => admittedAt.filter((t) => t >= from && t < to).length / ((to - from) / 1000) / R;
    // Sharing: about half.
    expect(rateIn(10_000, 20_000)).toBeLessThan(0.6);
    // Alone again: back at the limit within 30 s, and it stays there.
    expect(rateIn(50_000, 80_000)).toBeGreaterThanOrEqual(0.93);
  });
});
