/**
 * The column store behind the same-person check (src/mapping/identity-store.ts): what goes in
 * comes out, whatever its size; a client_id's rows resolve as the duplicate policy `last` says;
 * shared keys come in the order a scan of the rows meets them.
 */
import { describe, expect, it } from 'vitest';
import { IdentityStore, type StoredIdentity } from '../../src/mapping/identity-store.js';

const person = (clientId: string, extra: Partial<StoredIdentity> = {}, row = 2): StoredIdentity => ({
  clientId,
  provenance: { file: 'r.csv', row },
  name: 'ann lee',
  abbreviated: false,
  letters: 0,
  affiliation: 0,
  orcids: [],
  emails: [],
  ...extra,
});

describe('IdentityStore', () => {
  it('gives back every text, a record larger than its chunks and accents included', () => {
    const store = new IdentityStore();
    const long = 'ž'.repeat(1_500_000);
    store.add(person('a', { name: 'zoe muller', emails: ['zoë@x.org'] }), false);
    store.add(person('b', { name: long, orcids: ['0000-0002-1825-0097'], emails: ['b@x.org', 'b2@y.org'] }, 3), false);
    store.add(person('c', { name: '', provenance: { file: 'r.xlsx', sheet: 'People', row: 9 } }), false);
    expect(store.identity(0)).toMatchObject({ clientId: 'a', name: 'zoe muller', emails: ['zoë@x.org'], orcids: [], provenance: { file: 'r.csv', row: 2 } });
    expect(store.identity(1)).toMatchObject({ clientId: 'b', orcids: ['0000-0002-1825-0097'], emails: ['b@x.org', 'b2@y.org'] });
    expect(store.identity(1).name).toBe(long);
    expect(store.identity(2)).toMatchObject({ name: '', provenance: { file: 'r.xlsx', sheet: 'People', row: 9 } });
  });

  it('gives back every client_id as it was, kept as bytes: accents, CJK, a lone surrogate', () => {
    const store = new IdentityStore();
    const ids = ['EM-1', 'josé', '李伟', '\uD800x', '', '\u{1F600}'];
    ids.forEach((id, i) => store.add(person(id, {}, i + 2), false));
    store.add(person('\uD800x', { name: 'later' }, 9), false);
    expect(store.size).toBe(ids.length);
    ids.forEach((id, i) => {
      expect(store.clientId(i)).toBe(id);
      expect(store.identity(i).clientId).toBe(id);
      expect(store.indexOf(id)).toBe(i);
    });
    expect(store.identity(3).name).toBe('later');
    expect(store.indexOf('\uFFFDx')).toBeUndefined();
  });

  it('a later row of a client_id replaces the earlier in its place; an inventory record never replaces a row', () => {
    const store = new IdentityStore();
    store.add(person('x', { name: 'first' }, 2), false);
    store.add(person('y', { name: 'inventory' }, 3), true);
    store.add(person('x', { name: 'second' }, 4), false);
    store.add(person('z', { name: 'zed' }, 5), false);
    store.add(person('z', { name: 'stale' }, 5), true);
    store.add(person('y', { name: 'row' }, 6), false);
    expect(store.size).toBe(3);
    expect([0, 1, 2].map((i) => [store.clientId(i), store.nameOf(i)])).toEqual([['x', 'second'], ['y', 'row'], ['z', 'zed']]);
    expect(['z', 'x', 'y', 'w'].map((id) => store.indexOf(id))).toEqual([2, 0, 1, undefined]);
  });

  it('lists shared keys in the order a scan meets their second row, each row once', () => {
    const store = new IdentityStore();
    store.add(person('a', { emails: ['s@x.org', 't@x.org'] }), false);
    store.add(person('b', { emails: ['t@x.org', 't@x.org'] }), false);
    store.add(person('c', { emails: ['s@x.org'], orcids: ['0000-0002-1825-0097'] }), false);
    store.add(person('d', { emails: ['u@x.org'], orcids: ['0000-0002-1825-0097'] }), false);
    expect(store.sharedKeys('email').shared).toEqual([{ key: 't@x.org', members: [0, 1] }, { key: 's@x.org', members: [0, 2] }]);
    expect(store.sharedKeys('orcid').shared).toEqual([{ key: '0000-0002-1825-0097', members: [2, 3] }]);
    const lookup = store.keyLookup('email', (i) => i !== 0);
    expect([lookup.rowsOf('t@x.org'), lookup.rowsOf('s@x.org'), lookup.rowsOf('v@x.org')]).toEqual([[1], [2], []]);
  });
});
