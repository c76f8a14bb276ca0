/**
 * A valid row and a rejected row with the same client_id are duplicates. The record is
 * neither written nor deleted while the rejected row exists, so the valid row must not count as
 * valid: it is rejected too, pointing at the rejected row.
 */
import { describe, expect, it } from 'vitest';
import { compileMapping, mapRoster, type DesiredRecord } from '../../src/mapping/index.js';
import type { CellValue } from '../../src/sources/types.js';
import { fixtureFields, mapping, memorySource } from './builders.js';

const rows: Record<string, CellValue>[] = [
  { ID: 'a', Name: 'Ann', Active: 'yes' }, // row 2: valid
  { ID: 'b', Name: 'Bob', Active: 'yes' }, // row 3: valid
  { ID: 'a', Name: '', Active: 'yes' }, // row 4: rejected (no name), same id as row 2
  { ID: 'c', Name: '', Active: 'yes' }, // row 5: rejected, id of its own
];

async function run(policy: 'reject' | 'first' | 'last') {
  const compiled = compileMapping(mapping({ duplicate_client_ids: policy }), fixtureFields(), { mappingFile: 'm.yaml' });
  const records: DesiredRecord[] = [];
  const summary = await mapRoster(memorySource(rows), compiled, { onRecord: (r) => void records.push(r), reopen: async () => memorySource(rows) });
  return { summary, records };
}

describe('a valid row and a rejected row with the same client_id', () => {
  it.each(['reject', 'first', 'last'] as const)('are duplicates under policy %s', async (policy) => {
    const { summary } = await run(policy);
    expect(summary.counts).toMatchObject({ rowsRead: 4, valid: 1, rejected: 3 });
    const shadowed = summary.rejected.find((r) => r.provenance.row === 2)!;
    expect(shadowed.problems[0]).toMatchObject({ code: 'duplicate_client_id', column: 'ID', value: 'a' });
    expect(shadowed.problems[0]!.message).toBe('client_id "a" is also used by rejected row 4; this row is not written until that is resolved');
    // Its original cells are kept for rejected.csv.
    expect(shadowed.values.Name).toBe('Ann');
    expect(summary.rejected.map((r) => r.provenance.row)).toEqual([2, 4, 5]);
    expect(summary.duplicateClientIds.has('a')).toBe(true);
    expect(summary.rejectedClientIds.has('a')).toBe(true);
  });
});
