/**
 * The typed client of the service: one method per endpoint of `docs/service-contract.md`, each
 * answer parsed with the zod schemas of `schemas.ts`. Every request carries `X-ApiKey`, goes through
 * this client's own rate limiter, and is retried per `retry-policy.ts`. Group creation is not
 * idempotent and is retried only when the service provably never processed it.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { request, type Dispatcher, type FormData } from 'undici';
import type { z } from 'zod';
import type { Logger } from '../logging/logger.js';
import { checkBaseUrl } from './config.js';
import {
  AmbiguousGroupCreationError,
  ClientInputError,
  NetworkError,
  RefusedError,
  RequestAbortedError,
  ResponseShapeError,
  ServiceError,
  TimeoutError,
  UnexpectedResponseError,
  errorFromStatus,
  redactSecret,
} from './errors.js';
import { buildManuscriptForm, validateManuscriptInput, type ManuscriptUploadInput } from './manuscript-form.js';
import { RateLimiter, type Clock, type RateLimiterOptions, type Sleep } from './rate-limiter.js';
import {
  DEFAULT_RETRY_POLICY,
  decideRetry,
  provablyNotProcessed,
  parseRetryAfter,
  type AttemptOutcome,
  type RetryMode,
  type RetryPolicy,
} from './retry-policy.js';
import {
  authorFromGroupSchema,
  authorPatchSchema,
  authorWriteSchema,
  createGroupRequestSchema,
  createGroupResponseSchema,
  customFieldsListingSchema,
  okResponseSchema,
  recommendJournalsResponseSchema,
  uploadResponseSchema,
  type AuthorFromGroup,
  type AuthorPatch,
  type AuthorWrite,
  type CreateGroupRequest,
  type CreateGroupResponse,
  type CustomFieldsListing,
  type JournalsCorpus,
  type OkResponse,
  type RecommendJournalsResponse,
  type UploadResponse,
} from './schemas.js';

export interface ClientOptions {
  /** Base URL of the service, e.g. `https://service.example.org`; http:// only on loopback. */
  baseUrl: string;
  /** Organization API key, sent as `X-ApiKey` on every request and never logged or shown. */
  apiKey: string;
  /**
   * Pace, in-flight cap and adaptation to 429s of this client (rate-limiter.ts). Without `rps`
   * the client finds the service's limit itself. @default { maxInFlight: 4 }
   */
  rateLimit?: Omit<RateLimiterOptions, 'now' | 'sleep'>;
  /**
   * A limiter shared with other clients that spend the same budget (same base URL and API key);
   * `rateLimit` is then ignored.
   */
  limiter?: RateLimiter;
  /** Overrides of the retry policy. @default DEFAULT_RETRY_POLICY */
  retry?: Partial<RetryPolicy>;
  /**
   * Per-attempt timeout, milliseconds, from sending to the end of the answer.
   * @default 30000
   */
  timeoutMs?: number;
  /** Wall clock in milliseconds (also used to read `Retry-After` HTTP dates). @default Date.now */
  now?: Clock;
  /** Abortable sleep, used for backoff and rate waits. @default timers/promises setTimeout */
  sleep?: Sleep;
  /** Uniform random number in [0, 1), for backoff jitter. @default Math.random */
  random?: () => number;
  /** undici dispatcher (agent, pool, proxy). @default undici's global dispatcher */
  dispatcher?: Dispatcher;
  /** Logger for request and retry events (never given the key). @default none */
  logger?: Logger;
  /** Largest response body read, in bytes; a larger one fails the call. @default 33554432 (32 MiB) */
  maxResponseBytes?: number;
}

/** Options of one call. */
export interface CallOptions {
  /** Stops the call, including waits for retries and rate tokens. */
  signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout. */
  timeoutMs?: number;
  /** Told the number of attempts when the call succeeds (failures carry it as `error.attempts`). */
  onSucceeded?: (attempts: number) => void;
}

export interface ClientStats {
  /** Calls of client methods. */
  calls: number;
  /** HTTP requests sent (attempts, retries included). */
  requests: number;
  /** Attempts that were retries. */
  retries: number;
  /** 429 answers received. */
  rateLimited: number;
  /** Waits before retrying a call the service answered 429, and their total length (the report says them in words). */
  pauses: number;
  pausedMs: number;
  /** Calls that ended in an error. */
  failures: number;
  /** Requests per second in force now (after 429 slow-downs). */
  currentRate: number;
  /** The configured ceiling, requests per second. */
  configuredRate: number;
  inFlight: number;
  queued: number;
}

