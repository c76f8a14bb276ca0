import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_POLICY,
  backoffDelayMs,
  decideRetry,
  parseRetryAfter,
  provablyNotProcessed,
  type AttemptOutcome,
  type RetryMode,
} from '../../src/client/index.js';

const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000, maxAttempts: 4, maxElapsedMs: 10_000 };
const half = () => 0.5;

describe('decideRetry: which outcomes are retried', () => {
  it.each<[string, AttemptOutcome, RetryMode, boolean]>([
    ['400', { kind: 'status', status: 400 }, 'idempotent', false],
    ['401', { kind: 'status', status: 401 }, 'idempotent', false],
    ['403', { kind: 'status', status: 403 }, 'idempotent', false],
    ['404', { kind: 'status', status: 404 }, 'idempotent', false],
    ['422', { kind: 'status', status: 422 }, 'idempotent', false],
    ['200 with wrong shape', { kind: 'status', status: 200 }, 'idempotent', false],
    ['408', { kind: 'status', status: 408 }, 'idempotent', true],
    ['429', { kind: 'status', status: 429 }, 'idempotent', true],
    ['500', { kind: 'status', status: 500 }, 'idempotent', true],
    ['502', { kind: 'status', status: 502 }, 'idempotent', true],
    ['503', { kind: 'status', status: 503 }, 'idempotent', true],
    ['504', { kind: 'status', status: 504 }, 'idempotent', true],
    ['connection reset', { kind: 'network', code: 'ECONNRESET' }, 'idempotent', true],
    ['socket closed', { kind: 'network', code: 'UND_ERR_SOCKET' }, 'idempotent', true],
    ['connection refused', { kind: 'network', code: 'ECONNREFUSED' }, 'idempotent', true],
    ['timeout', { kind: 'timeout' }, 'idempotent', true],
    // Group creation: only when the service provably never acted.
    ['unsent-only 429', { kind: 'status', status: 429 }, 'unsent-only', true],
    ['unsent-only connection refused', { kind: 'network', code: 'ECONNREFUSED' }, 'unsent-only', true],
    ['unsent-only DNS failure', { kind: 'network', code: 'ENOTFOUND' }, 'unsent-only', true],
    ['unsent-only connect timeout', { kind: 'network', code: 'UND_ERR_CONNECT_TIMEOUT' }, 'unsent-only', true],
    ['unsent-only 500', { kind: 'status', status: 500 }, 'unsent-only', false],
    ['unsent-only 503', { kind: 'status', status: 503 }, 'unsent-only', false],
    ['unsent-only reset', { kind: 'network', code: 'ECONNRESET' }, 'unsent-only', false],
    ['unsent-only socket closed', { kind: 'network', code: 'UND_ERR_SOCKET' }, 'unsent-only', false],
    ['unsent-only timeout', { kind: 'timeout' }, 'unsent-only', false],
  ])('%s → retry %s', (_name, outcome, mode, expected) => {
    const decision = decideRetry({ outcome, attempt: 1, elapsedMs: 0, mode, policy, random: half });
    expect(decision.retry).toBe(expected);
    if (!expected) expect(decision).toEqual({ retry: false, reason: 'not-retryable' });
  });
});

describe('decideRetry: budgets and delays', () => {
  it.each([
    // attempt, elapsed, retryAfterMs, expected
    [1, 0, undefined, { retry: true, delayMs: 50, reason: 'backoff' }],
    [2, 0, undefined, { retry: true, delayMs: 100, reason: 'backoff' }],
    [3, 0, undefined, { retry: true, delayMs: 200, reason: 'backoff' }],
    [4, 0, undefined, { retry: false, reason: 'attempts-exhausted' }],
    [1, 0, 3000, { retry: true, delayMs: 3000, reason: 'retry-after' }],
    [1, 9_000, 3000, { retry: false, reason: 'time-exhausted' }],
    [2, 9_990, undefined, { retry: false, reason: 'time-exhausted' }],
  ])('attempt %i after %i ms with Retry-After %s', (attempt, elapsedMs, retryAfterMs, expected) => {
    const outcome: AttemptOutcome = { kind: 'status', status: 503, retryAfterMs };
    expect(decideRetry({ outcome, attempt, elapsedMs, mode: 'idempotent', policy, random: half })).toEqual(expected);
  });
});

describe('backoffDelayMs: full jitter under an exponential cap', () => {
  it.each([
    [1, 0.999, 99],
    [2, 0.999, 199],
    [4, 0.999, 799],
    [5, 0.999, 999], // capped by maxDelayMs
    [10, 0.999, 999],
    [3, 0, 0],
    [3, 0.25, 100],
  ])('retry %i with random %d → %i ms', (retry, r, expected) => {
    expect(backoffDelayMs(retry, policy, () => r)).toBe(expected);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  it.each<[string | undefined, number | undefined]>([
    [undefined, undefined],
    ['', undefined],
    ['0', 0],
    ['1', 1000],
    ['120', 120_000],
    ['1.5', 1500],
    ['Tue, 01 Jan 2030 00:00:05 GMT', 5000],
    ['Mon, 31 Dec 2029 23:59:00 GMT', 0], // in the past → no wait
    ['soon', undefined],
    ['-3', undefined],
    ['Tuesday', undefined],
  ])('%j → %s', (header, expected) => {
    expect(parseRetryAfter(header, now)).toBe(expected);
  });
});

describe('provablyNotProcessed', () => {
  it.each<[AttemptOutcome, boolean]>([
    [{ kind: 'status', status: 429 }, true],
    [{ kind: 'status', status: 503 }, false],
    [{ kind: 'network', code: 'ECONNREFUSED' }, true],
    [{ kind: 'network', code: 'ECONNRESET' }, false],
    [{ kind: 'network' }, false],
    [{ kind: 'timeout' }, false],
  ])('%j → %s', (outcome, expected) => {
    expect(provablyNotProcessed(outcome)).toBe(expected);
  });
});
