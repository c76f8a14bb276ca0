/**
 * Run-time behaviour of one emulator instance that is not the service's data: the rate limit,
 * fault injection, latency, stats and clock. Changeable while running (`POST /_emulator/faults`),
 * so a test or benchmark can turn faults on and off without restarting.
 */
import { z } from 'zod';
import { createServerRateLimit, RATE_LIMIT_KINDS, type Admission, type RateLimitKind, type ServerRateLimit } from './rate-limits.js';
import { seededRandom } from '../runtime/seeded-random.js';

/** Probabilities (0..1) of each injected fault, drawn per service call from the seeded PRNG. */
export interface FaultProbabilities {
  /** Answer 500 Internal Server Error. */
  status500?: number;
  /** Answer 502 Bad Gateway. */
  status502?: number;
  /** Answer 503 Service Unavailable with `Retry-After: 1`. */
  status503?: number;
  /** Answer 429 Too Many Requests with `Retry-After: 1`, whatever the rate. */
  status429?: number;
  /** Destroy the connection without an answer. */
  reset?: number;
  /** Add `slowMs` of latency to this call. */
  slow?: number;
}

/**
 * When a faulted call fails: `before` the handler ran (nothing changed in the world), `after` it
 * ran (the write happened, but the client sees a failure — the ambiguous case), or `mixed` (each
 * faulted call picks one with equal odds).
 */
export type FaultPhase = 'before' | 'after' | 'mixed';

export interface RuntimeSettings {
  /** Requests per second admitted by the rate limit (see `rateLimitKind`); null = unlimited. */
  rps: number | null;
  /** Bucket capacity (burst); defaults to max(1, rps). */
  burst: number | null;
  /** Shape of the limit (rate-limits.ts). @default 'token-bucket' */
  rateLimitKind: RateLimitKind;
  /** Window of the window kinds, in ms; null = 1000. */
  windowMs: number | null;
  faults: Required<FaultProbabilities>;
  faultPhase: FaultPhase;
  /** Fixed latency added to every service call, in ms. */
  latencyMs: number;
  /** Latency added by the `slow` fault, in ms. */
  slowMs: number;
  /** Answer the HTML login page on unknown routes (200) and on missing/wrong keys (401). */
  htmlLoginPage: boolean;
}

const probability = z.number().min(0).max(1);

/** Body of `POST /_emulator/faults`: every key optional; `faultRate` spreads evenly (see below). */
export const runtimePatchSchema = z.strictObject({
  rps: z.number().positive().nullable().optional(),
  burst: z.number().positive().nullable().optional(),
  rateLimitKind: z.enum(RATE_LIMIT_KINDS).optional(),
  windowMs: z.number().positive().nullable().optional(),
  faultRate: probability.optional(),
  faults: z
    .strictObject({
      status500: probability.optional(),
      status502: probability.optional(),
      status503: probability.optional(),
      status429: probability.optional(),
      reset: probability.optional(),
      slow: probability.optional(),
    })
    .optional(),
  faultPhase: z.enum(['before', 'after', 'mixed']).optional(),
  latencyMs: z.number().nonnegative().optional(),
  slowMs: z.number().nonnegative().optional(),
  seed: z.number().int().optional(),
  htmlLoginPage: z.boolean().optional(),
});
export type RuntimePatch = z.infer<typeof runtimePatchSchema>;

export const NO_FAULTS: Required<FaultProbabilities> = {
  status500: 0,
  status502: 0,
  status503: 0,
  status429: 0,
  reset: 0,
  slow: 0,
};

/**
 * `faultRate` P is the total probability that a call fails; it is shared evenly by 500, 502, 503
 * and connection reset (P/4 each). Finer `faults` override single kinds.
 */
export function faultsFromRate(rate: number): Required<FaultProbabilities> {
  const share = rate / 4;
  return { ...NO_FAULTS, status500: share, status502: share, status503: share, reset: share };
}

export type FaultKind = 'status500' | 'status502' | 'status503' | 'status429' | 'reset';

export interface FaultDecision {
  kind: FaultKind | null;
  phase: 'before' | 'after';
  /** Extra latency for this call (fixed latency plus the `slow` fault). */
  delayMs: number;
}

/** Counts of service calls (never `/_emulator/` calls). */
export interface StatsSnapshot {
  /** All service calls, including rate-limited, faulted and unrouted ones. */
  total: number;
  /** "METHOD pattern" → status (or "reset") → count. Unrouted paths count under "METHOD (unmatched)". */
  calls: Record<string, Record<string, number>>;
  /** POST/PUT/PATCH/DELETE calls to service routes: all, and those answered 2xx. */
  writes: { total: number; succeeded: number };
  /** 429 answers from the rate limit (not the `status429` fault). */
  rateLimited: number;
  /** Injected faults by kind. */
  faults: Record<FaultKind | 'slow', number>;
}

export class EmulatorStats {
  private data: StatsSnapshot = EmulatorStats.empty();

  private static empty(): StatsSnapshot {
    return {
      total: 0,
      calls: {},
      writes: { total: 0, succeeded: 0 },
      rateLimited: 0,
      faults: { status500: 0, status502: 0, status503: 0, status429: 0, reset: 0, slow: 0 },
    };
  }

  record(method: string, pattern: string | null, status: number | 'reset'): void {
    const data = this.data;
    data.total++;
    const key = `${method} ${pattern ?? '(unmatched)'}`;
    const byStatus = (data.calls[key] ??= {});
    const statusKey = String(status);
    byStatus[statusKey] = (byStatus[statusKey] ?? 0) + 1;
    if (pattern !== null && method !== 'GET' && method !== 'HEAD') {
      data.writes.total++;
      if (typeof status === 'number' && status >= 200 && status < 300) data.writes.succeeded++;
    }
  }

