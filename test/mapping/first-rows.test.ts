/**
 * The roster's client_ids with their first row, kept as bytes (src/mapping/first-rows.ts,
 * src/mapping/text-pool.ts): every id found again exactly, whatever its characters, past the
 * table's growth, and never one for another.
 */
import { describe, expect, it } from 'vitest';
import { FirstRows, IdTable } from '../../src/mapping/first-rows.js';
import { TextPool } from '../../src/mapping/text-pool.js';

describe('IdTable', () => {
  it('finds every id it was given, past several growths, and no other', () => {
    const table = new IdTable();
    for (let i = 0; i < 20_000; i++) table.set(`EM-${i}`, i + 2);
    expect(table.size).toBe(20_000);
    for (let i = 0; i < 20_000; i += 997) expect(table.get(`EM-${i}`)).toBe(i + 2);
    expect(table.get('EM-20000')).toBeUndefined();
    expect(table.get('EM-1 ')).toBeUndefined();
    expect(table.get('')).toBeUndefined();
    table.set('EM-7', 99);
    expect([table.get('EM-7'), table.size]).toEqual([99, 20_000]);
  });

  it('tells apart ids that differ only by an accent, a letter beyond ASCII or a lone surrogate', () => {
    const table = new IdTable();
    const ids = ['jose', 'josé', 'jose\u0301', 'josè', '李伟', '李偉', '\u{1F600}x', '\uD800x', '\uDC00x', 'x\uD800', ''];
    ids.forEach((id, i) => table.set(id, i + 1));
    expect(table.size).toBe(ids.length);
    ids.forEach((id, i) => expect(table.get(id)).toBe(i + 1));
    expect(table.get('\uFFFDx')).toBeUndefined();
    expect(table.get('jos')).toBeUndefined();
  });
});

describe('TextPool.equals', () => {
  it('compares in place, without taking a longer or shorter text for the same', () => {
    const pool = new TextPool();
    const plain = pool.add([], ['abc'])!;
    const accented = pool.add([], ['abé'])!;
    expect([pool.equals(plain, 'abc'), pool.equals(plain, 'abd'), pool.equals(plain, 'ab'), pool.equals(plain, 'abcd'), pool.equals(plain, 'abé')]).toEqual([true, false, false, false, false]);
    expect([pool.equals(accented, 'abé'), pool.equals(accented, 'abe'), pool.equals(accented, 'abè')]).toEqual([true, false, false]);
  });
});

describe('FirstRows', () => {
  it('keeps the first row of each client_id, a first run without known records', () => {
    const rows = new FirstRows(undefined);
    rows.add('EM-1', -1, 2);
    rows.add('EM-é', -1, 3);
    expect([rows.get('EM-1'), rows.get('EM-é'), rows.has('EM-e'), rows.size]).toEqual([2, 3, false, 2]);
  });
});