export interface ServiceClient {
  /** Spec § 1. GET an author-from-group record (with its linked author). */
  getAuthor(groupId: number, clientId: string, options?: CallOptions): Promise<AuthorFromGroup>;
  /** Spec § 2. Create or fully replace a record; fields not sent become null. */
  putAuthor(groupId: number, clientId: string, body: AuthorWrite, options?: CallOptions): Promise<OkResponse>;
  /** Spec § 3. Update only the fields sent (null clears one); 404 when the record does not exist. */
  patchAuthor(groupId: number, clientId: string, body: AuthorPatch, options?: CallOptions): Promise<OkResponse>;
  /** Spec § 4. Delete a record; 404 when absent. */
  deleteAuthor(groupId: number, clientId: string, options?: CallOptions): Promise<OkResponse>;
  /** Spec § 5. Not idempotent: see AmbiguousGroupCreationError. */
  createGroup(req: CreateGroupRequest, options?: CallOptions): Promise<CreateGroupResponse>;
  /** Spec § 6. Multipart upload of a manuscript; answers referee candidates. */
  uploadManuscript(input: ManuscriptUploadInput, options?: CallOptions): Promise<UploadResponse>;
  /** Spec § 7. Journals for a manuscript already uploaded with `originId`. */
  recommendJournals(originId: string, query?: { corpus?: JournalsCorpus }, options?: CallOptions): Promise<RecommendJournalsResponse>;
  /** Spec § 8. Custom fields of the three owners. */
  listCustomFields(options?: CallOptions): Promise<CustomFieldsListing>;
  stats(): ClientStats;
}

type HttpMethod = 'GET' | 'POST' | 'DELETE';

interface CallSpec<T> {
  /** Client method name, for logs. */
  endpoint: string;
  /** Path template, for logs: concrete paths may hold client ids, which may be emails. */
  route: string;
  method: HttpMethod;
  /** Encoded path under the base URL. */
  path: string;
  query?: Record<string, string>;
  /** Builds the body afresh for each attempt. */
  body?: () => { body: string | FormData; contentType?: string };
  schema: z.ZodType<T>;
  mode: RetryMode;
  options: CallOptions | undefined;
  /** For group creation: the name, quoted by AmbiguousGroupCreationError. */
  groupName?: string;
  /** For `{ok: boolean}` answers: `{"ok": false}` with 200 is a refusal, not a success (docs/service-contract.md, What the contract leaves open). */
  okRequired?: boolean;
}

type AttemptResult<T> = { ok: true; value: T } | { ok: false; error: ServiceError; outcome: AttemptOutcome };

const EXCERPT_LENGTH = 200;

