/**
 * The times in a shared pace (docs/scaling.md, "One clock"). A PaceState holds clock milliseconds:
 * when the next turn is due, when the last answers came. Processes that share it must read them on
 * one clock, or a process whose clock runs behind waits for turns that, on its clock, lie in the
 * future, while the others take every turn: it starves.
 *
 * - On one host the clock is the host's monotonic clock (hostClock): the same for every process
 *   and container of the host, and never stepped by NTP or by hand, unlike the wall clock.
 * - Across hosts (the pace row in PostgreSQL) it is the database's clock: each process measures how
 *   far its own clock is from it (ClockOffset) and the store moves the state's times between the
 *   two (shiftPace), so a host's clock may be off by any amount.
 *
 * A pace read from a file or row is only advice: one whose times cannot have been written by a
 * limiter (a turn hours ahead, answers from the future) is discarded, not obeyed (plausiblePace).
 */
import type { PaceState } from './rate-limiter.js';

/** The host's monotonic clock in milliseconds (CLOCK_MONOTONIC on Linux: shared by its processes). */
export const hostClock = (): number => Number(process.hrtime.bigint()) / 1e6;

/**
 * How far ahead a limiter may schedule anything: turns come at least 0.2 a second (5 s apart, more
 * with several processes waiting), a slow-down holds off twice the latency of a call (each bounded
 * by its request timeout), a disproved estimate caps the probe for 30 s. A pace that says to wait
 * longer was not written by a limiter (or came from another boot of the host).
 */
export const MAX_AHEAD_MS = 5 * 60_000;
/** Times of the past read on another process's clock: the measured offset may err by a round trip. */
const PAST_SLACK_MS = 1000;

/** Whether `state` is a pace a limiter could have written by `now` (on the clock its times are on). */
export function plausiblePace(state: PaceState, now: number): boolean {
  const isNumber = (value: unknown): value is number => typeof value === 'number' && !Number.isNaN(value);
  const past = (value: unknown) => isNumber(value) && value <= now + PAST_SLACK_MS;
  const ahead = (value: unknown) => isNumber(value) && value <= now + MAX_AHEAD_MS;
  const positive = (value: unknown) => isNumber(value) && value > 0;
  return (
    positive(state.rate) &&
    positive(state.ceiling) &&
    positive(state.anchor) &&
    isNumber(state.probeMs) &&
    ahead(state.nextSlotAt) &&
    ahead(state.holdoffUntil) &&
    past(state.lastTurnAt) &&
    (state.lastRefusalAt === undefined || past(state.lastRefusalAt)) &&
    Array.isArray(state.admitted) &&
    state.admitted.every(past) &&
    Array.isArray(state.refused) &&
    state.refused.every(past) &&
    (state.trial == null || (ahead(state.trial.until) && positive(state.trial.previous))) &&
    (state.disproved == null || (ahead(state.disproved.until) && positive(state.disproved.value)))
  );
}

/** Moves every time of `state` by `delta` ms, in place (±Infinity stays as it is). */
export function shiftPace(state: PaceState, delta: number): PaceState {
  if (delta === 0) return state;
  state.nextSlotAt += delta;
  state.lastTurnAt += delta;
  state.holdoffUntil += delta;
  if (state.lastRefusalAt !== undefined) state.lastRefusalAt += delta;
  if (state.trial) state.trial.until += delta;
  if (state.disproved) state.disproved.until += delta;
  for (let i = 0; i < state.admitted.length; i += 1) state.admitted[i]! += delta;
  for (let i = 0; i < state.refused.length; i += 1) state.refused[i]! += delta;
  return state;
}

/**
 * How far a shared clock (the database's) is ahead of ours. A reading of the shared clock taken
 * `d` ms before our reading says `shared - ours = offset - d`: never more than the true offset, so
 * the greatest recent reading is the best. It may slip by DRIFT_PER_MS meanwhile, so that clocks
 * that drift apart (or a shared clock set back) are followed.
 */
export class ClockOffset {
  private best: { offset: number; at: number } | undefined;

  /** Takes a reading of the shared clock and ours, both just read; returns the offset now. */
  sample(shared: number, ours: number): number {
    this.best = { offset: Math.max(shared - ours, this.at(ours)), at: ours };
    return this.best.offset;
  }

  /** The offset at `ours`, from the readings so far (-Infinity before the first). */
  at(ours: number): number {
    return this.best ? this.best.offset - Math.max(0, ours - this.best.at) * DRIFT_PER_MS : -Infinity;
  }
}

/** 1 ms per second: far more than clocks drift under NTP (under 0.5 ms/s), far less than a turn. */
const DRIFT_PER_MS = 1e-3;

/** A stored pace's age: absent or discarded when untouched for `staleMs`, or written "later" than now. */
export function freshPace(updatedAt: number, now: number, staleMs: number): boolean {
  return updatedAt <= now + PAST_SLACK_MS && now - updatedAt < staleMs;
}
