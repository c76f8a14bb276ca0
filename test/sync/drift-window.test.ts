/** The drift check's rotating window (src/sync/drift-window.ts): order, wrap-around, and a place that cannot be read. */
import { describe, expect, it } from 'vitest';
import { DRIFT_WINDOW_KEY, DriftWindowPicker, readDriftWindow, windowShare, type DriftWindowState } from '../../src/sync/drift-window.js';
import { seededRandom } from '../../src/runtime/seeded-random.js';

function shuffled(ids: string[], seed: number): string[] {
  const random = seededRandom(seed);
  const copy = [...ids];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

function run(ids: string[], state: DriftWindowState, cycle: number, at: string, seed: number) {
  const picker = new DriftWindowPicker(state, windowShare(ids.length, cycle));
  for (const id of shuffled(ids, seed)) picker.add(id);
  return picker.finish(at);
}

describe('the rotating window', () => {
  it('walks every id once per pass of `cycle` runs, in order, whatever order they stream in', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => `id-${i}`);
    let state = readDriftWindow({ getMeta: () => undefined });
    const seen: string[] = [];
    for (let n = 1; n <= 7; n += 1) {
      const chosen = run(ids, state, 7, `2026-11-0${n}T02:00:00.000Z`, n);
      expect(chosen.ids).toHaveLength(143);
      seen.push(...chosen.ids);
      state = chosen.next;
    }
    expect(seen.slice(0, 1000)).toEqual([...ids].sort());
    // The seventh run ended the pass and began the next one with what was left of its window.
    expect(state).toEqual({ after: seen[1000]!, passStartedAt: '2026-11-07T02:00:00.000Z', walked: 1, lastFullPassAt: '2026-11-07T02:00:00.000Z' });
    expect(seen[1000]).toBe([...ids].sort()[0]);
  });

  it('a group smaller than one window is read whole every run', () => {
    const chosen = run(['b', 'a', 'c'], readDriftWindow({ getMeta: () => undefined }), 30, '2026-11-01T02:00:00.000Z', 1);
    expect(chosen.ids).toEqual(['a']);
    const whole = run(['b', 'a', 'c'], readDriftWindow({ getMeta: () => undefined }), 1, '2026-11-01T02:00:00.000Z', 1);
    expect(whole.ids).toEqual(['a', 'b', 'c']);
    expect(whole.next).toEqual({ after: null, passStartedAt: '2026-11-01T02:00:00.000Z', walked: 0, lastFullPassAt: '2026-11-01T02:00:00.000Z' });
  });

  it.each(['not json', '{"after": 5, "walked": -3, "passStartedAt": "yesterday"}'])('a place it cannot read (%s) starts afresh', (text) => {
    expect(readDriftWindow({ getMeta: (key) => (key === DRIFT_WINDOW_KEY ? text : undefined) })).toEqual({ after: null, passStartedAt: null, walked: 0, lastFullPassAt: null });
  });
});
