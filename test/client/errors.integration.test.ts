import { Agent, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AuthError,
  ClientInputError,
  createClient,
  ForbiddenError,
  InvalidRequestError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  RequestAbortedError,
  ResponseShapeError,
  ServerError,
  ServiceError,
  TimeoutError,
  UnexpectedResponseError,
  type ServiceClient,
} from '../../src/client/index.js';
import { EXIT } from '../../src/errors/user-facing-error.js';
import { API_KEY, closedPort, fakeClock, sendJson, startTinyServer, type TinyServer } from './helpers.js';

let server: TinyServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function clientFor(url: string, extra: Partial<Parameters<typeof createClient>[0]> = {}): ServiceClient {
  const clock = fakeClock();
  return createClient({
    baseUrl: url,
    apiKey: API_KEY,
    now: clock.now,
    sleep: clock.sleep,
    random: () => 0,
    retry: { maxAttempts: 2 },
    rateLimit: { rps: 1000, burst: 100 },
    ...extra,
  });
}

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
}

describe('status → error class', () => {
  it.each([
    [400, InvalidRequestError, EXIT.usage, 1],
    [422, InvalidRequestError, EXIT.usage, 1],
    [401, AuthError, EXIT.auth, 1],
    [403, ForbiddenError, EXIT.auth, 1],
    [404, NotFoundError, EXIT.usage, 1],
    [429, RateLimitedError, EXIT.unavailable, 20], // 429s have their own budget (maxRateLimitedAttempts)
    [500, ServerError, EXIT.unavailable, 2],
    [502, ServerError, EXIT.unavailable, 2],
    [503, ServerError, EXIT.unavailable, 2],
    [408, ServerError, EXIT.unavailable, 2],
    [409, ServiceError, EXIT.usage, 1],
    [302, UnexpectedResponseError, EXIT.usage, 1],
  ])('%i → %o with exit code %i after %i attempt(s)', async (status, errorClass, exitCode, attempts) => {
    server = await startTinyServer((_req, res) =>
      sendJson(res, status, { ok: false, error: { code: `code_${status}`, message: `refused with ${status}` } }),
    );
    const error = await failure(clientFor(server.url).getAuthor(501, 'a/b c'));
    expect(error).toBeInstanceOf(errorClass);
    expect(error.exitCode).toBe(exitCode);
    expect(error.status).toBe(status);
    expect(error.method).toBe('GET');
    expect(error.path).toBe('/api/external/author-from-group/501/a%2Fb%20c/');
    expect(error.serviceCode).toBe(`code_${status}`);
    expect(error.message).toContain(`answered ${status}`);
    expect(error.message).toContain(`refused with ${status}`);
    expect(error.bodyExcerpt).toContain(`refused with ${status}`);
    if (error.constructor !== ServiceError) expect(error.hint).toBeTruthy();
    expect(server.requests).toHaveLength(attempts);
  });

  it('RateLimitedError carries the Retry-After delay', async () => {
    server = await startTinyServer((_req, res) => sendJson(res, 429, { detail: 'slow down' }, { 'retry-after': '7' }));
    const error = await failure(clientFor(server.url, { retry: { maxAttempts: 1 } }).listCustomFields());
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterMs).toBe(7000);
    expect(error.message).toContain('slow down');
  });
});

describe('answers that are not the promised JSON', () => {
  const html = '<!DOCTYPE html><html><head><title>Log in</title></head><body><form>Sign in to continue</form></body></html>';

  it('an HTML login page with 200 names status, content type and a snippet', async () => {
    server = await startTinyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html);
    });
    const error = await failure(clientFor(server.url).listCustomFields());
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error.message).toContain('answered 200 with text/html');
    expect(error.message).toContain('<title>Log in</title>');
    expect(error.contentType).toBe('text/html; charset=utf-8');
    expect(error.hint).toMatch(/base-url/);
    expect(server.requests).toHaveLength(1);
  });

  it('an HTML 401 is an AuthError that shows the content type and snippet', async () => {
    server = await startTinyServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'text/html' });
      res.end(html);
    });
    const error = await failure(clientFor(server.url).listCustomFields());
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toContain('401');
    expect(error.message).toContain('text/html');
    expect(error.message).toContain('Sign in to continue');
  });

  it('a long body is cut to a short excerpt', async () => {
    server = await startTinyServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('x'.repeat(10_000));
    });
    const error = await failure(clientFor(server.url, { retry: { maxAttempts: 1 } }).listCustomFields());
    expect(error.bodyExcerpt!.length).toBeLessThanOrEqual(201);
    expect(error.message.length).toBeLessThan(400);
  });

  it('a missing required field is a ResponseShapeError naming the field and endpoint', async () => {
    server = await startTinyServer((_req, res) =>
      sendJson(res, 200, { name: 'Ada', author: { id: 1, service_url: 'u', name: 'Ada', articles_count: 3, h_index: 'high', last_articles: [] } }),
    );
    const error = await failure(clientFor(server.url).getAuthor(501, 'onc-201'));
    expect(error).toBeInstanceOf(ResponseShapeError);
    expect((error as ResponseShapeError).fieldPaths).toEqual(['author.h_index']);
    expect(error.message).toContain('getAuthor');
    expect(error.message).toContain('author.h_index');
  });

  it('a created group without its id is a ResponseShapeError', async () => {
    server = await startTinyServer((_req, res) => sendJson(res, 200, { id: 5 }));
    const error = await failure(
      clientFor(server.url).createGroup({ group_name: 'g', owner_team: 't', editor_teams: [], viewer_teams: [] }),
    );
    expect(error.message).toContain('authors_group_id');
  });

  it('extra fields are tolerated', async () => {
    server = await startTinyServer((_req, res) => sendJson(res, 200, { ok: true, request_id: 'r-1' }));
    await expect(clientFor(server.url).deleteAuthor(1, 'x')).resolves.toMatchObject({ ok: true });
  });
});

