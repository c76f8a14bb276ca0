/**
 * One call of the client: attempts through the rate limiter, retried per `retry-policy.ts`, with
 * the counters of `ClientStats`. Group creation is not idempotent: when its outcome is ambiguous the
 * call fails with AmbiguousGroupCreationError instead of being repeated.
 */
import type { Logger } from '../logging/logger.js';
import { AmbiguousGroupCreationError, ClientInputError, RequestAbortedError, ServiceError } from './errors.js';
import type { RateLimiter, Sleep } from '../rate-limit/rate-limiter.js';
import { decideRetry, provablyNotProcessed, type AttemptOutcome, type RetryMode, type RetryPolicy } from './retry-policy.js';

/** What one attempt ended with: the parsed answer, or the error and what the policy needs of it. */
export type AttemptResult<T> = { ok: true; value: T } | AttemptFailure;
export interface AttemptFailure {
  ok: false;
  error: ServiceError;
  outcome: AttemptOutcome;
}

/** The counters of `ClientStats` this client keeps itself. */
export interface CallCounters {
  calls: number;
  requests: number;
  retries: number;
  rateLimited: number;
  failures: number;
  pauses: number;
  pausedMs: number;
}

export interface RetryLoopContext {
  limiter: RateLimiter;
  policy: RetryPolicy;
  now: () => number;
  sleep: Sleep;
  random: () => number;
  log: Logger | undefined;
  counters: CallCounters;
}

/** The call being retried, as logs and errors name it. */
export interface RetriedCall {
  /** Client method name. */
  endpoint: string;
  /** `METHOD route`: concrete paths may hold client ids, which may be emails, so logs name the route. */
  route: string;
  method: string;
  /** Encoded path, for errors. */
  path: string;
  mode: RetryMode;
  signal?: AbortSignal | undefined;
  onSucceeded?: ((attempts: number) => void) | undefined;
  /** For group creation: the name, quoted by AmbiguousGroupCreationError. */
  groupName?: string | undefined;
}

export async function callWithRetries<T>(call: RetriedCall, attempt: () => Promise<AttemptResult<T>>, context: RetryLoopContext): Promise<T> {
  const { limiter, policy, now, sleep, random, log, counters } = context;
  counters.calls += 1;
  const signal = call.signal;
  const firstStartedAt = now();
  let rateLimitedAttempts = 0;
  try {
    for (let attemptNumber = 1; ; attemptNumber += 1) {
      const result = await limiter.run(attempt, signal);
      // Every answer but a 429 was admitted by the service's rate limit, a 404 or a 500 as much
      // as a 200: the limiter learns the limit from all of them, or it settles far under it on
      // runs where many calls answer 404 (create-if-absent).
      if (result.ok || (result.outcome.kind === 'status' && result.outcome.status !== 429)) limiter.onAdmitted();
      if (result.ok) {
        call.onSucceeded?.(attemptNumber);
        return result.value;
      }
      const { outcome, error } = result;
      if (outcome.kind === 'status' && outcome.status === 429) {
        counters.rateLimited += 1;
        rateLimitedAttempts += 1;
        // The limiter settles its pace under the limit; this call is retried on that pace.
        limiter.onRateLimited();
      }
      const decision = decideRetry({ outcome, attempt: attemptNumber, rateLimitedAttempts, elapsedMs: now() - firstStartedAt, mode: call.mode, policy, random });
      if (!decision.retry) {
        log?.debug({ endpoint: call.endpoint, route: call.route, attempt: attemptNumber, reason: decision.reason, error: error.name }, 'giving up');
        const thrown = call.mode === 'unsent-only' && isAmbiguous(outcome) ? ambiguity(call, error) : error;
        thrown.attempts = attemptNumber;
        throw thrown;
      }
      counters.retries += 1;
      if (outcome.kind === 'status' && outcome.status === 429 && decision.delayMs > 0) {
        counters.pauses += 1;
        counters.pausedMs += Math.round(decision.delayMs);
      }
      log?.warn(
        { endpoint: call.endpoint, route: call.route, attempt: attemptNumber, delayMs: Math.round(decision.delayMs), reason: decision.reason, error: error.name, status: error.status },
        'retrying service call',
      );
      await sleep(decision.delayMs, signal);
    }
  } catch (error) {
    counters.failures += 1;
    // Stopped while the request was on the wire: the service may have created the group.
    if (error instanceof RequestAbortedError && call.mode === 'unsent-only') throw ambiguity(call, error);
    if (error instanceof ServiceError || error instanceof ClientInputError) throw error;
    if (signal?.aborted) {
      throw new RequestAbortedError(`${call.method} ${call.path} was aborted`, { method: call.method, path: call.path, cause: error });
    }
    throw error;
  }
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

function ambiguity(call: RetriedCall, error: ServiceError): AmbiguousGroupCreationError {
  return new AmbiguousGroupCreationError({
    method: call.method,
    path: call.path,
    status: error.status,
    bodyExcerpt: error.bodyExcerpt,
    contentType: error.contentType,
    groupName: call.groupName ?? '',
    cause: error,
  });
}
