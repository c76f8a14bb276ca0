/**
 * The emulator's HTTP server (node:http): a faithful local implementation of the service
 * (docs/service-contract.md) plus test controls under `/_emulator/`.
 *
 * Per service call: read the body (size-limited) → rate limit (429, rate-limits.ts) → fault dice → latency →
 * route match (404/405) → X-ApiKey (401) → handler → answer. Calls under `/_emulator/` skip the
 * bucket, faults, latency and stats.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { isIP } from 'node:net';
import { loadFixture, type Fixture } from './fixture.js';
import { EmulatorHttpError, errorReply, HTML_LOGIN_PAGE, type Reply } from './reply.js';
import { Router, type Route, type RouteContext } from './router.js';
import { allRoutes } from './routes/index.js';
import { rateLimitedReply, type RateLimitKind } from './rate-limits.js';
import { EmulatorRuntime, type EmulatorStats, type FaultPhase, type FaultProbabilities } from './runtime.js';
import { World } from './world.js';
import { quirksOf, shapeErrorReply, updateQuirks, withEchoedKey, type ErrorShape, type QuirksPatch } from './quirks.js';

export interface EmulatorOptions {
  /** TCP port; 0 picks a free one. @default 0 */
  port?: number;
  /** Interface to bind. Non-loopback hosts are refused unless `allowRemote`. @default '127.0.0.1' */
  host?: string;
  /** Allow binding a non-loopback interface (the emulator has no real security). @default false */
  allowRemote?: boolean;
  /** The fixture object; wins over `fixturePath`. */
  fixture?: Fixture;
  /** A fixture file (YAML or JSON). Without `fixture` or `fixturePath` the built-in default org is used. */
  fixturePath?: string;
  /** Requests per second admitted (see `rateLimitKind`); over it → 429. @default unlimited */
  rps?: number;
  /** Token bucket capacity. @default max(1, rps) */
  burst?: number;
  /** Shape of the rate limit (rate-limits.ts). @default 'token-bucket' */
  rateLimitKind?: RateLimitKind;
  /** Window of the window kinds, in ms. @default 1000 */
  windowMs?: number;
  /** Total probability that a call fails (500, 502, 503 or connection reset, evenly). @default 0 */
  faultRate?: number;
  /** Finer fault probabilities; override the share `faultRate` gives each kind. */
  faults?: FaultProbabilities;
  /** Whether faults strike before or after the handler ran. @default 'before' */
  faultPhase?: FaultPhase;
  /** Latency added to every service call, in ms. @default 0 */
  latencyMs?: number;
  /** Latency added by the `slow` fault, in ms. @default 1000 */
  slowMs?: number;
  /** Seed of the fault dice; the same seed and call sequence give the same faults. @default 1 */
  seed?: number;
  /** Injectable clock (ms since epoch) for the rate limit and handlers. @default Date.now */
  clock?: () => number;
  /** Largest accepted request body in bytes; larger → 413. @default 10 MiB */
  maxBodyBytes?: number;
  /** Answer the HTML login page on unknown routes (200) and missing/wrong keys (401), as the real service can. @default false */
  htmlLoginPage?: boolean;
  /** Base of `service_url` links in answers. @default 'https://service.example' */
  serviceWebUrl?: string;
  /** Inconvenient behaviours of a real service (quirks.ts), all off by default. */
  quirks?: QuirksPatch;
  /** Extra routes (tests, experiments), matched like the built-in ones. */
  extraRoutes?: Route[];
  /**
   * Serve this existing world instead of building one from the fixture (`fixture` and
   * `fixturePath` are then ignored). Lets a test "kill" an emulator (close it) and start a new one
   * on the same port with the same groups and records, as a restarted service would have.
   */
  world?: World;
}

export interface RunningEmulator {
  /** e.g. `http://127.0.0.1:41234` (no trailing slash). */
  url: string;
  port: number;
  world: World;
  stats: EmulatorStats;
  runtime: EmulatorRuntime;
  /** Stops accepting, closes idle and active connections, runs close hooks. Idempotent. */
  close(): Promise<void>;
}