describe('no answer at all', () => {
  it('connection refused is a NetworkError, retried', async () => {
    const port = await closedPort();
    const client = clientFor(`http://127.0.0.1:${port}`, { retry: { maxAttempts: 3 } });
    const error = await failure(client.listCustomFields());
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).code).toBe('ECONNREFUSED');
    expect(error.exitCode).toBe(EXIT.unavailable);
    expect(client.stats()).toMatchObject({ requests: 3, retries: 2 });
  });

  it('a connection reset is a NetworkError', async () => {
    server = await startTinyServer((_req, res) => void res.socket?.destroy());
    const error = await failure(clientFor(server.url).deleteAuthor(1, 'x'));
    expect(error).toBeInstanceOf(NetworkError);
    expect(server.requests).toHaveLength(2);
  });

  it('no answer within the timeout is a TimeoutError', async () => {
    server = await startTinyServer(() => undefined); // never answers
    const client = clientFor(server.url, { timeoutMs: 50 });
    const error = await failure(client.listCustomFields());
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).timeoutMs).toBe(50);
    expect(error.exitCode).toBe(EXIT.unavailable);
    expect(client.stats()).toMatchObject({ requests: 2, retries: 1 }); // a timeout is retried
  });

  it('the per-call timeout overrides the client one', async () => {
    server = await startTinyServer(() => undefined);
    const error = await failure(clientFor(server.url, { timeoutMs: 60_000 }).listCustomFields({ timeoutMs: 30 }));
    expect(error).toBeInstanceOf(TimeoutError);
  });

  it("the caller's AbortSignal stops the call without retries", async () => {
    const controller = new AbortController();
    server = await startTinyServer(() => controller.abort()); // stop once the request arrived; never answer
    const client = clientFor(server.url);
    const error = await failure(client.listCustomFields({ signal: controller.signal }));
    expect(error).toBeInstanceOf(RequestAbortedError);
    expect(error.exitCode).toBe(EXIT.interrupted);
    expect(server.requests).toHaveLength(1);
    expect(client.stats()).toMatchObject({ requests: 1, retries: 0 });
  });
});

describe('transport', () => {
  it('sends through an injected undici dispatcher', async () => {
    server = await startTinyServer((_req, res) => sendJson(res, 200, { ok: true }));
    const dispatched: string[] = [];
    class CountingAgent extends Agent {
      override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
        dispatched.push(`${options.method} ${options.path}`);
        return super.dispatch(options, handler);
      }
    }
    const agent = new CountingAgent();
    try {
      await clientFor(server.url, { dispatcher: agent }).deleteAuthor(7, 'ä b');
      expect(dispatched).toEqual(['DELETE /api/external/author-from-group/7/%C3%A4%20b/']);
      expect(server.requests[0]!.headers['x-apikey']).toBe(API_KEY);
    } finally {
      await agent.close();
    }
  });
});

describe('refused before sending', () => {
  it.each([
    ['a non-positive group id', (c: ServiceClient) => c.getAuthor(0, 'x')],
    ['an empty client id', (c: ServiceClient) => c.getAuthor(1, '')],
    ['a dot-dot client id', (c: ServiceClient) => c.deleteAuthor(1, '..')],
    ['a full POST without name', (c: ServiceClient) => c.putAuthor(1, 'x', { emails: [] } as never)],
    ['a custom field of the wrong shape', (c: ServiceClient) => c.patchAuthor(1, 'x', { 'f-1': { nested: true } } as never)],
    ['a group without owner team', (c: ServiceClient) => c.createGroup({ group_name: 'g' } as never)],
  ])('%s', async (_name, run) => {
    server = await startTinyServer((_req, res) => sendJson(res, 200, { ok: true }));
    const error = await run(clientFor(server.url)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ClientInputError);
    expect(server.requests).toHaveLength(0);
  });

  it('names the offending field', async () => {
    server = await startTinyServer((_req, res) => sendJson(res, 200, { ok: true }));
    await expect(clientFor(server.url).putAuthor(1, 'x', { name: 'A', emails: 'a@b.c' } as never)).rejects.toThrow(/emails/);
  });

  it('refuses an answer larger than the cap, and the client keeps working', async () => {
    server = await startTinyServer((req, res) =>
      req.url?.includes('/big/') ? sendJson(res, 200, { ok: true, padding: 'x'.repeat(5000) }) : sendJson(res, 200, { ok: true }),
    );
    const c = createClient({ baseUrl: server.url, apiKey: API_KEY, maxResponseBytes: 1000, rateLimit: { rps: 1000, burst: 1000 } });
    const error = await c.deleteAuthor(1, 'big').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect((error as Error).message).toContain('more than 1000 bytes');
    await expect(c.deleteAuthor(1, 'small')).resolves.toEqual({ ok: true });
  });
});
