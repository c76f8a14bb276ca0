import { hash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ROW_KEY_LENGTH } from '../../src/mapping/row-key.js';
import { KnownRows } from '../../src/plan/known-rows.js';
import type { RowKeyPage } from '../../src/state/backend.js';

const keyOf = (label: string) => hash('sha1', label, 'base64url');
/** The client_id whose stored key is `key`, through the table's entries. */
function clientIdOf(known: KnownRows, key: string): string | undefined {
  const entry = known.entryOfRowKey(key);
  return entry < 0 ? undefined : known.clientIdAt(entry);
}
const page = (entries: Array<[string, string]>): RowKeyPage => ({ rowKeys: entries.map(([key]) => key).join(''), clientIds: entries.map(([, id]) => id).join('\0'), count: entries.length });

describe('KnownRows', () => {
  it('finds the client_id of every stored key, across pages, and nothing else', () => {
    const entries = Array.from({ length: 5000 }, (_, i): [string, string] => [keyOf(`row ${i}`), `id-${i}`]);
    // Sized for 10 but given 5000: the table grows as pages come.
    const known = KnownRows.from([page(entries.slice(0, 1000)), page(entries.slice(1000))], 10);
    expect(known.count).toBe(5000);
    for (const [key, id] of entries) expect(clientIdOf(known, key)).toBe(id);
    for (let i = 5000; i < 6000; i++) expect(clientIdOf(known, keyOf(`row ${i}`))).toBeUndefined();
  });

  it('tells keys apart that share their first 14 characters (it keeps 90 bits, the first 15)', () => {
    const base = keyOf('x');
    const other = `${base.slice(0, 14)}${base[14] === 'A' ? 'B' : 'A'}${base.slice(15)}`;
    const known = KnownRows.from([page([[base, 'a']])], 1);
    expect(clientIdOf(known, base)).toBe('a');
    expect(clientIdOf(known, other)).toBeUndefined();
  });

  it('trusts neither record when two claim one key, and skips keys that are not row keys', () => {
    const shared = keyOf('same row');
    const known = KnownRows.from(
      [page([[shared, 'a'], [keyOf('b'), 'b']]), page([[shared, 'c']]), { rowKeys: `${'*'.repeat(ROW_KEY_LENGTH)}${keyOf('d')}`, clientIds: 'bad\0d', count: 2 }],
      4,
    );
    expect(clientIdOf(known, shared)).toBeUndefined();
    expect(clientIdOf(known, keyOf('b'))).toBe('b');
    expect(clientIdOf(known, '*'.repeat(ROW_KEY_LENGTH))).toBeUndefined();
    expect(clientIdOf(known, keyOf('d'))).toBe('d');
    // A page whose keys and ids do not line up is left out whole.
    const misaligned = KnownRows.from([{ rowKeys: keyOf('e').slice(1), clientIds: 'e', count: 1 }], 1);
    expect(misaligned.count).toBe(0);
    // So is one with more client_ids than keys (a NUL inside a client_id would do that).
    const extraId = KnownRows.from([{ rowKeys: keyOf('e'), clientIds: 'e\0f', count: 1 }], 1);
    expect(extraId.count).toBe(0);
    // Growth keeps an ambiguous key ambiguous.
    const grown = KnownRows.from([page([[shared, 'a']]), page([[shared, 'c']]), page(Array.from({ length: 100 }, (_, i): [string, string] => [keyOf(`g${i}`), `g${i}`]))], 1);
    expect(clientIdOf(grown, shared)).toBeUndefined();
    expect(clientIdOf(grown, keyOf('g99'))).toBe('g99');
  });

  it('answers undefined for text of another length', () => {
    const known = KnownRows.from([page([[keyOf('a'), 'a']])], 1);
    expect(clientIdOf(known, keyOf('a').slice(0, 20))).toBeUndefined();
    expect(clientIdOf(known, `${keyOf('a')}x`)).toBeUndefined();
  });
});

describe('KnownRows: entries by client_id', () => {
  it('finds the entry of every client_id, of any length and script, across pages', () => {
    const ids = ['a', '', 'R0000001', 'ü-ß', '学者-7', 'x'.repeat(300), ...Array.from({ length: 3000 }, (_, i) => `id-${i}`)];
    const entries = ids.map((id, i): [string, string] => [keyOf(`row ${i}`), id]);
    const known = KnownRows.from([page(entries.slice(0, 4)), page(entries.slice(4, 5)), page(entries.slice(5))], 2);
    expect(known.count).toBe(ids.length);
    for (const id of ids) {
      const entry = known.entryOfClientId(id);
      expect(known.clientIdAt(entry)).toBe(id);
      expect(clientIdOf(known, entries[ids.indexOf(id)]![0])).toBe(id);
    }
    for (const other of ['b', 'R000000', 'R00000011', 'id-3000', 'ü-s']) expect(known.entryOfClientId(other)).toBe(-1);
  });

  it('leaves out the records to skip, by key and by client_id', () => {
    const known = KnownRows.from([page([[keyOf('a'), 'a'], [keyOf('b'), 'b']])], 2, new Set(['b']));
    expect(known.count).toBe(1);
    expect(clientIdOf(known, keyOf('b'))).toBeUndefined();
    expect(known.entryOfClientId('b')).toBe(-1);
    expect(clientIdOf(known, keyOf('a'))).toBe('a');
  });

  it('an empty table knows nothing', () => {
    const known = KnownRows.from([], 0);
    expect(known.count).toBe(0);
    expect(known.entryOfClientId('a')).toBe(-1);
    expect(known.entryOfRowKey(keyOf('a'))).toBe(-1);
  });
});