export function createClient(options: ClientOptions): ServiceClient {
  const baseUrl = checkBaseUrl(options.baseUrl);
  const apiKey = options.apiKey;
  if (!apiKey) throw new ClientInputError('the service client needs an API key');
  const now = options.now ?? Date.now;
  const sleep: Sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, signal ? { signal } : {}));
  const random = options.random ?? Math.random;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const defaultTimeoutMs = options.timeoutMs ?? 30_000;
  const limiter = options.limiter ?? new RateLimiter({ ...options.rateLimit, now, sleep });
  const log = options.logger;
  const counters = { calls: 0, requests: 0, retries: 0, rateLimited: 0, failures: 0, pauses: 0, pausedMs: 0 };

  const maxResponseBytes = options.maxResponseBytes ?? 32 * 1024 * 1024;

  async function attemptOnce<T>(spec: CallSpec<T>): Promise<AttemptResult<T>> {
    const { method, path } = spec;
    const timeoutMs = spec.options?.timeoutMs ?? defaultTimeoutMs;
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    const userSignal = spec.options?.signal;
    const signal = userSignal ? AbortSignal.any([timeout.signal, userSignal]) : timeout.signal;
    const payload = spec.body?.();
    const headers: Record<string, string> = { 'x-apikey': apiKey, accept: 'application/json' };
    if (payload?.contentType) headers['content-type'] = payload.contentType;
    const query = spec.query ? `?${new URLSearchParams(spec.query).toString()}` : '';
    const startedAt = now();
    counters.requests += 1;
    let status: number;
    let contentType: string;
    let text: string;
    let retryAfterHeader: string | undefined;
    let locationHeader: string | undefined;
    try {
      const response = await request(`${baseUrl}${path}${query}`, {
        method,
        headers,
        body: payload?.body ?? null,
        signal,
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
      });
      status = response.statusCode;
      contentType = headerValue(response.headers['content-type']) ?? '';
      retryAfterHeader = headerValue(response.headers['retry-after']);
      locationHeader = headerValue(response.headers.location);
      // Always consume the body, or undici keeps the connection busy; a body past the cap is
      // destroyed instead (the service's answers are small: a huge one is a proxy or a fault).
      const capped = await readCapped(response.body, maxResponseBytes);
      if (capped === undefined) {
        const message = `${method} ${path} answered ${status} with more than ${maxResponseBytes} bytes; refusing to read it`;
        return { ok: false, error: new UnexpectedResponseError(message, { method, path, status, contentType: contentType || undefined }), outcome: { kind: 'status', status } };
      }
      text = capped;
    } catch (cause) {
      if (userSignal?.aborted) {
        throw new RequestAbortedError(`${method} ${path} was aborted`, { method, path, cause: userSignal.reason });
      }
      if (timeout.signal.aborted) {
        const error = new TimeoutError(`${method} ${path} got no complete answer within ${timeoutMs} ms`, {
          method,
          path,
          timeoutMs,
          cause,
        });
        return { ok: false, error, outcome: { kind: 'timeout' } };
      }
      const code = errorCode(cause);
      const reason = cause instanceof Error ? cause.message : String(cause);
      const error = new NetworkError(`${method} ${path} failed: ${redactSecret(reason, apiKey)}`, { method, path, code, cause });
      return { ok: false, error, outcome: { kind: 'network', code } };
    } finally {
      clearTimeout(timer);
    }
    log?.debug({ endpoint: spec.endpoint, route: spec.route, method, status, ms: Math.round(now() - startedAt) }, 'service call');
    const bodyExcerpt = excerpt(redactSecret(text, apiKey));
    const isJson = /^application\/([\w.+-]*\+)?json\b/i.test(contentType);
    const details = { method, path, status, bodyExcerpt, contentType: contentType || undefined };

    if (status < 200 || status >= 300) {
      const described = describeErrorBody(text, contentType, isJson);
      const serviceMessage = described.message !== undefined ? excerpt(redactSecret(described.message, apiKey)) : undefined;
      const retryAfterMs = parseRetryAfter(retryAfterHeader, now());
      const location = locationHeader === undefined ? undefined : redactSecret(withoutCredentials(locationHeader), apiKey);
      const error = errorFromStatus({ ...details, serviceMessage, serviceCode: described.code, retryAfterMs, location });
      return { ok: false, error, outcome: { kind: 'status', status, retryAfterMs } };
    }
    const outcome: AttemptOutcome = { kind: 'status', status };
    if (!isJson) {
      const message = `${method} ${path} answered ${status} with ${contentType || 'no content type'} instead of JSON: ${bodyExcerpt || '(empty body)'}`;
      return { ok: false, error: new UnexpectedResponseError(message, details), outcome };
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (cause) {
      const message = `${method} ${path} answered ${status} with invalid JSON: ${bodyExcerpt || '(empty body)'}`;
      return { ok: false, error: new UnexpectedResponseError(message, { ...details, cause }), outcome };
    }
    const parsed = spec.schema.safeParse(json);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => ({
        path: issue.path.map(String).join('.') || '(root)',
        message: issue.message,
      }));
      const listed = problems.slice(0, 5).map((p) => `${p.path}: ${p.message}`).join('; ');
      const message = `${method} ${path} (${spec.endpoint}) answered a response that breaks the contract: ${listed}`;
      const error = new ResponseShapeError(message, { ...details, fieldPaths: problems.map((p) => p.path), cause: parsed.error });
      return { ok: false, error, outcome };
    }
    if (spec.okRequired && (parsed.data as { ok?: unknown }).ok !== true) {
      const said = describeErrorBody(text, contentType, true);
      const reason = said.message !== undefined && said.message !== '' ? `: ${excerpt(redactSecret(said.message, apiKey))}` : '';
      const message = `${method} ${path} answered ${status} with {"ok": false}; the service refused it and changed nothing${reason}`;
      return { ok: false, error: new RefusedError(message, { ...details, serviceCode: said.code }), outcome };
    }
    return { ok: true, value: parsed.data };
  }

  async function call<T>(spec: CallSpec<T>): Promise<T> {
    counters.calls += 1;
    const signal = spec.options?.signal;
    const firstStartedAt = now();
    let rateLimitedAttempts = 0;
    try {
      for (let attempt = 1; ; attempt += 1) {
        const result = await limiter.run(() => attemptOnce(spec), signal);
        // Every answer but a 429 was admitted by the service's rate limit, a 404 or a 500 as much
        // as a 200: the limiter learns the limit from all of them, or it settles far under it on
        // runs where many calls answer 404 (create-if-absent).
        if (result.ok || (result.outcome.kind === 'status' && result.outcome.status !== 429)) limiter.onAdmitted();
        if (result.ok) {
          spec.options?.onSucceeded?.(attempt);
          return result.value;
        }
        const { outcome, error } = result;
        if (outcome.kind === 'status' && outcome.status === 429) {
          counters.rateLimited += 1;
          rateLimitedAttempts += 1;
          // The limiter settles its pace under the limit; this call is retried on that pace.
          limiter.onRateLimited();
        }
        const decision = decideRetry({ outcome, attempt, rateLimitedAttempts, elapsedMs: now() - firstStartedAt, mode: spec.mode, policy, random });
        if (!decision.retry) {
          log?.debug({ endpoint: spec.endpoint, route: spec.route, attempt, reason: decision.reason, error: error.name }, 'giving up');
          const thrown = spec.mode === 'unsent-only' && isAmbiguous(outcome) ? ambiguity(spec, error) : error;
          thrown.attempts = attempt;
          throw thrown;
        }
        counters.retries += 1;
        if (outcome.kind === 'status' && outcome.status === 429 && decision.delayMs > 0) {
          counters.pauses += 1;
          counters.pausedMs += Math.round(decision.delayMs);
        }
        log?.warn(
          { endpoint: spec.endpoint, route: spec.route, attempt, delayMs: Math.round(decision.delayMs), reason: decision.reason, error: error.name, status: error.status },
          'retrying service call',
        );
        await sleep(decision.delayMs, signal);
      }
    } catch (error) {
      counters.failures += 1;
      // Stopped while the request was on the wire: the service may have created the group.
      if (error instanceof RequestAbortedError && spec.mode === 'unsent-only') throw ambiguity(spec, error);
      if (error instanceof ServiceError || error instanceof ClientInputError) throw error;
      if (signal?.aborted) {
        throw new RequestAbortedError(`${spec.method} ${spec.path} was aborted`, { method: spec.method, path: spec.path, cause: error });
      }
      throw error;
    }
  }

  function ambiguity<T>(spec: CallSpec<T>, error: ServiceError): AmbiguousGroupCreationError {
    return new AmbiguousGroupCreationError({
      method: spec.method,
      path: spec.path,
      status: error.status,
      bodyExcerpt: error.bodyExcerpt,
      contentType: error.contentType,
      groupName: spec.groupName ?? '',
      cause: error,
    });
  }

  function jsonBody(value: unknown): () => { body: string; contentType: string } {
    const text = JSON.stringify(value);
    return () => ({ body: text, contentType: 'application/json' });
  }

  const authorRoute = '/api/external/author-from-group/:group_id/:client_id/';

  return {
    async getAuthor(groupId, clientId, callOptions) {
      return call({
        endpoint: 'getAuthor',
        route: `GET ${authorRoute}`,
        method: 'GET',
        path: authorPath(groupId, clientId),
        schema: authorFromGroupSchema,
        mode: 'idempotent',
        options: callOptions,
      });
    },
    async putAuthor(groupId, clientId, body, callOptions) {
      const valid = validateBody(authorWriteSchema, body, 'author record (full POST)');
      return call({
        endpoint: 'putAuthor',
        route: `POST ${authorRoute}`,
        method: 'POST',
        path: authorPath(groupId, clientId),
        body: jsonBody(valid),
        schema: okResponseSchema,
        okRequired: true,
        mode: 'idempotent',
        options: callOptions,
      });
    },
    async patchAuthor(groupId, clientId, body, callOptions) {
      const valid = validateBody(authorPatchSchema, body, 'author record (partial POST)');
      return call({
        endpoint: 'patchAuthor',
        route: `POST ${authorRoute}partial/`,
        method: 'POST',
        path: `${authorPath(groupId, clientId)}partial/`,
        body: jsonBody(valid),
        schema: okResponseSchema,
        okRequired: true,
        mode: 'idempotent',
        options: callOptions,
      });
    },
    async deleteAuthor(groupId, clientId, callOptions) {
      return call({
        endpoint: 'deleteAuthor',
        route: `DELETE ${authorRoute}`,
        method: 'DELETE',
        path: authorPath(groupId, clientId),
        schema: okResponseSchema,
        okRequired: true,
        mode: 'idempotent',
        options: callOptions,
      });
    },
    async createGroup(req, callOptions) {
      const valid = validateBody(createGroupRequestSchema, req, 'group creation request');
      return call({
        endpoint: 'createGroup',
        route: 'POST /api/external/authors-group/create/',
        method: 'POST',
        path: '/api/external/authors-group/create/',
        body: jsonBody(valid),
        schema: createGroupResponseSchema,
        // Design decision 3: group creation is not idempotent.
        mode: 'unsent-only',
        options: callOptions,
        groupName: valid.group_name,
      });
    },
    async uploadManuscript(input, callOptions) {
      validateManuscriptInput(input);
      return call({
        endpoint: 'uploadManuscript',
        route: 'POST /api/external/proposal/',
        method: 'POST',
        path: '/api/external/proposal/',
        // undici sets the multipart content type with its boundary.
        body: () => ({ body: buildManuscriptForm(input, apiKey) }),
        schema: uploadResponseSchema,
        // Spec, "States and transitions" rule 1: the same origin_id updates, so a repeat is safe.
        mode: 'idempotent',
        options: callOptions,
      });
    },
    async recommendJournals(originId, query, callOptions) {
      return call({
        endpoint: 'recommendJournals',
        route: 'GET /api/external/recommend-journals/:origin_id/',
        method: 'GET',
        path: `/api/external/recommend-journals/${pathSegment(originId, 'origin_id')}/`,
        ...(query?.corpus ? { query: { journals_corpus: query.corpus } } : {}),
        schema: recommendJournalsResponseSchema,
        mode: 'idempotent',
        options: callOptions,
      });
    },
    async listCustomFields(callOptions) {
      return call({
        endpoint: 'listCustomFields',
        route: 'GET /api/external/custom-fields/all/',
        method: 'GET',
        path: '/api/external/custom-fields/all/',
        schema: customFieldsListingSchema,
        mode: 'idempotent',
        options: callOptions,
      });
    },
    stats() {
      const limiterStats = limiter.stats();
      return {
        ...counters,
        currentRate: limiterStats.currentRps,
        configuredRate: limiterStats.configuredRps,
        inFlight: limiterStats.inFlight,
        queued: limiterStats.queued,
      };
    },
  };
}

