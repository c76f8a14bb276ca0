import { describe, expect, it } from 'vitest';
import { keptRepairs, RowKeyRepairs, unpackRepairs } from '../../src/plan/row-key-repairs.js';
import type { RowKeyRepair } from '../../src/plan/types.js';

const repair = (i: number): RowKeyRepair => ({ clientId: `id-${i}${i % 7 === 0 ? ' ü' : ''}`, rowKey: `key-${i}`.padEnd(27, 'k'), hash: `hash-${i}`.padEnd(27, 'h') });

describe('row key repairs in pages', () => {
  it('gives back every repair in order, across pages, with the pages given first kept first', () => {
    const repairs = Array.from({ length: 25_003 }, (_, i) => repair(i));
    const builder = new RowKeyRepairs();
    for (const r of repairs.slice(0, 20_001)) builder.add(r);
    const first = builder.toPages();
    expect(first.map((page) => page.count)).toEqual([10_000, 10_000, 1]);
    const more = new RowKeyRepairs(first);
    for (const r of repairs.slice(20_001)) more.add(r);
    const pages = more.toPages();
    expect(pages.flatMap(unpackRepairs)).toEqual(repairs);
  });

  it('has no page when there is nothing to repair', () => {
    expect(new RowKeyRepairs().toPages()).toEqual([]);
  });

  it('drops the repairs of the client_ids refused, and keeps the same pages when none is', () => {
    const builder = new RowKeyRepairs();
    for (let i = 0; i < 30; i++) builder.add(repair(i));
    const pages = builder.toPages();
    expect(keptRepairs(pages, () => true)).toEqual(pages);
    const kept = keptRepairs(pages, (clientId) => !clientId.startsWith('id-1'));
    expect(kept.flatMap(unpackRepairs).map((r) => r.clientId)).toEqual(Array.from({ length: 30 }, (_, i) => repair(i).clientId).filter((id) => !id.startsWith('id-1')));
    expect(keptRepairs(pages, () => false)).toEqual([]);
  });

  it('refuses a page whose columns do not line up', () => {
    expect(() => unpackRepairs({ count: 2, clientIds: 'a\0b', rowKeys: 'k', hashes: 'h\0h' })).toThrow(/1 keys/);
  });
});
