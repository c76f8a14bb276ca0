/**
 * The decision of `policy.duplicate_people` (src/plan/duplicate-people.ts) is pure: it reads the
 * roster and the set of rows not written, and says what to hold back; it changes neither.
 */
import { describe, expect, it } from 'vitest';
import { DuplicatePeopleFinder } from '../../src/mapping/duplicate-people.js';
import { decideDuplicatePeople } from '../../src/plan/duplicate-people.js';

const ada = (clientId: string, row: number) => ({ clientId, fields: { name: 'Ada Lovelace', orcids: ['0000-0002-1825-0097'] }, provenance: { file: 'r.csv', row } });

describe('decideDuplicatePeople', () => {
  it('holds back the new client_id of a pair without changing the roster or the set it was given', () => {
    const people = new DuplicatePeopleFinder();
    people.add(ada('OLD-1', 2));
    people.add(ada('NEW-1', 3));
    const roster = { firstRowById: new Map([['OLD-1', 2], ['NEW-1', 3]]), rejected: [], rejectedNotStored: 0, counts: { valid: 2, rejected: 0 } };
    const keepAsIs = new Set<string>(['OTHER']);
    const decision = decideDuplicatePeople({ people, newIds: new Set(['NEW-1']), owned: () => [['OLD-1', ada('OLD-1', 2).fields]], roster, keepAsIs, reject: true });

    expect(keepAsIs).toEqual(new Set(['OTHER']));
    expect(roster).toMatchObject({ rejected: [], rejectedNotStored: 0, counts: { valid: 2, rejected: 0 } });
    expect(roster).not.toHaveProperty('duplicatePeople');
    expect([...decision.heldBack]).toEqual(['NEW-1']);
    expect(decision.rejected).toMatchObject([{ clientId: 'NEW-1', problems: [{ code: 'duplicate_person' }] }]);
    expect(decision.rejected[0]!.problems[0]!.message).toContain('probably the same person as OLD-1 (already in the group)');
    expect(decision.listed?.found).toMatchObject({ listed: 1, leftOut: 0 });
  });

  it('stores rejected rows only while the roster has room, and counts the rest', () => {
    const people = new DuplicatePeopleFinder();
    people.add(ada('OLD-1', 2));
    people.add(ada('NEW-1', 3));
    const full = { provenance: { file: 'r.csv', row: 9 }, values: {}, problems: [] };
    const roster = { firstRowById: new Map<string, number>(), rejected: [full], rejectedNotStored: 0, counts: { valid: 1, rejected: 1 } };
    const decision = decideDuplicatePeople({ people, newIds: new Set(['NEW-1']), roster, keepAsIs: new Set(), reject: true, maxStoredRejected: 1 });
    expect(decision).toMatchObject({ rejected: [], rejectedNotStored: 1 });
  });

  it('lets go of the identities once decided, pairs found or not: the rest of the run does not carry them', () => {
    for (const newIds of [new Set(['NEW-1']), new Set<string>()]) {
      const people = new DuplicatePeopleFinder();
      people.add(ada('OLD-1', 2));
      people.add(ada('NEW-1', 3));
      expect(people.size).toBe(2);
      const decision = decideDuplicatePeople({ people, newIds, roster: { firstRowById: new Map(), rejected: [] }, keepAsIs: new Set(), reject: false });
      expect(decision.listed?.found.listed ?? 0).toBe(newIds.size);
      expect(people.size).toBe(0);
      // Asking again would answer from nothing: refused, not an empty answer.
      expect(() => people.find()).toThrow(/after release/);
    }
  });
});
