import { afterEach, describe, expect, it } from 'vitest';
import {
  AmbiguousGroupCreationError,
  ClientInputError,
  createClient,
  ForbiddenError,
  InvalidRequestError,
  NetworkError,
  ServerError,
  TimeoutError,
} from '../../src/client/index.js';
import { EXIT } from '../../src/errors/user-facing-error.js';
import { waitFor } from '../support/wait-for.js';
import { API_KEY, closedPort, fakeClock, sendJson, startTinyServer, type TinyServer } from './helpers.js';

let server: TinyServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request = { group_name: 'Cardiology pool', owner_team: 'Editorial Office', editor_teams: [], viewer_teams: [] };

function client(url: string, timeoutMs = 5000) {
  const clock = fakeClock();
  return createClient({
    baseUrl: url,
    apiKey: API_KEY,
    now: clock.now,
    sleep: clock.sleep,
    random: () => 0.5,
    timeoutMs,
    retry: { maxAttempts: 4 },
    rateLimit: { rps: 1000, burst: 1000 },
  });
}

describe('group creation is not idempotent', () => {
  it.each([
    ['a 500 answer', (res: Parameters<Parameters<typeof startTinyServer>[0]>[1]) => sendJson(res, 500, { detail: 'boom' }), ServerError],
    ['a 503 answer', (res: Parameters<Parameters<typeof startTinyServer>[0]>[1]) => sendJson(res, 503, { detail: 'later' }), ServerError],
    ['a connection reset after sending', (res: Parameters<Parameters<typeof startTinyServer>[0]>[1]) => res.socket?.destroy(), NetworkError],
  ])('%s is ambiguous and never retried', async (_name, answer, causeClass) => {
    server = await startTinyServer((_req, res) => answer(res));
    const error = await client(server.url).createGroup(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AmbiguousGroupCreationError);
    const ambiguous = error as AmbiguousGroupCreationError;
    expect(ambiguous.message).toContain('a group may have been created');
    expect(ambiguous.message).toContain('Cardiology pool');
    expect(ambiguous.groupName).toBe('Cardiology pool');
    expect(ambiguous.cause).toBeInstanceOf(causeClass);
    expect(ambiguous.exitCode).toBe(EXIT.unavailable);
    expect(ambiguous.hint).toMatch(/Check in the service UI/);
    expect(server.requests).toHaveLength(1);
  });

  it('stopping the call after the request was sent (Ctrl-C) is ambiguous, not a plain abort', async () => {
    server = await startTinyServer(() => undefined); // receives the request, never answers
    const controller = new AbortController();
    const pending = client(server.url).createGroup(request, { signal: controller.signal }).catch((e: unknown) => e);
    await waitFor(() => server!.requests.length > 0, { what: 'the request to reach the server' });
    controller.abort();
    const error = await pending;
    expect(error).toBeInstanceOf(AmbiguousGroupCreationError);
    expect((error as AmbiguousGroupCreationError).hint).toMatch(/Check in the service UI/);
    expect(server.requests).toHaveLength(1);
  });

  it('a timeout after sending is ambiguous and never retried', async () => {
    server = await startTinyServer(() => undefined); // receives the request, never answers
    const c = client(server.url, 250);
    const error = await c.createGroup(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AmbiguousGroupCreationError);
    expect((error as AmbiguousGroupCreationError).cause).toBeInstanceOf(TimeoutError);
    expect(c.stats().requests).toBe(1);
    expect(server.requests).toHaveLength(1);
  });

  it('a 429 proves nothing was created, so it is retried', async () => {
    server = await startTinyServer((_req, res, index) =>
      index < 2 ? sendJson(res, 429, { detail: 'slow' }, { 'retry-after': '1' }) : sendJson(res, 200, { authors_group_id: 777 }),
    );
    const c = client(server.url);
    await expect(c.createGroup(request)).resolves.toMatchObject({ authors_group_id: 777 });
    expect(server.requests).toHaveLength(3);
    expect(c.stats()).toMatchObject({ rateLimited: 2, retries: 2 });
  });

  it('connection refused proves nothing was sent, so it is retried and ends as a plain NetworkError', async () => {
    const port = await closedPort();
    const c = client(`http://127.0.0.1:${port}`);
    const error = await c.createGroup(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).not.toBeInstanceOf(AmbiguousGroupCreationError);
    expect(c.stats().requests).toBe(4);
  });

  it.each([
    [400, InvalidRequestError],
    [403, ForbiddenError],
  ])('a definite refusal (%i) is reported as itself, not as ambiguous', async (status, errorClass) => {
    server = await startTinyServer((_req, res) => sendJson(res, status, { ok: false, error: { code: 'no', message: 'team Nope does not exist' } }));
    const error = await client(server.url).createGroup(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errorClass);
    expect(server.requests).toHaveLength(1);
  });

  it('sends the spec body with X-ApiKey', async () => {
    server = await startTinyServer((_req, res) => sendJson(res, 200, { authors_group_id: 9 }));
    await client(server.url).createGroup({ ...request, editor_teams: ['Reviewers Desk'] });
    const seen = server.requests[0]!;
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/api/external/authors-group/create/');
    expect(seen.headers['x-apikey']).toBe(API_KEY);
    expect(seen.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen.body.toString())).toEqual({ ...request, editor_teams: ['Reviewers Desk'] });
  });

  it.each([
    ['no body at all', undefined, 'invalid group creation request: (root): '],
    ['an empty name', { ...request, group_name: '' }, 'invalid group creation request: group_name: '],
  ])('%s is refused before anything is sent', async (_what, body, message) => {
    server = await startTinyServer((_req, res) => sendJson(res, 200, { authors_group_id: 9 }));
    const error = await client(server.url).createGroup(body as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientInputError);
    expect((error as Error).message).toContain(message);
    expect(server.requests).toHaveLength(0);
  });
});
