/**
 * The typed client of the service: one method per endpoint of `docs/service-contract.md`, each
 * built from the endpoint table (`endpoints.ts`). A call is attempts (`transport.ts`, then
 * `answer.ts`) through this client's own rate limiter, retried per `retry-policy.ts`
 * (`retry-loop.ts`). Every request carries `X-ApiKey`. Group creation is not idempotent and is
 * retried only when the service provably never processed it.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Dispatcher, FormData } from 'undici';
import type { z } from 'zod';
import type { Logger } from '../logging/logger.js';
import { readAnswer } from './answer.js';
import { checkBaseUrl } from './config.js';
import { ENDPOINTS, pathOf, routeKey, type EndpointName } from './endpoints.js';
import { ClientInputError } from './errors.js';
import { buildManuscriptForm, validateManuscriptInput, type ManuscriptUploadInput } from './manuscript-form.js';
import { RateLimiter, type Clock, type RateLimiterOptions, type Sleep } from '../rate-limit/rate-limiter.js';
import { callWithRetries, type CallCounters, type RetryLoopContext } from './retry-loop.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.js';
import type {
  AuthorFromGroup,
  AuthorPatch,
  AuthorWrite,
  CreateGroupRequest,
  CreateGroupResponse,
  CustomFieldsListing,
  JournalsCorpus,
  OkResponse,
  RecommendJournalsResponse,
  UploadResponse,
} from './schemas.js';
import { exchange, type Exchange, type TransportSettings } from './transport.js';

export interface ClientOptions {
  /** Base URL of the service, e.g. `https://service.example.org`; http:// only on loopback. */
  baseUrl: string;
  /** Organization API key, sent as `X-ApiKey` on every request and never logged or shown. */
  apiKey: string;
  /**
   * Pace, in-flight cap and adaptation to 429s of this client (../rate-limit/rate-limiter.ts). Without `rps`
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
  /** The limit the service was found to enforce (from its 429s), requests per second; 0 while none was found. */
  limitFound: number;
  inFlight: number;
  queued: number;
}

export interface ServiceClient {
  /** docs/service-contract.md, call 1. GET an author-from-group record (with its linked author). */
  getAuthor(groupId: number, clientId: string, options?: CallOptions): Promise<AuthorFromGroup>;
  /** docs/service-contract.md, call 2. Create or fully replace a record; fields not sent become null. */
  putAuthor(groupId: number, clientId: string, body: AuthorWrite, options?: CallOptions): Promise<OkResponse>;
  /** docs/service-contract.md, call 3. Update only the fields sent (null clears one); 404 when the record does not exist. */
  patchAuthor(groupId: number, clientId: string, body: AuthorPatch, options?: CallOptions): Promise<OkResponse>;
  /** docs/service-contract.md, call 4. Delete a record; 404 when absent. */
  deleteAuthor(groupId: number, clientId: string, options?: CallOptions): Promise<OkResponse>;
  /** docs/service-contract.md, call 5. Not idempotent: see AmbiguousGroupCreationError. */
  createGroup(req: CreateGroupRequest, options?: CallOptions): Promise<CreateGroupResponse>;
  /** docs/service-contract.md, call 6. Multipart upload of a manuscript; answers referee candidates. */
  uploadManuscript(input: ManuscriptUploadInput, options?: CallOptions): Promise<UploadResponse>;
  /** docs/service-contract.md, call 7. Journals for a manuscript already uploaded with `originId`. */
  recommendJournals(originId: string, query?: { corpus?: JournalsCorpus }, options?: CallOptions): Promise<RecommendJournalsResponse>;
  /** docs/service-contract.md, call 8. Custom fields of the three owners. */
  listCustomFields(options?: CallOptions): Promise<CustomFieldsListing>;
  stats(): ClientStats;
}

/** What one call sends besides the endpoint's own data. */
interface CallRequest {
  /** Values of the route's `:name` parameters. */
  params?: Record<string, string | number>;
  query?: Record<string, string>;
  /** A JSON body, checked against the endpoint's body schema before anything is sent. */
  json?: unknown;
  /** A multipart body, built afresh for each attempt (undici sets its content type and boundary). */
  form?: () => FormData;
  groupName?: string;
}

type Answer<K extends EndpointName> = z.output<(typeof ENDPOINTS)[K]['answer']>;

