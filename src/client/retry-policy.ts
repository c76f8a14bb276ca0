/**
 * The retry policy as small pure functions (like stripe-node's `_shouldRetry` and ky's
 * `retry-timing`), so every decision is table-tested without a network. design.md, decision 6:
 * `Retry-After` wins over backoff; otherwise full-jitter exponential backoff; bounded attempts and
 * bounded total time; never retry 400, 401, 403, 404 or 422.
 */

export interface RetryPolicy {
  /**
   * Attempts in all, the first one included, not counting those answered 429 (see below).
   * @default 5
   */
  maxAttempts: number;
  /**
   * Backoff base: the cap of the first retry's delay; doubles per attempt. Tests scale time down by
   * setting it to a few milliseconds.
   * @default 250
   */
  baseDelayMs: number;
  /**
   * Cap of a single backoff delay (not of a `Retry-After` delay).
   * @default 10000
   */
  maxDelayMs: number;
  /**
   * 429 answers one call may retry, counted apart from `maxAttempts`: a 429 is a refusal before
   * processing, retried on the limiter's pace, and while the pace settles several in a row are
   * no sign of trouble.
   * @default 20
   */
  maxRateLimitedAttempts: number;
  /**
   * Budget of time from the first attempt; no retry is started whose delay would end past it.
   * @default 60000
   */
  maxElapsedMs: number;
  /**
   * Statuses retried besides every 5xx (the answer is transient).
   * @default [408, 429]
   */
  retryStatuses: readonly number[];
  /**
   * Statuses never retried, whatever else says so.
   * @default [400, 401, 403, 404, 422]
   */
  doNotRetry: readonly number[];
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  maxRateLimitedAttempts: 20,
  maxElapsedMs: 60_000,
  retryStatuses: [408, 429],
  doNotRetry: [400, 401, 403, 404, 422],
};

/** What one attempt ended with, reduced to what the policy needs. */
export type AttemptOutcome =
  | { kind: 'status'; status: number; retryAfterMs?: number | undefined }
  | { kind: 'network'; code?: string | undefined }
  | { kind: 'timeout'; code?: string | undefined };

/**
 * Whether the request is safe to repeat. Record writes are idempotent (design.md, decision 3);
 * group creation is not, so it is `unsent-only`: retried only when the server provably never
 * processed the request.
 */
export type RetryMode = 'idempotent' | 'unsent-only';

/** Error codes that prove the request never reached the server: no connection was ever made. */
const NEVER_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * True when the outcome proves the service did not act on the request: the connection was never
 * made, or the service answered 429 (a refusal before processing).
 */
export function provablyNotProcessed(outcome: AttemptOutcome): boolean {
  if (outcome.kind === 'status') return outcome.status === 429;
  return outcome.code !== undefined && NEVER_SENT_CODES.has(outcome.code);
}

/** True when the outcome is a transient failure worth another attempt (ignoring budgets). */
export function isRetryableOutcome(outcome: AttemptOutcome, policy: RetryPolicy, mode: RetryMode): boolean {
  if (mode === 'unsent-only') return provablyNotProcessed(outcome);
  if (outcome.kind !== 'status') return true;
  const { status } = outcome;
  if (policy.doNotRetry.includes(status)) return false;
  return policy.retryStatuses.includes(status) || status >= 500;
}

/**
 * Full-jitter exponential backoff (AWS architecture blog, "Exponential Backoff And Jitter"):
 * a uniform delay in [0, min(maxDelay, base * 2^(retry-1))). `retry` counts from 1.
 */
export function backoffDelayMs(retry: number, policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>, random: () => number): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * cap);
}

/**
 * Parses a `Retry-After` header: delay-seconds or an HTTP-date (RFC 9110 § 10.2.3).
 * Returns milliseconds from `nowMs`, never negative; undefined when absent or unparseable.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  // HTTP-dates always name a weekday or month; refuse other strings Date.parse would accept.
  if (!/[a-z]{3}/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

export type RetryDecision =
  | { retry: true; delayMs: number; reason: 'retry-after' | 'backoff' | 'paced' }
  | { retry: false; reason: 'not-retryable' | 'attempts-exhausted' | 'time-exhausted' };

export interface RetryDecisionInput {
  outcome: AttemptOutcome;
  /** Attempts made so far, including the one that just failed (1 after the first). */
  attempt: number;
  /** Of those, the attempts answered 429 (the one that just failed included). @default 0 */
  rateLimitedAttempts?: number;
  /** Milliseconds since the first attempt started. */
  elapsedMs: number;
  mode: RetryMode;
  policy: RetryPolicy;
  random: () => number;
}

/**
 * A `Retry-After` up to this long is retried on the rate limiter's pace rather than slept: one
 * second is the least the header can say in seconds, and the limiter paces far finer.
 */
export const PACED_RETRY_AFTER_MS = 1000;

/**
 * The whole policy: retry or not, and after how long.
 *
 * A 429 is a refusal before processing, so retrying it is always safe and costs the service
 * nothing: it has its own budget (`maxRateLimitedAttempts`) besides time, and unless
 * `Retry-After` asks for more than a second it goes straight back to the rate limiter, whose pace
 * has just been settled under the limit. Sleeping instead would idle a worker a second per 429.
 */
export function decideRetry(input: RetryDecisionInput): RetryDecision {
  const { outcome, attempt, elapsedMs, mode, policy, random } = input;
  if (!isRetryableOutcome(outcome, policy, mode)) return { retry: false, reason: 'not-retryable' };
  const rateLimited = outcome.kind === 'status' && outcome.status === 429;
  const rateLimitedAttempts = input.rateLimitedAttempts ?? 0;
  const budgetUsed = rateLimited
    ? rateLimitedAttempts >= policy.maxRateLimitedAttempts
    : attempt - rateLimitedAttempts >= policy.maxAttempts;
  if (budgetUsed) return { retry: false, reason: 'attempts-exhausted' };
  const retryAfterMs = outcome.kind === 'status' ? outcome.retryAfterMs : undefined;
  const decision: RetryDecision =
    rateLimited && (retryAfterMs ?? 0) <= PACED_RETRY_AFTER_MS
      ? { retry: true, delayMs: 0, reason: 'paced' }
      : retryAfterMs !== undefined
        ? { retry: true, delayMs: retryAfterMs, reason: 'retry-after' }
        : { retry: true, delayMs: backoffDelayMs(attempt, policy, random), reason: 'backoff' };
  if (elapsedMs + decision.delayMs > policy.maxElapsedMs) return { retry: false, reason: 'time-exhausted' };
  return decision;
}
