/**
 * Rate control for one client instance (design.md, decision 6): never module-global, so two clients
 * never share or fight over state. Three parts:
 * - a token bucket (requests per second with a burst), implemented as GCRA: every request reserves
 *   the next free slot synchronously, so concurrent waiters never stampede;
 * - a cap on requests in flight (p-limit);
 * - AIMD on 429: the rate is multiplied down at once and recovers additively with each success,
 *   and a `Retry-After` pauses every request of this client until it has passed.
 */
import pLimit, { type LimitFunction } from 'p-limit';

export type Clock = () => number;
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RateLimiterOptions {
  /**
   * Sustained requests per second.
   * @default 10
   */
  rps?: number;
  /**
   * Requests that may start back to back before the rate applies.
   * @default 1
   */
  burst?: number;
  /**
   * Requests in flight at once.
   * @default 4
   */
  maxInFlight?: number;
  /**
   * Factor applied to the current rate on each 429.
   * @default 0.5
   */
  decreaseFactor?: number;
  /**
   * Requests per second added back after each successful request, up to `rps`.
   * @default rps / 20
   */
  recoveryStep?: number;
  /**
   * Floor of the rate after slow-downs.
   * @default min(rps, 0.2)
   */
  minRps?: number;
  /** Milliseconds clock. @default performance.now */
  now?: Clock;
  /** Abortable sleep. @default timers/promises setTimeout */
  sleep?: Sleep;
}

export interface RateLimiterStats {
  /** The configured ceiling, requests per second. */
  configuredRps: number;
  /** The rate in force now, after 429 slow-downs and recovery. */
  currentRps: number;
  inFlight: number;
  queued: number;
}

export class RateLimiter {
  private readonly maxRps: number;
  private readonly minRps: number;
  private readonly burst: number;
  private readonly decreaseFactor: number;
  private readonly recoveryStep: number;
  private readonly now: Clock;
  private readonly sleep: Sleep;
  private readonly limit: LimitFunction;
  private currentRps: number;
  /** GCRA "theoretical arrival time" of the next request, in clock milliseconds. */
  private nextSlotAt = -Infinity;

  constructor(options: RateLimiterOptions & { now: Clock; sleep: Sleep }) {
    this.maxRps = positive(options.rps ?? 10, 'rps');
    this.burst = Math.max(1, Math.floor(options.burst ?? 1));
    this.decreaseFactor = options.decreaseFactor ?? 0.5;
    this.recoveryStep = options.recoveryStep ?? this.maxRps / 20;
    this.minRps = options.minRps ?? Math.min(this.maxRps, 0.2);
    this.now = options.now;
    this.sleep = options.sleep;
    this.currentRps = this.maxRps;
    this.limit = pLimit(Math.max(1, Math.floor(options.maxInFlight ?? 4)));
  }

  /** Runs `task` once a slot in flight and a token are available. */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.limit(async () => {
      signal?.throwIfAborted();
      const waitMs = this.reserve();
      if (waitMs > 0) await this.sleep(waitMs, signal);
      return task();
    });
  }

  /** Reserves the next slot and returns how long to wait for it (GCRA). */
  reserve(): number {
    const now = this.now();
    const interval = 1000 / this.currentRps;
    const tolerance = (this.burst - 1) * interval;
    const slot = Math.max(this.nextSlotAt, now);
    const startAt = Math.max(now, slot - tolerance);
    this.nextSlotAt = slot + interval;
    return startAt - now;
  }

  /** A 429 arrived: slow down multiplicatively, and hold every request until `Retry-After` has passed. */
  onRateLimited(retryAfterMs?: number): void {
    this.currentRps = Math.max(this.minRps, this.currentRps * this.decreaseFactor);
    const now = this.now();
    // Without tolerance in the way, the next slot is no earlier than the end of the pause.
    const pauseEnd = now + (retryAfterMs ?? 0) + (this.burst - 1) * (1000 / this.currentRps);
    this.nextSlotAt = Math.max(this.nextSlotAt, pauseEnd);
  }

  /** A request succeeded: recover additively toward the configured rate. */
  onSuccess(): void {
    this.currentRps = Math.min(this.maxRps, this.currentRps + this.recoveryStep);
  }

  stats(): RateLimiterStats {
    return {
      configuredRps: this.maxRps,
      currentRps: this.currentRps,
      inFlight: this.limit.activeCount,
      queued: this.limit.pendingCount,
    };
  }
}

function positive(value: number, name: string): number {
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}