/**
 * For a non-idempotent call, an outcome is ambiguous unless the service clearly refused it: a 3xx/4xx
 * answer (nothing was created) or a connection that was never made.
 */
function isAmbiguous(outcome: AttemptOutcome): boolean {
  if (provablyNotProcessed(outcome)) return false;
  if (outcome.kind === 'status') return !(outcome.status >= 300 && outcome.status < 500 && outcome.status !== 408);
  return true;
}

function authorPath(groupId: number, clientId: string): string {
  if (!Number.isSafeInteger(groupId) || groupId <= 0) {
    throw new ClientInputError(`group id must be a positive integer, got ${String(groupId)}`);
  }
  return `/api/external/author-from-group/${groupId}/${pathSegment(clientId, 'client_id')}/`;
}

/**
 * Encodes one path segment. Ids may hold anything (slashes, spaces, unicode), which
 * encodeURIComponent covers; `.` and `..` would be collapsed by URL normalization, so they are refused.
 */
/** Reads a response body as UTF-8 text, or destroys it and answers undefined past `maxBytes`. */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function pathSegment(value: string, name: string): string {
  if (typeof value !== 'string' || value === '' || value === '.' || value === '..') {
    throw new ClientInputError(`${name} "${String(value)}" cannot be used in a URL path`, {
      hint: `Give a non-empty ${name} other than "." or "..".`,
    });
  }
  return encodeURIComponent(value);
}