  recordRateLimited(): void {
    this.data.rateLimited++;
  }

  recordFault(kind: FaultKind | 'slow'): void {
    this.data.faults[kind]++;
  }

  /** Count of calls to one route ("METHOD pattern"), optionally with one status. */
  count(route: string, status?: number | 'reset'): number {
    const byStatus = this.data.calls[route];
    if (!byStatus) return 0;
    if (status !== undefined) return byStatus[String(status)] ?? 0;
    return Object.values(byStatus).reduce((sum, n) => sum + n, 0);
  }

  /** A deep copy, safe to keep. */
  snapshot(): StatsSnapshot {
    return structuredClone(this.data);
  }

  reset(): void {
    this.data = EmulatorStats.empty();
  }
}

export interface RuntimeInit {
  rps?: number | null | undefined;
  burst?: number | null | undefined;
  rateLimitKind?: RateLimitKind | undefined;
  windowMs?: number | null | undefined;
  faultRate?: number | undefined;
  faults?: FaultProbabilities | undefined;
  faultPhase?: FaultPhase | undefined;
  latencyMs?: number | undefined;
  slowMs?: number | undefined;
  seed?: number | undefined;
  htmlLoginPage?: boolean | undefined;
  clock?: (() => number) | undefined;
}

/** Settings, dice, rate limit, stats and close hooks of one running emulator. */
export class EmulatorRuntime {
  readonly now: () => number;
  readonly stats = new EmulatorStats();
  settings: RuntimeSettings;
  private random: () => number;
  private rateLimit: ServerRateLimit | null = null;
  private seed: number;
  private readonly closeHooks: Array<() => void | Promise<void>> = [];

  constructor(init: RuntimeInit = {}) {
    this.now = init.clock ?? Date.now;
    this.seed = init.seed ?? 1;
    this.random = seededRandom(this.seed);
    this.settings = {
      rps: null,
      burst: null,
      rateLimitKind: 'token-bucket',
      windowMs: null,
      faults: { ...NO_FAULTS },
      faultPhase: 'before',
      latencyMs: 0,
      slowMs: 1000,
      htmlLoginPage: false,
    };
    this.update(init);
  }

  /** Applies a partial change of settings. A new `seed` restarts the dice; rate changes start a fresh limit. */
  update(patch: Omit<RuntimeInit, 'clock'>): RuntimeSettings {
    const s = this.settings;
    if (patch.rps !== undefined) s.rps = patch.rps;
    if (patch.burst !== undefined) s.burst = patch.burst;
    if (patch.rateLimitKind !== undefined) s.rateLimitKind = patch.rateLimitKind;
    if (patch.windowMs !== undefined) s.windowMs = patch.windowMs;
    if (patch.faultRate !== undefined) s.faults = faultsFromRate(patch.faultRate);
    if (patch.faults) {
      for (const [kind, p] of Object.entries(patch.faults) as Array<[keyof FaultProbabilities, number | undefined]>) {
        if (p !== undefined) s.faults[kind] = p;
      }
    }
    if (patch.faultPhase !== undefined) s.faultPhase = patch.faultPhase;
    if (patch.latencyMs !== undefined) s.latencyMs = patch.latencyMs;
    if (patch.slowMs !== undefined) s.slowMs = patch.slowMs;
    if (patch.htmlLoginPage !== undefined) s.htmlLoginPage = patch.htmlLoginPage;
    if (patch.seed !== undefined) {
      this.seed = patch.seed;
      this.random = seededRandom(patch.seed);
    }
    if (patch.rps !== undefined || patch.burst !== undefined || patch.rateLimitKind !== undefined || patch.windowMs !== undefined) {
      this.rateLimit = s.rps === null ? null : createServerRateLimit({ kind: s.rateLimitKind, rps: s.rps, burst: s.burst, windowMs: s.windowMs }, this.now);
    }
    return this.describe();
  }

  describe(): RuntimeSettings & { seed: number } {
    return { ...this.settings, faults: { ...this.settings.faults }, seed: this.seed };
  }

  /** Whether the rate limit admits the call now (`waitMs` 0), and whether its 429 may say so. */
  admit(): Admission {
    return this.rateLimit ? this.rateLimit.admit() : { waitMs: 0, spec: null };
  }

  /**
   * Rolls the dice for one call: one draw picks the fault kind (kinds share [0,1) in a fixed order),
   * one draw decides `slow`, and for phase `mixed` one more picks the phase. A fixed number of draws
   * per call keeps a seeded sequence of calls reproducible.
   */
  decideFault(): FaultDecision {
    const f = this.settings.faults;
    const roll = this.random();
    const slowRoll = this.random();
    const phaseRoll = this.random();
    let kind: FaultKind | null = null;
    let edge = 0;
    for (const candidate of ['status500', 'status502', 'status503', 'status429', 'reset'] as const) {
      edge += f[candidate];
      if (roll < edge) {
        kind = candidate;
        break;
      }
    }
    const slow = slowRoll < f.slow;
    if (kind) this.stats.recordFault(kind);
    if (slow) this.stats.recordFault('slow');
    const phase = this.settings.faultPhase === 'mixed' ? (phaseRoll < 0.5 ? 'before' : 'after') : this.settings.faultPhase;
    return { kind, phase, delayMs: this.settings.latencyMs + (slow ? this.settings.slowMs : 0) };
  }

  /** Registers work to finish when the emulator closes (e.g. pending webhook deliveries). */
  onClose(hook: () => void | Promise<void>): void {
    this.closeHooks.push(hook);
  }

  async runCloseHooks(): Promise<void> {
    for (const hook of this.closeHooks.splice(0)) await hook();
  }
}
