import { afterEach, describe, expect, it } from 'vitest';
import { createClient, RateLimiter } from '../../src/client/index.js';
import { API_KEY, fakeClock, sendJson, startTinyServer, type TinyServer } from './helpers.js';

let server: TinyServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('token bucket (fake clock)', () => {
  it('lets a burst through, then spaces requests 1/rps apart', () => {
    const clock = fakeClock(0);
    const limiter = new RateLimiter({ rps: 10, burst: 3, now: clock.now, sleep: clock.sleep });
    const waits = Array.from({ length: 6 }, () => limiter.reserve());
    expect(waits).toEqual([0, 0, 0, 100, 200, 300]);
  });

  it('refills while idle, up to the burst', () => {
    const clock = fakeClock(0);
    const limiter = new RateLimiter({ rps: 10, burst: 2, now: clock.now, sleep: clock.sleep });
    limiter.reserve();
    limiter.reserve();
    clock.advance(10_000);
    expect([limiter.reserve(), limiter.reserve(), limiter.reserve()]).toEqual([0, 0, 100]);
  });

  it('a 429 halves the rate, pauses for Retry-After, and successes recover additively', () => {
    const clock = fakeClock(0);
    const limiter = new RateLimiter({ rps: 10, burst: 1, recoveryStep: 1, now: clock.now, sleep: clock.sleep });
    limiter.onRateLimited(2000);
    expect(limiter.stats().currentRps).toBe(5);
    expect(limiter.reserve()).toBe(2000);
    expect(limiter.reserve()).toBe(2200); // 1/5 s later
    limiter.onRateLimited();
    expect(limiter.stats().currentRps).toBe(2.5);
    for (let i = 0; i < 3; i += 1) limiter.onSuccess();
    expect(limiter.stats().currentRps).toBe(5.5);
    for (let i = 0; i < 20; i += 1) limiter.onSuccess();
    expect(limiter.stats().currentRps).toBe(10);
  });

  it('never slows below the floor', () => {
    const clock = fakeClock(0);
    const limiter = new RateLimiter({ rps: 4, minRps: 1, now: clock.now, sleep: clock.sleep });
    for (let i = 0; i < 10; i += 1) limiter.onRateLimited();
    expect(limiter.stats().currentRps).toBe(1);
  });

  it('two limiters do not share state', () => {
    const clock = fakeClock(0);
    const a = new RateLimiter({ rps: 1, now: clock.now, sleep: clock.sleep });
    const b = new RateLimiter({ rps: 1, now: clock.now, sleep: clock.sleep });
    a.reserve();
    a.onRateLimited(5000);
    expect(b.reserve()).toBe(0);
    expect(b.stats().currentRps).toBe(1);
  });
});

describe('rate control over real HTTP and real time', () => {
  // Real time on a shared machine: CPU contention from other test forks can stall the event loop
  // for tens of milliseconds, which stretches the total span without saying anything about the
  // limiter. So the pacing is judged by the median gap between arrivals (robust to a few stalls),
  // and the limit by the overall rate, which must never exceed the configuration. The fake-clock
  // test below checks the pacing exactly.
  it('holds 100 rps within 10% over 50 requests', { retry: 2 }, async () => {
    const arrivals: number[] = [];
    server = await startTinyServer((_req, res) => {
      arrivals.push(performance.now());
      sendJson(res, 200, { ok: true });
    });
    // Enough slots in flight that only the token bucket paces the requests.
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY, rateLimit: { rps: 100, burst: 1, maxInFlight: 50 } });
    await Promise.all(Array.from({ length: 50 }, (_, i) => client.deleteAuthor(1, `r-${i}`)));
    expect(arrivals).toHaveLength(50);
    const gaps = arrivals.slice(1).map((t, i) => t - arrivals[i]!).sort((a, b) => a - b);
    const medianRps = 1000 / gaps[Math.floor(gaps.length / 2)]!;
    const overallRps = ((arrivals.length - 1) / (arrivals.at(-1)! - arrivals[0]!)) * 1000;
    expect(medianRps).toBeGreaterThan(90);
    expect(medianRps).toBeLessThan(110);
    expect(overallRps).toBeLessThan(110);
  });

  it('holds 100 rps exactly on a fake clock (requests one at a time)', async () => {
    const clock = fakeClock(0);
    const arrivals: number[] = [];
    server = await startTinyServer((_req, res) => {
      arrivals.push(clock.now());
      sendJson(res, 200, { ok: true });
    });
    const client = createClient({
      baseUrl: server.url,
      apiKey: API_KEY,
      now: clock.now,
      sleep: clock.sleep,
      rateLimit: { rps: 100, burst: 5, maxInFlight: 1 },
    });
    await Promise.all(Array.from({ length: 50 }, (_, i) => client.deleteAuthor(1, `r-${i}`)));
    // The burst of 5 goes at once; the other 45 follow 10 ms apart.
    expect(arrivals.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    expect(arrivals.at(-1)).toBe(450);
    const gaps = arrivals.slice(5).map((t, i) => t - arrivals[i + 4]!);
    expect(new Set(gaps)).toEqual(new Set([10]));
  });

  it('caps requests in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    server = await startTinyServer((_req, res) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      setTimeout(() => {
        inFlight -= 1;
        sendJson(res, 200, { ok: true });
      }, 20);
    });
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY, rateLimit: { rps: 1000, burst: 1000, maxInFlight: 3 } });
    await Promise.all(Array.from({ length: 12 }, (_, i) => client.deleteAuthor(1, `r-${i}`)));
    expect(peak).toBe(3);
  });

  it('slows down on 429 and reports it in stats', async () => {
    server = await startTinyServer((_req, res, index) =>
      index === 0 ? sendJson(res, 429, { detail: 'slow' }, { 'retry-after': '0' }) : sendJson(res, 200, { ok: true }),
    );
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY, rateLimit: { rps: 200, recoveryStep: 10 } });
    await client.deleteAuthor(1, 'a');
    const stats = client.stats();
    expect(stats.rateLimited).toBe(1);
    expect(stats.configuredRate).toBe(200);
    expect(stats.currentRate).toBe(110); // halved to 100, then one success adds 10
  });
});
