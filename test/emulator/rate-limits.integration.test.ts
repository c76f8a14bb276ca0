import { afterEach, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../src/client/endpoints.js';
import { createServerRateLimit, FixedWindow, SlidingWindowLog, TokenBucket } from '../../src/emulator/rate-limits.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { seededRandom } from '../../src/runtime/seeded-random.js';
import { call, rawPath, startTestEmulator } from './helpers.js';

let emulator: RunningEmulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

function manualClock(start = 0) {
  let now = start;
  return { now: () => now, set: (at: number) => void (now = at) };
}

describe('limit kinds', () => {
  it('token bucket: a burst passes, then one call per 1/rps', () => {
    const clock = manualClock();
    const bucket = new TokenBucket(10, 3, clock.now);
    expect([bucket.take(), bucket.take(), bucket.take()]).toEqual([0, 0, 0]);
    expect(bucket.take()).toBe(100);
    clock.set(100);
    expect([bucket.take(), bucket.take()]).toEqual([0, 100]);
  });

  it('fixed window: N calls per window aligned on the clock, refused until the window ends', () => {
    const clock = manualClock(1000);
    const window = new FixedWindow(3, 1000, clock.now);
    expect([window.take(), window.take(), window.take()]).toEqual([0, 0, 0]);
    clock.set(1400);
    expect(window.take()).toBe(600);
    // A new window admits N again at once — twice the limit across an edge is what this kind allows.
    clock.set(2000);
    expect([window.take(), window.take(), window.take(), window.take()]).toEqual([0, 0, 0, 1000]);
  });

  it('sliding window: N calls in any window, refused until the oldest leaves it', () => {
    const clock = manualClock();
    const log = new SlidingWindowLog(3, 1000, clock.now);
    for (const at of [0, 100, 200]) {
      clock.set(at);
      expect(log.take()).toBe(0);
    }
    clock.set(999);
    expect(log.take()).toBe(1);
    clock.set(1000);
    expect(log.take()).toBe(0);
    clock.set(1050);
    expect(log.take()).toBe(50);
  });

  it('sliding window: for random arrivals, admits exactly the calls a brute-force count admits', () => {
    for (const seed of [1, 2, 3]) {
      const random = seededRandom(seed);
      const clock = manualClock();
      const limit = 5;
      const log = new SlidingWindowLog(limit, 1000, clock.now);
      const admitted: number[] = [];
      let at = 0;
      for (let i = 0; i < 2000; i++) {
        at += Math.floor(random() * 300);
        clock.set(at);
        const inWindow = admitted.filter((t) => at - t < 1000).length;
        const waitMs = log.take();
        expect(waitMs === 0).toBe(inWindow < limit);
        if (waitMs === 0) admitted.push(at);
      }
      expect(admitted.length).toBeGreaterThan(100);
    }
  });

  it('a limit made from a spec plays its kind; hidden is a sliding window', () => {
    const clock = manualClock();
    const hidden = createServerRateLimit({ kind: 'hidden', rps: 2 }, clock.now);
    expect([hidden.admit().waitMs, hidden.admit().waitMs]).toEqual([0, 0]);
    expect(hidden.admit()).toMatchObject({ waitMs: 1000, spec: { kind: 'hidden' } });
    // A tiny rate still admits one call per window.
    const tiny = createServerRateLimit({ kind: 'fixed-window', rps: 0.1 }, clock.now);
    expect([tiny.admit().waitMs, tiny.admit().waitMs > 0]).toEqual([0, true]);
  });
});

describe('the 429 of each kind over HTTP', () => {
  const get = (e: RunningEmulator) => call(e, 'GET', rawPath(ENDPOINTS.listCustomFields));

  it('sliding window: Retry-After and the limit in the message', async () => {
    let now = 5_000;
    emulator = await startTestEmulator({ rps: 2, rateLimitKind: 'sliding-window', clock: () => now });
    expect((await get(emulator)).status).toBe(200);
    now += 300;
    expect((await get(emulator)).status).toBe(200);
    const refused = await get(emulator);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body.error.message).toContain('2 requests per 1000 ms');
    expect(emulator.stats.snapshot().rateLimited).toBe(1);
  });

  it('hidden: a 429 with no Retry-After and no limit in the message', async () => {
    emulator = await startTestEmulator({ rps: 1, rateLimitKind: 'hidden', clock: () => 0 });
    expect((await get(emulator)).status).toBe(200);
    const refused = await get(emulator);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBeNull();
    expect(JSON.stringify(refused.body)).not.toMatch(/\d+ requests/);
  });

  it('the kind and window change at run time through /_emulator/faults', async () => {
    let now = 0;
    emulator = await startTestEmulator({ clock: () => now });
    const changed = await call(emulator, 'POST', '/_emulator/faults', { key: null, body: { rps: 2, rateLimitKind: 'fixed-window', windowMs: 2000 } });
    expect(changed.body).toMatchObject({ rps: 2, rateLimitKind: 'fixed-window', windowMs: 2000 });
    // 2 rps over a 2 s window: 4 calls per window.
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await get(emulator)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    now = 2000;
    expect((await get(emulator)).status).toBe(200);
    const refused = await call(emulator, 'POST', '/_emulator/faults', { key: null, body: { rateLimitKind: 'round-robin' } });
    expect(refused.status).toBe(400);
  });
});