function validateBody<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const listed = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
  throw new ClientInputError(`invalid ${what}: ${listed}`, { cause: parsed.error });
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_LENGTH ? `${flat.slice(0, EXCERPT_LENGTH)}…` : flat;
}

/**
 * What an error answer says, for a person. The spec shows no error body (§ Errors 3), so every
 * common shape is read: the emulator's `{"ok": false, "error": {"code", "message"}}`,
 * `{"detail": ...}`, `{"error": "..."}`, field errors `{"name": ["This field is required."]}` (also
 * under `errors`), and HTML error pages (their title and visible text, not the markup).
 */
function describeErrorBody(text: string, contentType: string, isJson: boolean): { message?: string; code?: string } {
  if (text.trim() === '') return {};
  if (!isJson) {
    if (/html/i.test(contentType) || /^\s*<(!doctype|html)/i.test(text)) {
      const page = htmlText(text);
      return page === "" ? {} : { message: `HTML page (${contentType || "no content type"}): ${page}` };
    }
    return { message: `non-JSON answer (${contentType || 'no content type'}): ${text}` };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { message: `invalid JSON: ${text}` };
  }
  if (typeof body === 'string') return { message: body };
  if (Array.isArray(body)) return { message: messagesOf(body) };
  if (typeof body !== 'object' || body === null) return {};
  const record = body as Record<string, unknown>;
  const inner = typeof record.error === 'object' && record.error !== null && !Array.isArray(record.error) ? (record.error as Record<string, unknown>) : record;
  const code = [inner.code, record.code].find((v): v is string => typeof v === 'string');
  const withCode = (message: string | undefined): { message?: string; code?: string } => ({
    ...(message !== undefined && message !== '' ? { message } : {}),
    ...(code !== undefined ? { code } : {}),
  });
  for (const candidate of [inner.message, inner.detail, record.detail, record.message, record.error, record.errors]) {
    if (candidate === undefined || candidate === null) continue;
    const message = messagesOf(candidate);
    if (message !== '') return withCode(message);
  }
  // Field errors: every key except the envelope's own holds a message or a list of them.
  const fields = Object.entries(record)
    .filter(([key]) => !['ok', 'code', 'status', 'error'].includes(key))
    .map(([key, value]) => {
      const message = messagesOf(value);
      return message === '' ? '' : key === 'non_field_errors' || key === '__all__' ? message : `${key}: ${message}`;
    })
    .filter((line) => line !== '');
  return withCode(fields.length ? fields.join('; ') : undefined);
}

