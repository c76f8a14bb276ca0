/**
 * A shared pace is advice, never an order (src/rate-limit/pace-times.ts): a pace whose next turn
 * lies days ahead, or whose answers come from the future, is discarded by the store, and the
 * limiter never waits longer than a bounded timer at a time, whatever pace it was handed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { initialPaceState, RateLimiter, type PaceState } from '../../src/rate-limit/rate-limiter.js';
import { encodePace, sameHostPaceStore } from '../../src/rate-limit/budget-same-host.js';

const DAY = 24 * 3600_000;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A budget file as another process (or another user) left it, its row written "just now" on both clocks a version may use. */
function plantedBudget(state: PaceState, updatedAt: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'implausible-pace-'));
  dirs.push(dir);
  const file = join(dir, 'budget-test.sqlite');
  const db = new Database(file);
  db.exec('CREATE TABLE pace (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL, updated_at REAL NOT NULL)');
  db.prepare('INSERT INTO pace (id, state, updated_at) VALUES (1, ?, ?)').run(encodePace(state), updatedAt);
  db.close();
  return file;
}

describe('a shared pace no limiter could have written', () => {
  // A fixed time near the wall clock's, so that a store on either clock takes the rows for fresh.
  const now = Date.now();
  const clock = () => now;

  it.each([
    ['a next turn ten days ahead', { nextSlotAt: now + 10 * DAY }],
    ['a hold-off a year ahead', { holdoffUntil: now + 365 * DAY }],
    ['answers from the future', { admitted: [now + DAY] }],
    ['a last turn from the future', { lastTurnAt: now + DAY }],
    ['a rate that is not a number', { rate: Number.NaN }],
  ] as Array<[string, Partial<PaceState>]>)('is discarded by the host\'s store: %s', (_what, planted) => {
    const file = plantedBudget({ ...initialPaceState(4), ...planted }, now);
    const store = sameHostPaceStore(file, () => {}, { clock });
    const seen = store.update((state) => ({ ...state }), () => initialPaceState(4));
    expect(seen).toEqual(initialPaceState(4));
  });

  it('a plausible pace is kept and shared', () => {
    const file = plantedBudget({ ...initialPaceState(4), rate: 7, nextSlotAt: now + 250, admitted: [now - 10] }, now - 5);
    const store = sameHostPaceStore(file, () => {}, { clock });
    expect(store.update((state) => ({ rate: state.rate, nextSlotAt: state.nextSlotAt }), () => initialPaceState(4))).toEqual({ rate: 7, nextSlotAt: now + 250 });
  });

  it('is discarded when its row was written later than now on this clock', () => {
    const file = plantedBudget({ ...initialPaceState(4), rate: 7 }, now + DAY);
    const store = sameHostPaceStore(file, () => {}, { clock });
    expect(store.update((state) => state.rate, () => initialPaceState(4))).toBe(4);
  });
});

describe('the limiter\'s timers', () => {
  it('never wait beyond a bounded step, whatever turn the pace hands out', async () => {
    // A store that insists on a turn 30 days ahead: beyond what one timer can hold (2^31-1 ms).
    const now = 0;
    const state = { ...initialPaceState(4), nextSlotAt: now + 30 * DAY };
    const waits: number[] = [];
    let wake: (() => void) | undefined;
    const limiter = new RateLimiter({
      now: () => now,
      sleep: (ms) => {
        waits.push(ms);
        return new Promise<void>((done) => (wake = done));
      },
      store: { update: (change) => change(state) },
    });
    const aborted = new AbortController();
    const turn = limiter.turn(aborted.signal).catch(() => 'aborted');
    for (let step = 0; step < 3; step += 1) {
      await Promise.resolve();
      wake?.();
      await new Promise((done) => setImmediate(done));
    }
    aborted.abort();
    await expect(turn).resolves.toBe('aborted');
    expect(waits.length).toBeGreaterThanOrEqual(3);
    for (const ms of waits) expect(ms).toBeLessThanOrEqual(60_000);
  });
});
