/** The rate limiter in a real client over real HTTP: in-flight cap, 429 retries, the emulator's hidden limit. */
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { API_KEY, sendJson, startTinyServer, type TinyServer } from './helpers.js';
import { DEMO_API_KEY } from '../support/cli.js';

let server: TinyServer | undefined;
let emulator: RunningEmulator | undefined;
afterEach(async () => {
  await server?.close();
  await emulator?.close();
  server = undefined;
  emulator = undefined;
});

describe('rate control over real HTTP', () => {
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
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY, rateLimit: { rps: 1000, maxInFlight: 3 } });
    await Promise.all(Array.from({ length: 12 }, (_, i) => client.deleteAuthor(1, `r-${i}`)));
    expect(peak).toBe(3);
  });

  it('a 429 is retried on the pace, without sleeping its one-second Retry-After, and counted', async () => {
    server = await startTinyServer((_req, res, index) =>
      index === 0 ? sendJson(res, 429, { detail: 'slow' }, { 'retry-after': '1' }) : sendJson(res, 200, { ok: true }),
    );
    const slept: number[] = [];
    const client = createClient({
      baseUrl: server.url,
      apiKey: API_KEY,
      sleep: async (ms) => void slept.push(ms),
      rateLimit: { rps: 200 },
    });
    await client.deleteAuthor(1, 'a');
    expect(server.requests).toHaveLength(2);
    expect(slept.filter((ms) => ms >= 1000)).toEqual([]);
    expect(client.stats()).toMatchObject({ rateLimited: 1, configuredRate: 200 });
  });

  it('writes every record through the hidden limit of the emulator (no Retry-After, no max_rps)', async () => {
    emulator = await startEmulator({ rps: 20, rateLimitKind: 'hidden' });
    const client = createClient({ baseUrl: emulator.url, apiKey: DEMO_API_KEY, rateLimit: { maxInFlight: 8 } });
    const results = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => client.putAuthor(501, `h-${i}`, { name: `Expert ${i}` })));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(emulator.stats.snapshot().writes.succeeded).toBe(60);
    // The pace found a limit near 20 (the sliding window admits 20 in any second).
    const found = client.stats().currentRate;
    expect(found).toBeGreaterThan(5);
    expect(found).toBeLessThanOrEqual(40);
  });
});
