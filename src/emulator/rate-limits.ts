/**
 * The rate limits the emulator can play, so the client's pacing is proven against the shapes real
 * services use rather than only the one it was written for:
 * - `token-bucket`: refilled continuously at `rps`, holding at most `burst` tokens (bursts pass);
 * - `fixed-window`: at most `rps × window` calls per window, windows aligned on the clock
 *   (a client may get twice the limit across a window edge; the service does not care);
 * - `sliding-window`: at most `rps × window` calls in ANY window of that length (a log of the
 *   admitted calls; the strictest shape: no burst is ever allowed);
 * - `hidden`: the sliding window, but the 429 tells nothing — no `Retry-After`, no limit in the
 *   message — as services do that publish no rate.
 */
import { errorReply, type Reply } from './reply.js';

export const RATE_LIMIT_KINDS = ['token-bucket', 'fixed-window', 'sliding-window', 'hidden'] as const;
export type RateLimitKind = (typeof RATE_LIMIT_KINDS)[number];

export interface RateLimitSpec {
  kind: RateLimitKind;
  /** Calls per second admitted on average. */
  rps: number;
  /** Token bucket capacity. @default max(1, rps) */
  burst?: number | null | undefined;
  /** Window of the window kinds, in ms. @default 1000 */
  windowMs?: number | null | undefined;
}

/** What a limit decides for one call. */
export interface Admission {
  /** 0 when the call is admitted; else the ms until a call would be admitted. */
  waitMs: number;
  /** The limit that decided (null: no limit). */
  spec: RateLimitSpec | null;
}

export interface ServerRateLimit {
  readonly spec: RateLimitSpec;
  /** Decides one call now; an admitted call counts against the limit. */
  admit(): Admission;
}

export function createServerRateLimit(spec: RateLimitSpec, now: () => number): ServerRateLimit {
  const limit =
    spec.kind === 'token-bucket'
      ? new TokenBucket(spec.rps, spec.burst ?? Math.max(1, spec.rps), now)
      : spec.kind === 'fixed-window'
        ? new FixedWindow(callsPerWindow(spec), windowOf(spec), now)
        : new SlidingWindowLog(callsPerWindow(spec), windowOf(spec), now);
  return { spec, admit: () => ({ waitMs: limit.take(), spec }) };
}

/**
 * The 429 of a refused call: `Retry-After` (whole seconds, at least 1) and the limit in the
 * message, except for the `hidden` kind, which tells nothing.
 */
export function rateLimitedReply(admission: Admission): Reply {
  const spec = admission.spec;
  if (!spec || spec.kind === 'hidden') return errorReply(429, 'rate_limited', 'too many requests');
  const retryAfter = String(Math.max(1, Math.ceil(admission.waitMs / 1000)));
  const limit =
    spec.kind === 'token-bucket' ? `${spec.rps} requests per second` : `${callsPerWindow(spec)} requests per ${windowOf(spec)} ms`;
  return errorReply(429, 'rate_limited', `rate limit of ${limit} exceeded`, { 'Retry-After': retryAfter });
}

function windowOf(spec: RateLimitSpec): number {
  return spec.windowMs ?? 1000;
}

/** Calls a window admits: at least one, so a tiny rate still lets calls through. */
function callsPerWindow(spec: RateLimitSpec): number {
  return Math.max(1, Math.floor((spec.rps * windowOf(spec)) / 1000));
}

interface Take {
  /** 0 when admitted, else ms until a call would be. */
  take(): number;
}

/** A token bucket refilled continuously at `rps`, holding at most `burst` tokens. */
export class TokenBucket implements Take {
  private tokens: number;
  private last: number;

  constructor(
    readonly rps: number,
    readonly burst: number,
    private readonly now: () => number,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  take(): number {
    const now = this.now();
    const elapsed = Math.max(0, now - this.last);
    this.last = now;
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.rps) / 1000);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) * 1000) / this.rps);
  }
}

/** At most `limit` calls per window; windows start at multiples of `windowMs` on the clock. */
export class FixedWindow implements Take {
  private windowStart = -Infinity;
  private count = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  take(): number {
    const now = this.now();
    const start = Math.floor(now / this.windowMs) * this.windowMs;
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.count = 0;
    }
    if (this.count < this.limit) {
      this.count += 1;
      return 0;
    }
    return Math.max(1, Math.ceil(start + this.windowMs - now));
  }
}

/**
 * At most `limit` calls in any window of `windowMs`: the times of the admitted calls are kept (a
 * ring of `limit` entries), and a call is admitted when the oldest of them has left the window.
 */
export class SlidingWindowLog implements Take {
  private readonly admitted: number[];
  /** Index of the oldest admitted time in the ring. */
  private oldest = 0;
  private size = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly now: () => number,
  ) {
    this.admitted = new Array<number>(limit).fill(0);
  }

  take(): number {
    const now = this.now();
    if (this.size === this.limit) {
      const oldestAt = this.admitted[this.oldest]!;
      if (now - oldestAt < this.windowMs) return Math.max(1, Math.ceil(oldestAt + this.windowMs - now));
      // The oldest call left the window: its slot takes the new one.
      this.admitted[this.oldest] = now;
      this.oldest = (this.oldest + 1) % this.limit;
      return 0;
    }
    this.admitted[(this.oldest + this.size) % this.limit] = now;
    this.size += 1;
    return 0;
  }
}
