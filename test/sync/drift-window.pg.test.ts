/**
 * The drift check's rotating window (src/sync/drift-window.ts) kept in the state on both backends:
 * a cycle of runs, each reopening the state, reads back every owned record exactly once, in
 * client_id order whatever order the backend lists them in.
 */
import { describe, expect, it } from 'vitest';
import { pickDriftReads } from '../../src/sync/drift.js';
import { readDriftWindow, saveDriftWindow } from '../../src/sync/drift-window.js';
import type { StateBackend } from '../../src/state/backend.js';
import { stateBackends } from '../support/state-backends.js';

const backends = stateBackends();

function own(store: StateBackend, clientIds: string[]): void {
  for (const clientId of clientIds) {
    const journalId = store.journalSent('r', clientId, 'create');
    store.recordApplied({ journalId, clientId, fieldsJson: '{}', hash: 'h', runId: 'r', sourceRow: null, status: 200, attempts: 1 });
  }
}

describe.each(backends)('the drift window on $name', (backend) => {
  it('reads every owned record once in drift_cycle runs, its place kept in the state between runs', async () => {
    const location = await backend.location();
    // Inserted out of order: the window follows client_id order, not the backend's.
    const ids = Array.from({ length: 23 }, (_, i) => `c${String((i * 7) % 23).padStart(2, '0')}`);
    const setup = location.open('p');
    own(setup, ids);
    setup.close();
    const read: string[][] = [];
    let at = Date.parse('2026-11-01T02:00:00Z');
    for (let run = 0; run < 5; run += 1) {
      const store = location.open('p');
      const pick = pickDriftReads({ store, ownedCount: ids.length, sampleSize: 0, cycle: 5, rosterIds: new Map(ids.map((id) => [id, 1])), notUnchanged: new Set(), random: () => 0, now: () => at });
      read.push(pick.clientIds);
      saveDriftWindow(store, pick.nextWindow!);
      store.close();
      at += 24 * 3600_000;
    }
    expect(read.map((window) => window.length)).toEqual([5, 5, 5, 5, 5]);
    // The fifth run reads the last three, then wraps round to the first two of the next pass.
    expect(read.flat().slice(0, 23)).toEqual([...ids].sort());
    expect(read[4]!.slice(3)).toEqual(['c00', 'c01']);
    const store = location.open('p');
    expect(readDriftWindow(store)).toEqual({ after: 'c01', passStartedAt: '2026-11-05T02:00:00.000Z', walked: 2, lastFullPassAt: '2026-11-05T02:00:00.000Z' });
    store.close();
  });
});