export function createClient(options: ClientOptions): ServiceClient {
  const baseUrl = checkBaseUrl(options.baseUrl);
  const apiKey = options.apiKey;
  if (!apiKey) throw new ClientInputError('the service client needs an API key');
  const now = options.now ?? Date.now;
  const sleep: Sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, signal ? { signal } : {}));
  const limiter = options.limiter ?? new RateLimiter({ ...options.rateLimit, now, sleep });
  const defaultTimeoutMs = options.timeoutMs ?? 30_000;
  const counters: CallCounters = { calls: 0, requests: 0, retries: 0, rateLimited: 0, failures: 0, pauses: 0, pausedMs: 0 };
  const transport: TransportSettings = {
    baseUrl,
    apiKey,
    dispatcher: options.dispatcher,
    maxResponseBytes: options.maxResponseBytes ?? 32 * 1024 * 1024,
  };
  const loop: RetryLoopContext = {
    limiter,
    policy: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    now,
    sleep,
    random: options.random ?? Math.random,
    log: options.logger,
    counters,
  };

  async function call<K extends EndpointName>(name: K, request: CallRequest, callOptions: CallOptions | undefined): Promise<Answer<K>> {
    const endpoint = ENDPOINTS[name];
    const json = 'body' in endpoint ? JSON.stringify(validateBody(endpoint.body.schema, request.json, endpoint.body.what)) : undefined;
    const path = pathOf(endpoint, request.params);
    const route = routeKey(endpoint);
    const { method } = endpoint;
    const attempt = async () => {
      const sent: Exchange = {
        method,
        path,
        query: request.query,
        payload: json !== undefined ? { body: json, contentType: 'application/json' } : request.form ? { body: request.form() } : undefined,
        timeoutMs: callOptions?.timeoutMs ?? defaultTimeoutMs,
        signal: callOptions?.signal,
      };
      const startedAt = now();
      counters.requests += 1;
      const exchanged = await exchange(transport, sent);
      if (!exchanged.ok) return exchanged;
      loop.log?.debug({ endpoint: name, route, method, status: exchanged.answer.status, ms: Math.round(now() - startedAt) }, 'service call');
      // The table's entry for K holds K's answer schema; TypeScript cannot follow a generic index.
      const schema = endpoint.answer as z.ZodType as z.ZodType<Answer<K>>;
      return readAnswer(exchanged.answer, { endpoint: name, method, path, schema, okRequired: endpoint.okRequired, apiKey, nowMs: now() });
    };
    return callWithRetries(
      { endpoint: name, route, method, path, mode: endpoint.mode, signal: callOptions?.signal, onSucceeded: callOptions?.onSucceeded, groupName: request.groupName },
      attempt,
      loop,
    );
  }

  return {
    getAuthor: (groupId, clientId, callOptions) => call('getAuthor', { params: { group_id: groupId, client_id: clientId } }, callOptions),
    putAuthor: (groupId, clientId, body, callOptions) => call('putAuthor', { params: { group_id: groupId, client_id: clientId }, json: body }, callOptions),
    patchAuthor: (groupId, clientId, body, callOptions) => call('patchAuthor', { params: { group_id: groupId, client_id: clientId }, json: body }, callOptions),
    deleteAuthor: (groupId, clientId, callOptions) => call('deleteAuthor', { params: { group_id: groupId, client_id: clientId } }, callOptions),
    // `?.`: a body that is not an object is refused by the body schema, with its own message.
    createGroup: (req, callOptions) => call('createGroup', { json: req, groupName: req?.group_name }, callOptions),
    async uploadManuscript(input, callOptions) {
      validateManuscriptInput(input);
      return call('uploadManuscript', { form: () => buildManuscriptForm(input, apiKey) }, callOptions);
    },
    recommendJournals: (originId, query, callOptions) =>
      call('recommendJournals', { params: { origin_id: originId }, ...(query?.corpus ? { query: { journals_corpus: query.corpus } } : {}) }, callOptions),
    listCustomFields: (callOptions) => call('listCustomFields', {}, callOptions),
    stats() {
      const limiterStats = limiter.stats();
      return {
        ...counters,
        currentRate: limiterStats.currentRps,
        configuredRate: limiterStats.configuredRps,
        limitFound: limiterStats.estimatedLimitRps,
        inFlight: limiterStats.inFlight,
        queued: limiterStats.queued,
      };
    },
  };
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