const DEFAULT_MAX_BODY = 10 * 1024 * 1024;
const DRAIN_ALLOWANCE = 16 * 1024 * 1024;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host) && !options.allowRemote) {
    throw new Error(
      `refusing to bind the emulator to ${host}: it is not a loopback address and the emulator has no real security; pass allowRemote (--allow-remote) to do it anyway`,
    );
  }
  const world =
    options.world ??
    new World(options.fixture ?? loadFixture(options.fixturePath), options.serviceWebUrl ? { serviceWebUrl: options.serviceWebUrl } : {});
  const runtime = new EmulatorRuntime({
    rps: options.rps,
    burst: options.burst,
    rateLimitKind: options.rateLimitKind,
    windowMs: options.windowMs,
    faultRate: options.faultRate,
    faults: options.faults,
    faultPhase: options.faultPhase,
    latencyMs: options.latencyMs,
    slowMs: options.slowMs,
    seed: options.seed,
    htmlLoginPage: options.htmlLoginPage,
    clock: options.clock,
  });
  if (options.quirks) updateQuirks(runtime, options.quirks);
  const router = new Router([...allRoutes, ...(options.extraRoutes ?? [])]);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY;

  const sockets = new Set<Socket>();
  const server: Server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
    handleRequest({ req, res, world, runtime, router, maxBodyBytes }).catch((error: unknown) => {
      // Last line of defence: never crash on a request.
      if (!res.headersSent) send(res, errorReply(500, 'internal_error', `emulator bug: ${(error as Error).message}`));
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = isIP(host) === 6 ? `[${host}]` : host;

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      for (const socket of sockets) socket.destroy();
      await closed;
      await runtime.runCloseHooks();
    })());

  return { url: `http://${urlHost}:${port}`, port, world, stats: runtime.stats, runtime, close };
}

interface RequestScope {
  req: IncomingMessage;
  res: ServerResponse;
  world: World;
  runtime: EmulatorRuntime;
  router: Router;
  maxBodyBytes: number;
}

const CONTROL_PREFIX = '/_emulator/';

async function handleRequest(scope: RequestScope): Promise<void> {
  const { req, res, world, runtime, router } = scope;
  const method = req.method ?? 'GET';
  const rawUrl = req.url ?? '/';
  const queryStart = rawUrl.indexOf('?');
  const path = queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart);
  const query = new URLSearchParams(queryStart === -1 ? '' : rawUrl.slice(queryStart + 1));
  const isControl = path.startsWith(CONTROL_PREFIX);
  if (!isControl) errorShapeOf.set(res, quirksOf(runtime).errorShape);

  const body = await readBody(req, scope.maxBodyBytes);
  if (body === 'too-large') {
    if (!isControl) runtime.stats.record(method, null, 413);
    send(res, errorReply(413, 'payload_too_large', `request body is larger than ${scope.maxBodyBytes} bytes`), true);
    return;
  }

  let match;
  try {
    match = router.match(method, path);
  } catch (error) {
    if (!(error instanceof EmulatorHttpError)) throw error;
    if (!isControl) runtime.stats.record(method, null, error.status);
    send(res, error.toReply());
    return;
  }
  const pattern = match.kind === 'match' ? match.route.pattern : match.kind === 'method-not-allowed' ? match.pattern : null;
  const record = (status: number | 'reset'): void => {
    if (!isControl) runtime.stats.record(method, pattern, status);
  };

  let afterFault: 'status500' | 'status502' | 'status503' | 'reset' | null = null;
  if (!isControl) {
    const admission = runtime.admit();
    if (admission.waitMs > 0) {
      runtime.stats.recordRateLimited();
      record(429);
      send(res, rateLimitedReply(admission));
      return;
    }
    const fault = runtime.decideFault();
    if (fault.delayMs > 0) await sleep(fault.delayMs);
    // A 429 always means "not processed" (clients may retry it, even for group creation).
    if (fault.kind && (fault.phase === 'before' || fault.kind === 'status429')) {
      record(fault.kind === 'reset' ? 'reset' : faultStatus(fault.kind));
      answerFault(res, fault.kind);
      return;
    }
    if (fault.kind) afterFault = fault.kind;
  }

  let reply: Reply;
  const slashed = `${path}/`;
  if (match.kind === 'none' && !isControl && quirksOf(runtime).slashRedirect && !path.endsWith('/') && router.match(method, slashed).kind !== 'none') {
    // Quirk slashRedirect: as a web framework appending slashes would (Django's APPEND_SLASH).
    reply = { status: 301, raw: '', contentType: 'text/html; charset=utf-8', headers: { Location: `${slashed}${queryStart === -1 ? '' : rawUrl.slice(queryStart)}` } };
  } else if (match.kind === 'none') {
    reply = runtime.settings.htmlLoginPage && !isControl
      ? { status: 200, raw: HTML_LOGIN_PAGE, contentType: 'text/html; charset=utf-8' }
      : errorReply(404, 'not_found', `no such endpoint: ${method} ${path}`);
  } else if (match.kind === 'method-not-allowed') {
    reply = errorReply(405, 'method_not_allowed', `${method} is not allowed on ${match.pattern}; use ${match.allowed.join(' or ')}`, {
      Allow: match.allowed.join(', '),
    });
  } else {
    reply = await runRoute(match.route, match.params, { method, path, query, req, body, world, runtime });
  }

  if (afterFault) {
    // The handler ran (a write took effect) but the client sees a failure: the ambiguous case.
    record(afterFault === 'reset' ? 'reset' : faultStatus(afterFault));
    answerFault(res, afterFault);
    return;
  }
  if (!isControl && quirksOf(runtime).echoKey) reply = withEchoedKey(reply, req.headers['x-apikey']);
  record(reply.status);
  send(res, reply);
}