/** Flattens a message, a list of messages or an object of field messages into one line. */
function messagesOf(value: unknown, depth = 0): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (depth > 3 || value === null || typeof value !== 'object') return '';
  if (Array.isArray(value)) return value.map((item) => messagesOf(item, depth + 1)).filter(Boolean).join('; ');
  const record = value as Record<string, unknown>;
  for (const key of ['message', 'msg', 'detail']) if (typeof record[key] === 'string') return record[key];
  return Object.entries(record)
    .map(([key, item]) => {
      const message = messagesOf(item, depth + 1);
      return message === '' ? '' : `${key}: ${message}`;
    })
    .filter(Boolean)
    .join('; ');
}

/** The readable text of an HTML page: its title, then its body text without tags, scripts or styles. */
function htmlText(html: string): string {
  const sample = html.slice(0, 64 * 1024);
  const decode = (s: string): string =>
    s
      .replace(/<[^>]*>/g, ' ')
      .replace(/&nbsp;/gi, ' ')
      .replace(/&lt;/gi, '<')
      .replace(/&gt;/gi, '>')
      .replace(/&quot;/gi, '"')
      .replace(/&#39;|&apos;/gi, "'")
      .replace(/&amp;/gi, '&')
      .replace(/\s+/g, ' ')
      .trim();
  const title = decode(/<title[^>]*>([\s\S]*?)<\/title>/i.exec(sample)?.[1] ?? '');
  const bodyMatch = /<body[^>]*>([\s\S]*?)(<\/body>|$)/i.exec(sample);
  const body = decode((bodyMatch?.[1] ?? sample).replace(/<(script|style|head)[^>]*>[\s\S]*?<\/\1>/gi, ' '));
  if (title === '') return body;
  const rest = body.startsWith(title) ? body.slice(title.length).trim() : body;
  return rest === '' ? title : `${title} — ${rest}`;
}

/** A URL with any `user:password@` removed, for messages. */
function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i, '$1');
}

/** The system or undici code of a network failure (also inside AggregateError from happy eyeballs). */
function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const cause = (error as { cause?: unknown }).cause;
  if (cause !== undefined && cause !== error) return errorCode(cause);
  const errors = (error as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.length > 0) return errorCode(errors[0]);
  return undefined;
}
