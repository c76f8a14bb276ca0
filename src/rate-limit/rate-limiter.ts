/**
 * Rate control of the requests to one service budget (design.md, decision 6). Never module-global:
 * a limiter is made per client, or shared on purpose by the clients of pipelines that spend the
 * same budget (same base URL and API key). Its pace (PaceState) is its own, or kept in a PaceStore
 * that the processes and hosts spending one budget share (src/rate-limit/, docs/scaling.md).
 *
 * Three parts:
 * - even pacing: requests start 1/rate apart, handed their turns one at a time at the rate in
 *   force, so concurrent waiters never stampede and a new rate applies at once. No burst
 *   allowance: a burst that a token bucket would take breaks a sliding- or fixed-window limit,
 *   and pacing evenly loses nothing against a bucket;
 * - a cap on requests in flight (p-limit);
 * - adaptation to the service's limit, whatever its shape (token bucket, fixed or sliding window,
 *   told or not): the limit is estimated from what the service admitted, the pace settles just
 *   under it, and probes upward again after a quiet while. A 429 neither halves the rate nor
 *   pauses other requests: the refused request is retried on the pace (retry-policy.ts), and the
 *   estimate is close enough that the pace need not be cut blindly.
 *
 * With `rps` (max_rps) set, the pace starts there and never exceeds it. Without it, the pace
 * starts at `startRps`, doubles every 0.3 s while requests queue for it, and settles at the
 * first 429s: the service's limit is found, not configured.
 */
import pLimit, { type LimitFunction } from 'p-limit';

export type Clock = () => number;
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RateLimiterOptions {
  /**
   * Ceiling, requests per second, never exceeded (a pipeline's `max_rps`). Without it the limiter
   * finds the service's limit itself.
   */
  rps?: number | undefined;
  /**
   * First rate when `rps` is not set: conservative, raised while requests wait for the pace.
   * @default 4
   */
  startRps?: number | undefined;
  /**
   * Accepted for compatibility and ignored: requests are always spaced evenly, as a burst breaks
   * window limits.
   * @deprecated
   */
  burst?: number | undefined;
  /**
   * Requests in flight at once.
   * @default 4
   */
  maxInFlight?: number | undefined;
  /**
   * Floor of the rate after slow-downs.
   * @default min(rps, 0.2)
   */
  minRps?: number | undefined;
  /** Milliseconds clock. @default performance.now */
  now?: Clock;
  /** Abortable sleep. @default timers/promises setTimeout */
  sleep?: Sleep;
}

export interface RateLimiterStats {
  /** The configured ceiling (max_rps), requests per second; 0 when the limit is discovered. */
  configuredRps: number;
  /** The pace in force now. */
  currentRps: number;
  /** The service's limit as estimated from the 429s seen; 0 before any. */
  estimatedLimitRps: number;
  /** 429s reported to this limiter. */
  rateLimited: number;
  inFlight: number;
  queued: number;
}

/** The pace settles this far under the estimated limit: margin for timing jitter on either side. */
const SETTLE = 0.97;
/** Discovery doubles the rate this often while requests wait for the pace. */
const DOUBLING_MS = 300;
/** After a 429 the pace holds under the limit this long (time spent waiting for the pace)... */
const HOLD_MS = 10_000;
/** ...then probes upward: +1 % after one second, +3 % after two, +7 %, +15 %... (doubling). */
const PROBE_STEP = 0.01;
/**
 * A probe's pace stays within this share above the calls admitted in the last second. The probe's
 * own steps raise the pace 2, 4, 8 and 14 % in its first four seconds, enough to pass an estimate
 * a few per cent low, and a client that keeps up is not held back by this bound meanwhile; it caps
 * the later steps, which serve to find a limit far above the estimate (another client on the
 * budget left), at a fifth a second: from half the limit to all of it in 4 s.
 */
const PROBE_LEAD = 0.2;
/**
 * A higher limit learned from a probe is kept once it has been paced this long without a second
 * 429: longer than JITTER_QUIET_MS, so an estimate a hair too high (a fixed window counted across
 * its edge: 21 where it admits 20) is caught by its recurring refusals, not kept as jitter.
 */
const TRIAL_MS = 5000;
/**
 * A probe's 429 learns a higher limit only when the service admitted this much more than the
 * estimate: within it, a window's count of answers (whole calls, jittered) says nothing new, and
 * a trial of it fails at the next jitter and holds the estimate down for DISPROVED_MS.
 */
