import { afterEach, describe, expect, it } from 'vitest';
import { createClient, InvalidRequestError, ServerError, RateLimitedError } from '../../src/client/index.js';
import { API_KEY, fakeClock, sendJson, startTinyServer, type TinyServer } from './helpers.js';

let server: TinyServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Answers each request with the next scripted status; the last one repeats. */
function scripted(steps: Array<{ status: number; headers?: Record<string, string> }>) {
  return startTinyServer((_req, res, index) => {
    const step = steps[Math.min(index, steps.length - 1)]!;
    if (step.status === 200) sendJson(res, 200, { ok: true });
    else sendJson(res, step.status, { ok: false, error: { code: 'x', message: `status ${step.status}` } }, step.headers);
  });
}

function client(url: string, clock: ReturnType<typeof fakeClock>, retry = {}) {
  return createClient({
    baseUrl: url,
    apiKey: API_KEY,
    now: clock.now,
    sleep: clock.sleep,
    random: () => 0.5,
    retry: { baseDelayMs: 100, maxDelayMs: 10_000, maxAttempts: 5, maxElapsedMs: 60_000, ...retry },
    rateLimit: { rps: 1000, burst: 1000 },
  });
}

describe('retries with scaled-down time', () => {
  it('retries 503 and 502 with exponential full-jitter backoff, then succeeds', async () => {
    server = await scripted([{ status: 503 }, { status: 502 }, { status: 500 }, { status: 200 }]);
    const clock = fakeClock();
    const c = client(server.url, clock);
    await expect(c.deleteAuthor(1, 'x')).resolves.toEqual({ ok: true });
    expect(server.requests).toHaveLength(4);
    expect(clock.slept).toEqual([50, 100, 200]); // random 0.5 × 100·2^(n-1)
    expect(c.stats()).toMatchObject({ calls: 1, requests: 4, retries: 3, failures: 0, rateLimited: 0 });
  });

  it('Retry-After in seconds wins over backoff', async () => {
    server = await scripted([{ status: 429, headers: { 'retry-after': '3' } }, { status: 200 }]);
    const clock = fakeClock();
    const c = client(server.url, clock);
    await c.deleteAuthor(1, 'x');
    expect(clock.slept[0]).toBe(3000);
    expect(c.stats().rateLimited).toBe(1);
  });

  it('Retry-After as an HTTP date wins over backoff', async () => {
    const clock = fakeClock();
    const at = new Date(clock.now() + 4000).toUTCString();
    server = await scripted([{ status: 503, headers: { 'retry-after': at } }, { status: 200 }]);
    await client(server.url, clock).deleteAuthor(1, 'x');
    expect(clock.slept[0]).toBe(4000);
  });

  it('gives up after maxAttempts with the last error', async () => {
    server = await scripted([{ status: 500 }]);
    const clock = fakeClock();
    const c = client(server.url, clock, { maxAttempts: 3 });
    await expect(c.deleteAuthor(1, 'x')).rejects.toBeInstanceOf(ServerError);
    expect(server.requests).toHaveLength(3);
    expect(c.stats()).toMatchObject({ requests: 3, retries: 2, failures: 1 });
  });

  it('gives up when the next wait would pass the total time budget', async () => {
    server = await scripted([{ status: 429, headers: { 'retry-after': '30' } }]);
    const clock = fakeClock();
    const error = await client(server.url, clock, { maxElapsedMs: 45_000 }).deleteAuthor(1, 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterMs).toBe(30_000);
    expect(server.requests).toHaveLength(2); // 0 s, 30 s; a third at 60 s would pass 45 s
  });

  it.each([400, 401, 403, 404, 422])('never retries %i', async (status) => {
    server = await scripted([{ status }, { status: 200 }]);
    const clock = fakeClock();
    await expect(client(server.url, clock).deleteAuthor(1, 'x')).rejects.toThrow(String(status));
    expect(server.requests).toHaveLength(1);
    expect(clock.slept).toEqual([]);
  });

  it('a 400 is an InvalidRequestError carrying the service message', async () => {
    server = await scripted([{ status: 400 }]);
    await expect(client(server.url, fakeClock()).deleteAuthor(1, 'x')).rejects.toBeInstanceOf(InvalidRequestError);
  });

  it('scaled-down backoff: with base 5 ms, two retries wait a few milliseconds, not seconds', async () => {
    server = await scripted([{ status: 503 }, { status: 503 }, { status: 200 }]);
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
    };
    const c = createClient({ baseUrl: server.url, apiKey: API_KEY, retry: { baseDelayMs: 5 }, rateLimit: { rps: 1000 }, sleep, random: () => 0.5 });
    await c.deleteAuthor(1, 'x');
    expect(c.stats().retries).toBe(2);
    // The backoff waits (the rate limiter's, if any, are zero at this pace) stay near the base.
    expect(waits.filter((ms) => ms > 0)).toHaveLength(2);
    for (const ms of waits) expect(ms).toBeLessThan(100);
  });

  it('never lets one huge Retry-After stall the client beyond the time budget of a call', async () => {
    server = await scripted([{ status: 429, headers: { 'retry-after': '3600' } }, { status: 200 }]);
    const clock = fakeClock();
    const c = client(server.url, clock);
    await expect(c.deleteAuthor(1, 'a')).rejects.toBeInstanceOf(RateLimitedError);
    const before = clock.now();
    await c.deleteAuthor(1, 'b');
    // The next call waits out the pause, capped at maxElapsedMs (60 s), not an hour.
    expect(clock.now() - before).toBeLessThanOrEqual(60_000);
    expect(clock.now() - before).toBeGreaterThan(0);
  });
});