interface RunInput {
  method: string;
  path: string;
  query: URLSearchParams;
  req: IncomingMessage;
  body: Buffer;
  world: World;
  runtime: EmulatorRuntime;
}

async function runRoute(route: Route, params: Record<string, string>, input: RunInput): Promise<Reply> {
  let parsed: { value: unknown } | null = null;
  const json = (): unknown => {
    if (parsed) return parsed.value;
    const text = input.body.toString('utf8');
    if (text.trim() === '') throw new EmulatorHttpError(400, 'invalid_json', 'the request body is empty; send a JSON object');
    try {
      parsed = { value: JSON.parse(text) as unknown };
    } catch (error) {
      throw new EmulatorHttpError(400, 'invalid_json', `the request body is not valid JSON: ${(error as Error).message}`);
    }
    return parsed.value;
  };
  const ctx: RouteContext = {
    method: input.method,
    path: input.path,
    params,
    query: input.query,
    headers: input.req.headers,
    body: input.body,
    json,
    jsonObject: () => {
      const value = json();
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw new EmulatorHttpError(400, 'invalid_json', 'the request body must be a JSON object');
      }
      return value as Record<string, unknown>;
    },
    org: null,
    world: input.world,
    runtime: input.runtime,
  };
  try {
    if (route.auth === 'none') return await route.handle(ctx);
    // docs/service-contract.md, Authentication: X-ApiKey header; node lower-cases header names (case-insensitive).
    const header = input.req.headers['x-apikey'];
    const key = Array.isArray(header) ? header[0] : header;
    const org = input.world.orgByApiKey(key?.trim());
    if (!org) {
      if (input.runtime.settings.htmlLoginPage) return { status: 401, raw: HTML_LOGIN_PAGE, contentType: 'text/html; charset=utf-8' };
      return errorReply(401, 'unauthorized', key ? 'the X-ApiKey header does not match any organization key' : 'missing X-ApiKey header');
    }
    return await route.handle({ ...ctx, org });
  } catch (error) {
    if (error instanceof EmulatorHttpError) return error.toReply();
    throw error;
  }
}

function faultStatus(kind: 'status500' | 'status502' | 'status503' | 'status429'): number {
  return kind === 'status500' ? 500 : kind === 'status502' ? 502 : kind === 'status503' ? 503 : 429;
}

function answerFault(res: ServerResponse, kind: 'status500' | 'status502' | 'status503' | 'status429' | 'reset'): void {
  switch (kind) {
    case 'reset':
      res.socket?.resetAndDestroy?.();
      res.destroy();
      return;
    case 'status500':
      send(res, errorReply(500, 'internal_error', 'injected fault: internal server error'));
      return;
    case 'status502':
      send(res, errorReply(502, 'bad_gateway', 'injected fault: bad gateway'));
      return;
    case 'status503':
      send(res, errorReply(503, 'service_unavailable', 'injected fault: service unavailable', { 'Retry-After': '1' }));
      return;
    case 'status429':
      send(res, errorReply(429, 'rate_limited', 'injected fault: too many requests', { 'Retry-After': '1' }));
      return;
  }
}

/** The errorShape quirk in force for a service call's response (control calls are never reshaped). */
const errorShapeOf = new WeakMap<ServerResponse, ErrorShape>();

function send(res: ServerResponse, original: Reply, closeConnection = false): void {
  if (res.destroyed) return;
  const reply = shapeErrorReply(original, errorShapeOf.get(res) ?? 'emulator');
  const payload = reply.raw ?? JSON.stringify(reply.body ?? null);
  const headers: Record<string, string | number> = {
    'Content-Type': reply.raw !== undefined ? (reply.contentType ?? 'application/octet-stream') : 'application/json',
    'Content-Length': Buffer.byteLength(payload),
    ...reply.headers,
  };
  if (closeConnection) headers.Connection = 'close';
  res.writeHead(reply.status, headers);
  res.end(payload);
}

/**
 * Reads the whole body. Over the limit it keeps draining (so the client gets the 413 instead of a
 * broken pipe) up to 16 MiB past the limit, then drops the connection.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  const declared = Number(req.headers['content-length']);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = Number.isFinite(declared) && declared > limit;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      if (tooLarge) {
        if (size > limit + DRAIN_ALLOWANCE) req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? 'too-large' : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('request aborted'));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