const LEARN_ABOVE = 1.02;
/** How long a learned estimate that failed its trial caps the next ones (the budget's other users may leave). */
const DISPROVED_MS = 30_000;
/** Admissions and refusals are counted over this window (the usual window of a rate limit). */
const WINDOW_MS = 1000;
/**
 * The pace is above the limit when, within one window, at least this many requests were refused
 * and they are at least this share of all answered: rarer 429s are jitter or faults.
 */
const OVERSHOOT_429S = 3;
const OVERSHOOT_SHARE = 0.05;
/**
 * A lone 429 at the settled pace, this long after the last one, is timing jitter and changes
 * nothing. The pace leaves a margin of 3 % (30 ms of every second) under the limit; on a loaded
 * machine the latency of two calls a second apart differs by more now and then, and the window
 * refuses one. Cutting the pace 1 % at each such 429 ratcheted it down to 0.9 of the limit
 * (0.87 R) within a minute, and the probe that should have restored it met the next one within
 * its trial and was held under for DISPROVED_MS. One late 429 every few seconds costs a call
 * (under 2 % at R = 20); recurring ones, closer than this, still nudge the pace down.
 */
const JITTER_QUIET_MS = 4000;
/**
 * Lateness of a timer (a busy event loop) that the next turns may make up, at most half an
 * interval: any window of T ms then holds at most (T + 25) / interval + 1 requests, within the
 * margin SETTLE leaves under a window limit, while late timers cost no rate.
 */
const CATCH_UP_MS = 25;

/** The longest single wait for a turn (pump). */
const MAX_TIMER_MS = 60_000;

/**
 * What the limiter knows of the budget it paces: its own, or kept in a shared budget and shared by
 * every process that spends one budget (src/rate-limit/), so that they take turns on one pace.
 * Times are clock milliseconds: a shared state needs a clock the processes share (wall time).
 */
export interface PaceState {
  /** The pace in force, requests per second (before each process's own max_rps). */
  rate: number;
  /** Estimated limit of the service; Infinity until the first 429s. */
  ceiling: number;
  /** The last estimate made from a share of refusals: nudges never go below 0.9 of it. */
  anchor: number;
  /** When the next turn is due. */
  nextSlotAt: number;
  lastTurnAt: number;
  /** Time spent waiting for the pace since the last slow-down: drives the probe upward. */
  probeMs: number;
  /** 429s until then answer requests sent before the last slow-down: not new information. */
  holdoffUntil: number;
  /** A higher estimate learned from a probe, until it has held for TRIAL_MS without a 429. */
  trial: { previous: number; until: number } | null;
  /** A learned estimate that met a 429 on trial: later probes learn under it until one holds, or a while passed. */
  disproved: { value: number; until: number } | null;
  /** When the answers of the last window came: admitted (anything but a 429) and refused. */
  admitted: number[];
  refused: number[];
  /** When the last 429 at the settled pace came (absent from states written by an older version). */
  lastRefusalAt?: number;
}

/**
 * Where a limiter keeps its PaceState. `update` runs `change` on the state atomically — no other
 * limiter sharing it changes it meanwhile — and returns its result; `initial` makes a state when
 * there is none yet (or the stored one is stale).
 */
export interface PaceStore {
  update<T>(change: (state: PaceState) => T, initial: () => PaceState): T;
}

/** The state of one limiter alone. */
export function localPaceStore(): PaceStore {
  let state: PaceState | undefined;
  return { update: (change, initial) => change((state ??= initial())) };
}

export function initialPaceState(rate: number): PaceState {
  return {
    rate,
    ceiling: Infinity,
    anchor: Infinity,
    nextSlotAt: -Infinity,
    lastTurnAt: -Infinity,
    probeMs: 0,
    holdoffUntil: -Infinity,
    trial: null,
    disproved: null,
    admitted: [],
    refused: [],
    lastRefusalAt: -Infinity,
  };
}

export class RateLimiter {
  private readonly maxRps: number;
  private readonly minRps: number;
  private readonly startRps: number;
  private readonly now: Clock;
  private readonly sleep: Sleep;
  private readonly limit: LimitFunction;
  private readonly store: PaceStore;
  private readonly waiters: Waiter[] = [];
  private timerPending = false;
  /** The turn this limiter has claimed in the pace and waits for (claimed one at a time). */
  private claimedSlot: number | undefined;
  private latencyMs = 0;
  private rateLimitedCount = 0;

