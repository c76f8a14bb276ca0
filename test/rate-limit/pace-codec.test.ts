import { describe, expect, it } from 'vitest';
import { initialPaceState } from '../../src/rate-limit/rate-limiter.js';
import { decodePace, encodePace } from '../../src/rate-limit/budget-same-host.js';

describe('the shared pace codec', () => {
  it('keeps infinite limits, nested ones too, and the answer times', () => {
    const state = { ...initialPaceState(4), trial: { previous: Infinity, until: 12.5 }, admitted: [1.25, 2.5], refused: [3] };
    const decoded = decodePace(encodePace(state));
    expect(decoded).toEqual(state);
    expect(decoded.ceiling).toBe(Infinity);
    expect(decoded.nextSlotAt).toBe(-Infinity);
    expect(decoded.trial?.previous).toBe(Infinity);
  });

  it('reads a state an older version wrote (infinite values as strings)', () => {
    const old = JSON.stringify({ ...initialPaceState(4), ceiling: 'Infinity', anchor: 'Infinity', nextSlotAt: '-Infinity', lastTurnAt: '-Infinity' });
    const decoded = decodePace(old);
    expect(decoded.ceiling).toBe(Infinity);
    expect(decoded.nextSlotAt).toBe(-Infinity);
  });
});
