/**
 * The group's name kept in the state, on both backends: recorded with the id at creation,
 * forgotten when the id changes, carried by `state export` / `state import`.
 */
import { describe, expect, it } from 'vitest';
import { exportState, importState } from '../../src/state/transfer.js';
import { stateBackends } from '../support/state-backends.js';

const backends = stateBackends();

describe.each(backends)('the group name in the state on $name', (backend) => {
  it('is kept with the id it was created under, and forgotten when the id changes', async () => {
    const location = await backend.location();
    const store = location.open('reviewers');
    try {
      expect(store.identity().groupName).toBeNull();
      store.setGroupId(504, { createdHere: true, name: 'Reviewers 2026' });
      expect(store.identity()).toMatchObject({ groupId: 504, groupName: 'Reviewers 2026' });
      store.setGroupId(504);
      expect(store.identity().groupName).toBe('Reviewers 2026');

      const lines: string[] = [];
      exportState(store, (line) => lines.push(line));
      const copy = (await backend.location()).open('reviewers');
      try {
        importState(copy, { at: Date.now() }, lines.join(''), 'export.jsonl');
        expect(copy.identity()).toMatchObject({ groupId: 504, groupName: 'Reviewers 2026' });
      } finally {
        copy.close();
      }

      store.setGroupId(505);
      expect(store.identity()).toMatchObject({ groupId: 505, groupName: null });
      store.setGroupName('Renamed');
      store.retarget({ baseUrl: null, groupId: 9 });
      expect(store.identity()).toMatchObject({ groupId: 9, groupName: null });
    } finally {
      store.close();
    }
  });
});