  constructor(options: RateLimiterOptions & { now: Clock; sleep: Sleep; store?: PaceStore }) {
    this.maxRps = options.rps === undefined ? Infinity : positive(options.rps, 'rps');
    this.startRps = Math.min(this.maxRps, options.rps ?? positive(options.startRps ?? 4, 'startRps'));
    this.minRps = options.minRps ?? Math.min(this.maxRps, 0.2);
    this.now = options.now;
    this.sleep = options.sleep;
    this.store = options.store ?? localPaceStore();
    this.limit = pLimit(Math.max(1, Math.floor(options.maxInFlight ?? 4)));
  }

  /** Answers admitted since the last update of the pace: noted with the next one (one transaction less per call). */
  private unrecorded: number[] = [];

  private update<T>(change: (state: PaceState) => T): T {
    return this.store.update((s) => {
      for (const at of this.unrecorded) recordEvent(s.admitted, at);
      this.unrecorded = [];
      return change(s);
    }, () => initialPaceState(this.startRps));
  }

  /** Runs `task` once a slot in flight and its turn in the pace have come. */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.limit(async () => {
      signal?.throwIfAborted();
      await this.turn(signal);
      const startedAt = this.now();
      try {
        return await task();
      } finally {
        // Smoothed latency: how long after a slow-down the answers to earlier requests still come.
        this.latencyMs = 0.8 * this.latencyMs + 0.2 * (this.now() - startedAt);
      }
    });
  }

  /**
   * Waits for this request's turn in the pace. Turns are claimed one at a time, each when the
   * previous one came, at the rate in force then, so a change of pace applies from the next turn.
   * Limiters that share a PaceStore claim in turn, so each gets an equal share of the pace while
   * it has requests waiting, and one that stops claiming leaves its share to the others at once.
   */
  turn(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, signal };
      if (signal) {
        waiter.onAbort = () => {
          const index = this.waiters.indexOf(waiter);
          if (index >= 0) this.waiters.splice(index, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
      this.pump();
    });
  }

  /** Hands out every turn that is due, then sleeps until the next one. */
  private pump(): void {
    if (this.timerPending) return;
    for (;;) {
      const waiter = this.waiters[0];
      if (!waiter) return;
      const now = this.now();
      // A turn claimed long ago by a waiter that left (aborted) is not made up for.
      if (this.claimedSlot !== undefined && this.claimedSlot < now - 1000) this.claimedSlot = undefined;
      const slot = (this.claimedSlot ??= this.update((s) => this.claim(s, now)));
      if (slot > now) {
        this.timerPending = true;
        // Bounded: a turn further away than a timer can wait (2^31-1 ms; Node fires such a timer
        // at once, with a warning: a busy loop) or a minute is waited for in steps, each checking again.
        void this.sleep(Math.min(slot - now, MAX_TIMER_MS)).then(() => {
          this.timerPending = false;
          this.pump();
        });
        return;
      }
      this.waiters.shift();
      const othersWait = this.waiters.length > 0;
      // One transaction: this turn taken, and the next one claimed for the waiter behind it.
      this.claimedSlot = this.update((s) => {
        // Others wait behind this one: demand is above the pace, so the pace may rise.
        if (othersWait) this.raise(s, Math.min(now - s.lastTurnAt, 4000 / this.paceOf(s)), now);
        s.lastTurnAt = now;
        // This turn went out later than a timer may make up (the event loop stalled past it): the
        // turns after it keep their interval from it, less that catch-up. On the old schedule the
        // next one followed it closer than an interval, and the turn a window later found one call
        // too many in it (21 calls within 947 ms at 20 req/s on a loaded machine: a 429 from a
        // sliding window, and nudges that lowered the pace).
        const interval = 1000 / this.paceOf(s);
        const catchUp = Math.min(CATCH_UP_MS, interval / 2);
        if (now - slot > catchUp) s.nextSlotAt = Math.max(s.nextSlotAt, now + interval - catchUp);
        return othersWait ? this.claim(s, now) : undefined;
      });
      if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
    }
  }

  /** Claims the next free turn. */
  private claim(s: PaceState, now: number): number {
    const interval = 1000 / this.paceOf(s);
    // A timer that fired late is made up for a little, never by bunching requests; after an idle
    // while the pace starts afresh.
    const claimed = s.nextSlotAt >= now - Math.min(CATCH_UP_MS, interval / 2) ? s.nextSlotAt : now;
    s.nextSlotAt = claimed + interval;
    return claimed;
  }

  /** The shared pace, under this limiter's own ceiling. */
  private paceOf(s: PaceState): number {
    return Math.max(this.minRps, Math.min(this.maxRps, s.rate));
  }

  /**
   * The service answered a request with anything but a 429 — a 2xx, a 404, a 500 alike: its rate
   * limit admitted it.
   */
  onAdmitted(): void {
    this.unrecorded.push(this.now());
  }

  /**
   * A 429. Only a share of refusals says the pace is above the limit: then the limit is estimated
   * from the requests the service admitted in the last window, and the pace settles under it. A
   * lone 429 at the settled pace after a quiet while is timing jitter and changes nothing; recurring
   * ones bring the pace a hair lower. A lone 429 met by the probe above the settled pace brings it
   * back there, or, when the service admitted clearly more than the estimate up to it, learns the
   * higher limit, on trial. A lone 429 far under the pace is not about the pace (a fault) and changes
   * nothing. Answers to requests sent before the last slow-down are ignored.
   */
  onRateLimited(): void {
    const now = this.now();
    this.rateLimitedCount += 1;
    this.update((s) => {
      recordEvent(s.refused, now);
      const probing = s.rate > s.ceiling * SETTLE * 1.001;
      // Timing jitter at the settled pace (not while probing above it: a probe's 429 is news, and
      // says nothing of the settled pace).
      const quietMs = now - (s.lastRefusalAt ?? -Infinity);
      if (!probing) s.lastRefusalAt = now;
      if (now < s.holdoffUntil) return;
      if (quietMs > JITTER_QUIET_MS && Number.isFinite(s.ceiling) && !probing && countRecent(s.refused, now) === 1) return;
      if (s.trial && now >= s.trial.until) {
        // The learned estimate held: the limit is at least that.
        s.trial = null;
        s.disproved = null;
      }
      if (s.disproved && now >= s.disproved.until) s.disproved = null;
      if (s.trial) {
        // The learned estimate was too high (a bucket's burst, or a fixed window measured across
        // its edge): the limit lies between the old estimate and it. Step down and try again; once
        // back at the old one, later probes learn at most under what failed here.
        const lower = 0.9 * s.ceiling;
        if (lower > s.trial.previous) return this.learn(s, lower, s.trial.previous, now);
        s.disproved = { value: s.ceiling, until: now + DISPROVED_MS };
        s.ceiling = s.anchor = s.trial.previous;
        s.trial = null;
        return this.settle(s);
      }
      const admittedCount = countRecent(s.admitted, now);
      const refusedCount = countRecent(s.refused, now);
      const admitted = admittedCount * (1000 / WINDOW_MS);
      const overshooting = refusedCount >= OVERSHOOT_429S && refusedCount >= OVERSHOOT_SHARE * (refusedCount + admittedCount);
      if (!overshooting) {
        const learned = Math.min(admitted, 0.9 * (s.disproved?.value ?? Infinity));
        if (probing && learned > LEARN_ABOVE * s.ceiling) {
          // The probe passed the estimate and the service admitted it all, up to this lone 429: the
          // limit is what it just admitted (another client on the budget left, or the first
          // estimate was low). Falling back to the old estimate would starve this run. Only a
          // probe learns: at the settled pace the service cannot have admitted more than the pace
          // sent, and a second of answer times holding more is a stalled event loop handing over
          // several answers at once (a loaded machine). Learning that count put the pace above a
          // sliding window, failed its trial, and capped the next probes for DISPROVED_MS.
          this.learn(s, learned, s.ceiling, now);
        } else if (Number.isFinite(s.ceiling) && probing) {
          // The probe touched the limit it knew: back to the settled pace, which this 429 does not
          // fault. Cutting it here too ratcheted it down a step at every probe.
          this.settle(s);
        } else if (Number.isFinite(s.ceiling) && admitted >= 0.9 * s.ceiling) {
          // A nudge: against a fixed window, a pace a hair too high meets a 429 at every edge. Never
          // below 0.9 of the last estimate, so random 429s cannot ratchet the pace down.
          s.ceiling = Math.max(this.minRps, 0.9 * s.anchor, s.ceiling * 0.99);
          this.settle(s);
        } else if (!Number.isFinite(s.ceiling) && admitted >= 0.9 * this.paceOf(s)) {
          // The first 429 while the service answered at nearly the full pace: the limit is about here
          // (e.g. max_rps set exactly at the limit).
          this.estimate(s, admitted, now);
        }
        return;
      }
      // Still above the limit (a bucket's burst may still be in the window): the admitted count bounds it.
      this.estimate(s, admitted === 0 ? this.paceOf(s) / 2 : Number.isFinite(s.ceiling) ? Math.min(s.ceiling, admitted) : admitted, now);
    });
  }

  /** The service's limit is `ceiling`: settle under it, and ignore the answers to requests already sent. */
  private estimate(s: PaceState, ceiling: number, now: number): void {
    s.ceiling = Math.max(this.minRps, ceiling);
    s.anchor = s.ceiling;
    this.settle(s);
    s.holdoffUntil = Math.max(now, s.nextSlotAt) + Math.max(50, 2 * this.latencyMs);
  }

  /**
   * A higher estimate, on trial: a token bucket admits its saved-up burst too, so a 429 soon after
   * says the burst, not the limit, was measured.
   */
  private learn(s: PaceState, ceiling: number, previous: number, now: number): void {
    this.estimate(s, ceiling, now);
    s.trial = { previous, until: s.holdoffUntil + TRIAL_MS };
  }

  /** Back to the settled pace under the estimated limit; the probe starts over. */
  private settle(s: PaceState): void {
    s.rate = Math.max(this.minRps, Math.min(this.maxRps, s.ceiling * SETTLE));
    s.probeMs = 0;
  }

  stats(): RateLimiterStats {
    const { rate, ceiling } = this.update((s) => ({ rate: this.paceOf(s), ceiling: s.ceiling }));
    return {
      configuredRps: Number.isFinite(this.maxRps) ? this.maxRps : 0,
      currentRps: rate,
      estimatedLimitRps: Number.isFinite(ceiling) ? ceiling : 0,
      rateLimited: this.rateLimitedCount,
      inFlight: this.limit.activeCount,
      queued: this.limit.pendingCount,
    };
  }

  /** `waitedMs` of demand above the pace: discovery doubles, a settled pace probes. */
  private raise(s: PaceState, waitedMs: number, now: number): void {
    if (!Number.isFinite(s.ceiling)) {
      s.rate = Math.min(this.maxRps, s.rate * 2 ** (waitedMs / DOUBLING_MS));
      return;
    }
    s.probeMs += waitedMs;
    const probing = Math.max(0, s.probeMs - HOLD_MS) / 1000;
    const probe = s.ceiling * (SETTLE + PROBE_STEP * (2 ** probing - 1));
    // A probe asks whether the service admits more than it was seen to admit, so it runs at most
    // PROBE_LEAD ahead of what it admitted in the last second. When the client cannot keep up with
    // the pace (a busy event loop fires its timers late while calls wait), raising it further asks
    // nothing, and once the client catches up it sends a burst far above the limit: against a token
    // bucket, whose burst hides the limit, the probe reached 1.8 R on a loaded machine before its
    // first 429, then met 6–7 more. The calls of a steady rate r in one window number r rounded
    // down or up, so one call more bounds the rate admitted (without it, a probe at 10 req/s never
    // rose). Meanwhile the probe's clock stops, so it resumes at its own step once the client keeps
    // up, not at the step that all that waiting would have reached.
    const lead = (countRecent(s.admitted, now) + 1) * (1 + PROBE_LEAD) * (1000 / WINDOW_MS);
    if (probe > lead) s.probeMs -= waitedMs;
    s.rate = Math.min(this.maxRps, probe, Math.max(s.ceiling * SETTLE, lead));
  }
}

interface Waiter {
  resolve: () => void;
  signal: AbortSignal | undefined;
  onAbort?: () => void;
}

/** Adds an event time to a list of the last window's (kept short: pruned from the front). */
function recordEvent(times: number[], at: number): void {
  times.push(at);
  countRecent(times, at);
}

/** How many of `times` fall in the window ending now; drops the older ones. */
function countRecent(times: number[], now: number): number {
  const from = now - WINDOW_MS;
  let old = 0;
  while (old < times.length && times[old]! <= from) old += 1;
  if (old > 0) times.splice(0, old);
  return times.length;
}

function positive(value: number, name: string): number {
  if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}
