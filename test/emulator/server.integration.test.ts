/** Server behaviour: routing errors, body limits, rate limit, seeded faults, test controls. */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fetch } from 'undici';
import { ENDPOINTS, routeKey } from '../../src/client/endpoints.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { call, KEY, rawPath, recordPath, startTestEmulator } from './helpers.js';

const LIST = rawPath(ENDPOINTS.listCustomFields);
const running: RunningEmulator[] = [];
async function start(options: Parameters<typeof startTestEmulator>[0] = {}): Promise<RunningEmulator> {
  const emulator = await startTestEmulator(options);
  running.push(emulator);
  return emulator;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

/** Outcome of one call: the status, or 'reset' when the connection died without an answer. */
async function outcome(emulator: RunningEmulator, path = LIST): Promise<number | 'reset'> {
  try {
    const res = await fetch(`${emulator.url}${path}`, { headers: { 'X-ApiKey': KEY } });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 'reset';
  }
}

describe('routing and bad input', () => {
  it('answers 404 JSON for an unknown path and for a missing trailing slash', async () => {
    const emulator = await start();
    for (const path of ['/api/external/nope/', '/api/external/custom-fields/all']) {
      const res = await call(emulator, 'GET', path);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ ok: false, error: { code: 'not_found' } });
    }
  });

  it('answers 405 with Allow for a known path with the wrong method', async () => {
    const emulator = await start();
    const res = await call(emulator, 'PUT', recordPath(1, 'x'), { body: { name: 'A' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('POST');
  });

  it('answers the HTML login page on unknown paths (200) and bad keys (401) when asked', async () => {
    const emulator = await start({ htmlLoginPage: true });
    const misrouted = await call(emulator, 'GET', '/api/external/custom-fields/all');
    expect(misrouted.status).toBe(200);
    expect(misrouted.headers.get('content-type')).toContain('text/html');
    expect(misrouted.body).toContain('<form');
    const unauthorized = await call(emulator, 'GET', LIST, { key: 'wrong-key-123456' });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('content-type')).toContain('text/html');
  });

  it('answers 413 for a body over the limit and keeps serving', async () => {
    const emulator = await start({ maxBodyBytes: 1024 });
    const res = await call(emulator, 'POST', rawPath(ENDPOINTS.createGroup), { rawBody: JSON.stringify({ group_name: 'x'.repeat(5000) }) });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
    expect((await call(emulator, 'GET', LIST)).status).toBe(200);
  });

  it('survives garbage on the socket', async () => {
    const emulator = await start();
    await new Promise<void>((resolve) => {
      const socket = connect(emulator.port, '127.0.0.1', () => socket.end('NOT HTTP AT ALL\r\n\r\n'));
      socket.on('data', () => undefined);
      socket.on('close', () => resolve());
      socket.on('error', () => resolve());
    });
    expect((await call(emulator, 'GET', LIST)).status).toBe(200);
  });

  it('refuses to bind a non-loopback host unless allowRemote', async () => {
    await expect(startEmulator({ host: '0.0.0.0' })).rejects.toThrow(/not a loopback address/);
  });
});

describe('rate limit (token bucket, injected clock)', () => {
  it('admits the burst, answers 429 with Retry-After beyond it, and refills at rps', async () => {
    let now = 1_000_000;
    const emulator = await start({ rps: 4, clock: () => now });
    const first = [];
    for (let i = 0; i < 6; i++) first.push(await call(emulator, 'GET', LIST));
    expect(first.map((r) => r.status)).toEqual([200, 200, 200, 200, 429, 429]);
    expect(first[4]!.headers.get('retry-after')).toBe('1');
    expect(first[4]!.body.error.code).toBe('rate_limited');
    now += 250; // one token at 4 rps
    expect((await call(emulator, 'GET', LIST)).status).toBe(200);
    expect((await call(emulator, 'GET', LIST)).status).toBe(429);
    const stats = emulator.stats.snapshot();
    expect(stats.rateLimited).toBe(3);
    expect(stats.calls[`GET ${LIST}`]).toEqual({ 200: 5, 429: 3 });
  });

  it('never limits /_emulator/ controls', async () => {
    const now = 0;
    const emulator = await start({ rps: 1, clock: () => now });
    await call(emulator, 'GET', LIST);
    for (let i = 0; i < 5; i++) expect((await call(emulator, 'GET', '/_emulator/stats', { key: null })).status).toBe(200);
  });

  it('can be changed at run time through POST /_emulator/faults', async () => {
    const now = 0;
    const emulator = await start({ clock: () => now });
    expect((await call(emulator, 'POST', '/_emulator/faults', { key: null, body: { rps: 1 } })).body).toMatchObject({ rps: 1 });
    expect([await outcome(emulator), await outcome(emulator)]).toEqual([200, 429]);
    await call(emulator, 'POST', '/_emulator/faults', { key: null, body: { rps: null } });
    expect([await outcome(emulator), await outcome(emulator)]).toEqual([200, 200]);
  });
});

describe('seeded faults', () => {
  async function sequence(seed: number, n: number): Promise<Array<number | 'reset'>> {
    const emulator = await start({ seed, faultRate: 0.5 });
    const out: Array<number | 'reset'> = [];
    for (let i = 0; i < n; i++) out.push(await outcome(emulator));
    return out;
  }

  it('the same seed gives the same faults; another seed gives others', async () => {
    const a = await sequence(42, 40);
    const b = await sequence(42, 40);
    const c = await sequence(7, 40);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    // faultRate 0.5 spreads over 500/502/503/reset; each kind shows up in 40 calls with this seed.
    expect(new Set(a)).toEqual(new Set([200, 500, 502, 503, 'reset']));
  });

  it.each([
    ['status500', 500],
    ['status502', 502],
    ['status503', 503],
    ['status429', 429],
  ] as const)('faults.%s = 1 answers %i every time', async (kind, status) => {
    const emulator = await start({ faults: { [kind]: 1 } });
    const res = await call(emulator, 'GET', LIST);
    expect(res.status).toBe(status);
    if (status === 503 || status === 429) expect(res.headers.get('retry-after')).toBe('1');
    expect(emulator.stats.snapshot().faults[kind]).toBe(1);
  });

  it('faults.reset = 1 destroys the connection without an answer', async () => {
    const emulator = await start({ faults: { reset: 1 } });
    expect(await outcome(emulator)).toBe('reset');
    expect(emulator.stats.snapshot().calls[`GET ${LIST}`]).toEqual({ reset: 1 });
  });

  it("phase 'before' leaves the world unchanged; phase 'after' applies the write and still fails", async () => {
    const body = { group_name: 'G', owner_team: 'Editors', editor_teams: [], viewer_teams: [] };
    const before = await start({ faults: { status502: 1 }, faultPhase: 'before' });
    expect((await call(before, 'POST', rawPath(ENDPOINTS.createGroup), { body })).status).toBe(502);
    expect(before.world.orgs[0]!.groups.size).toBe(1); // only the fixture's preset group

    const after = await start({ faults: { status502: 1 }, faultPhase: 'after' });
    expect((await call(after, 'POST', rawPath(ENDPOINTS.createGroup), { body })).status).toBe(502);
    expect(after.world.orgs[0]!.groups.size).toBe(2);
  });

  it('adds latency: a call sent first to a slow emulator answers after one sent later to a prompt one', async () => {
    const slow = await start({ latencyMs: 1500 });
    const prompt = await start();
    const order: string[] = [];
    const slowCall = call(slow, 'GET', LIST).then(() => order.push('slow'));
    await call(prompt, 'GET', LIST).then(() => order.push('prompt'));
    await slowCall;
    expect(order).toEqual(['prompt', 'slow']);
  });

  it('never faults /_emulator/ controls', async () => {
    const emulator = await start({ faultRate: 1 });
    expect((await call(emulator, 'GET', '/_emulator/stats', { key: null })).status).toBe(200);
  });
});

describe('test controls', () => {
  it('stats count calls by method, route pattern and status, and write totals', async () => {
    const emulator = await start();
    await call(emulator, 'POST', recordPath(77, 'a'), { body: { name: 'A' } });
    await call(emulator, 'POST', recordPath(77, 'b'), { body: { name: 'B' } });
    await call(emulator, 'POST', recordPath(77, 'c'), { body: { name: '' } });
    await call(emulator, 'GET', recordPath(77, 'a'));
    await call(emulator, 'GET', '/nowhere');
    const stats = (await call(emulator, 'GET', '/_emulator/stats', { key: null })).body;
    expect(stats.total).toBe(5);
    expect(stats.calls).toEqual({
      [routeKey(ENDPOINTS.putAuthor)]: { 200: 2, 400: 1 },
      [routeKey(ENDPOINTS.getAuthor)]: { 200: 1 },
      'GET (unmatched)': { 404: 1 },
    });
    expect(stats.writes).toEqual({ total: 3, succeeded: 2 });
  });

  it('state shows groups and records; reset restores the fixture and zeroes stats', async () => {
    const emulator = await start();
    await call(emulator, 'POST', recordPath(77, 'new'), { body: { name: 'New' } });
    await call(emulator, 'DELETE', recordPath(77, 'pre-1'));
    let state = (await call(emulator, 'GET', '/_emulator/state?org=1', { key: null })).body;
    expect(Object.keys(state.orgs[0].groups[0].records)).toEqual(['new']);

    expect((await call(emulator, 'POST', '/_emulator/reset', { key: null })).body).toEqual({ ok: true });
    state = (await call(emulator, 'GET', '/_emulator/state?org=1', { key: null })).body;
    expect(Object.keys(state.orgs[0].groups[0].records)).toEqual(['pre-1']);
    expect(emulator.stats.snapshot().total).toBe(0);
  });

  it('POST /_emulator/faults refuses unknown settings with 400', async () => {
    const emulator = await start();
    const res = await call(emulator, 'POST', '/_emulator/faults', { key: null, body: { faultRate: 2 } });
    expect(res.status).toBe(400);
    expect((await call(emulator, 'POST', '/_emulator/faults', { key: null, body: { bogus: 1 } })).status).toBe(400);
  });

  it('close() is idempotent and frees the port', async () => {
    const emulator = await startTestEmulator();
    await emulator.close();
    await emulator.close();
    expect(await outcome(emulator)).toBe('reset');
  });
});
