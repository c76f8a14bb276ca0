import { hash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ROW_KEY_LENGTH } from '../../src/mapping/row-key.js';
import { KnownRows } from '../../src/plan/known-rows.js';
import type { RowKeyPage } from '../../src/state/store.js';

const keyOf = (label: string) => hash('sha1', label, 'base64url');
const page = (entries: Array<[string, string]>): RowKeyPage => ({ rowKeys: entries.map(([key]) => key).join(''), clientIds: entries.map(([, id]) => id) });

describe('KnownRows', () => {
  it('finds the client_id of every stored key, across pages, and nothing else', () => {
    const entries = Array.from({ length: 5000 }, (_, i): [string, string] => [keyOf(`row ${i}`), `id-${i}`]);
    // Sized for 10 but given 5000: the table grows as pages come.
    const known = KnownRows.from([page(entries.slice(0, 1000)), page(entries.slice(1000))], 10);
    expect(known.size).toBe(5000);
    for (const [key, id] of entries) expect(known.clientIdOf(key)).toBe(id);
    for (let i = 5000; i < 6000; i++) expect(known.clientIdOf(keyOf(`row ${i}`))).toBeUndefined();
  });

  it('tells keys apart that share their first 19 characters', () => {
    const base = keyOf('x');
    const other = `${base.slice(0, 19)}${base[19] === 'A' ? 'B' : 'A'}${base.slice(20)}`;
    const known = KnownRows.from([page([[base, 'a']])], 1);
    expect(known.clientIdOf(base)).toBe('a');
    expect(known.clientIdOf(other)).toBeUndefined();
  });

  it('trusts neither record when two claim one key, and skips keys that are not row keys', () => {
    const shared = keyOf('same row');
    const known = KnownRows.from(
      [page([[shared, 'a'], [keyOf('b'), 'b']]), page([[shared, 'c']]), { rowKeys: `${'*'.repeat(ROW_KEY_LENGTH)}${keyOf('d')}`, clientIds: ['bad', 'd'] }],
      4,
    );
    expect(known.clientIdOf(shared)).toBeUndefined();
    expect(known.clientIdOf(keyOf('b'))).toBe('b');
    expect(known.clientIdOf('*'.repeat(ROW_KEY_LENGTH))).toBeUndefined();
    expect(known.clientIdOf(keyOf('d'))).toBe('d');
    // A page whose keys and ids do not line up is left out whole.
    const misaligned = KnownRows.from([{ rowKeys: keyOf('e').slice(1), clientIds: ['e'] }], 1);
    expect(misaligned.size).toBe(0);
    // Growth keeps an ambiguous key ambiguous.
    const grown = KnownRows.from([page([[shared, 'a']]), page([[shared, 'c']]), page(Array.from({ length: 100 }, (_, i): [string, string] => [keyOf(`g${i}`), `g${i}`]))], 1);
    expect(grown.clientIdOf(shared)).toBeUndefined();
    expect(grown.clientIdOf(keyOf('g99'))).toBe('g99');
  });

  it('answers undefined for text of another length', () => {
    const known = KnownRows.from([page([[keyOf('a'), 'a']])], 1);
    expect(known.clientIdOf(keyOf('a').slice(0, 20))).toBeUndefined();
    expect(known.clientIdOf(`${keyOf('a')}x`)).toBeUndefined();
  });
});
