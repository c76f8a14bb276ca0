import { describe, expect, it } from 'vitest';
import { compileMapping, mapRoster, MappingError, type DesiredRecord } from '../../src/mapping/index.js';
import type { CellValue } from '../../src/sources/types.js';
import { fixtureFields, mapping, memorySource } from './builders.js';

const people: Record<string, CellValue>[] = [
  { ID: 'a', Name: 'Ann', Active: 'yes' }, // row 2
  { ID: 'b', Name: 'Bob', Active: 'yes' }, // row 3
  { ID: 'a', Name: 'Ann Again', Active: 'yes' }, // row 4
  { ID: 'c', Name: '', Active: 'yes' }, // row 5: rejected
  { ID: 'd', Name: 'Dee', Active: 'no' }, // row 6: filtered
  { ID: 'a', Name: 'Ann Thrice', Active: 'yes' }, // row 7
  { ID: 'e', Name: 'Eve', Active: 'yes' }, // row 8
];

const compiled = (policy: 'reject' | 'first' | 'last') =>
  compileMapping(mapping({ duplicate_client_ids: policy, skip_rows: [{ column: 'Active', equals: 'no' }] }), fixtureFields(), {
    mappingFile: 'm.yaml',
  });

async function run(policy: 'reject' | 'first' | 'last', withReopen = true) {
  const records: DesiredRecord[] = [];
  const summary = await mapRoster(memorySource(people), compiled(policy), {
    onRecord: (r) => void records.push(r),
    ...(withReopen ? { reopen: async () => memorySource(people) } : {}),
  });
  return { summary, records };
}

describe('duplicate client_ids', () => {
  it.each([
    // policy, emitted (clientId@row), valid, rejected, ignored
    ['reject', ['a@2', 'b@3', 'e@8'], 2, 4, 0],
    ['first', ['a@2', 'b@3', 'e@8'], 3, 1, 2],
    ['last', ['a@2', 'b@3', 'a@4', 'a@7', 'e@8'], 3, 1, 2],
  ] as const)('policy %s', async (policy, emitted, valid, rejected, ignored) => {
    const { summary, records } = await run(policy);
    expect(records.map((r) => `${r.clientId}@${r.provenance.row}`)).toEqual(emitted);
    expect(summary.counts).toEqual({ rowsRead: 7, valid, rejected, filtered: 1, duplicatesIgnored: ignored });
    expect([...summary.duplicateClientIds]).toEqual(['a']);
  });

  it('reject: every row of the id is rejected, each pointing at the others, with its original cells', async () => {
    const { summary } = await run('reject');
    const dupes = summary.rejected.filter((r) => r.problems[0]!.code === 'duplicate_client_id');
    expect(dupes.map((r) => [r.provenance.row, r.problems[0]!.message, r.values.Name])).toEqual([
      [2, 'client_id "a" is also used by rows 4, 7', 'Ann'],
      [4, 'client_id "a" is also used by rows 2, 7', 'Ann Again'],
      [7, 'client_id "a" is also used by rows 2, 4', 'Ann Thrice'],
    ]);
    expect(dupes[0]!.problems[0]).toMatchObject({ column: 'ID', value: 'a', hint: expect.stringMatching(/duplicate_client_ids: first/) });
    expect(summary.rejected.map((r) => r.provenance.row)).toEqual([2, 4, 5, 7]);
  });

  it('reject without reopen: the first row is still rejected, its cells left empty', async () => {
    const { summary } = await run('reject', false);
    const first = summary.rejected.find((r) => r.provenance.row === 2)!;
    expect(first.values).toEqual({});
    expect(summary.rejected.find((r) => r.provenance.row === 4)!.values.Name).toBe('Ann Again');
  });

  it.each([
    ['first', [[4, 'row 4 ignored, row 2 kept'], [7, 'row 7 ignored, row 2 kept']]],
    ['last', [[2, 'row 2 ignored, row 4 kept'], [4, 'row 4 ignored, row 7 kept']]],
  ] as const)('policy %s lists the ignored rows as warnings', async (policy, expected) => {
    const { summary } = await run(policy);
    expect(summary.warnings.map((w) => [w.provenance.row, w.message.match(/row \d+ ignored, row \d+ kept/)![0]])).toEqual(expected);
  });
});

describe('mapRoster', () => {
  const plain = compileMapping(mapping({}), fixtureFields(), { mappingFile: 'm.yaml' });
  it('turns reader row errors into rejected rows and keeps reading', async () => {
    const source = memorySource([{ ID: 'a', Name: 'Ann' }, { error: 'unbalanced quote', row: 3 }, { ID: 'b', Name: 'Bob' }], ['ID', 'Name']);
    const summary = await mapRoster(source, plain);
    expect(summary.counts).toMatchObject({ rowsRead: 3, valid: 2, rejected: 1 });
    expect(summary.rejected[0]!.problems[0]).toMatchObject({ code: 'unreadable_row', message: 'unbalanced quote', value: 'raw "line', provenance: { row: 3 } });
  });

  it('caps stored rejected rows and counts the rest', async () => {
    const rows = Array.from({ length: 25 }, (_, i) => ({ ID: String(i), Name: '' }));
    const summary = await mapRoster(memorySource(rows), plain, { maxStoredRejected: 10 });
    expect(summary.counts.rejected).toBe(25);
    expect(summary.rejected).toHaveLength(10);
    expect(summary.rejectedNotStored).toBe(15);
  });

  it('checks the header before reading any row', async () => {
    const source = memorySource([{ Identifier: 'a', Name: 'Ann' }]);
    await expect(mapRoster(source, plain)).rejects.toBeInstanceOf(MappingError);
  });

  it('awaits an async onRecord', async () => {
    const seen: string[] = [];
    await mapRoster(memorySource([{ ID: 'a', Name: 'A' }, { ID: 'b', Name: 'B' }]), plain, {
      onRecord: async (r) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        seen.push(r.clientId);
      },
    });
    expect(seen).toEqual(['a', 'b']);
  });
});
