/**
 * The per-row data the report shows, from a real mapping run: rows dropped by
 * `skip_rows` with the entry that matched, and rejected rows with the client_id and name that
 * could still be read.
 */
import { describe, expect, it } from 'vitest';
import { compileMapping, mapRoster } from '../../src/mapping/index.js';
import { FILTERED_ROWS_LISTED } from '../../src/mapping/roster.js';
import type { CellValue } from '../../src/sources/types.js';
import { fixtureFields, mapping, memorySource } from '../mapping/builders.js';

const people: Record<string, CellValue>[] = [
  { ID: 'a', Name: 'Ann', Active: 'yes' }, // row 2
  { ID: 'c', Name: '', Active: 'yes' }, // row 3: rejected, no name
  { ID: 'd', Name: 'Dee', Active: 'no' }, // row 4: filtered by entry 0
  { ID: 'f', Name: 'Fay', Active: 'left' }, // row 5: filtered by entry 1
];

const compiled = () =>
  compileMapping(
    mapping({ skip_rows: [{ column: 'Active', equals: 'no' }, { column: 'Active', in: ['left', 'retired'] }] }),
    fixtureFields(),
    { mappingFile: 'm.yaml' },
  );

describe('rows the report lists', () => {
  it('filtered rows carry the skip_rows entry that matched, and the client_id and name', async () => {
    const summary = await mapRoster(memorySource(people), compiled());
    expect(summary.counts.filtered).toBe(2);
    expect(summary.filteredRows?.map(({ provenance, ...rest }) => ({ row: provenance.row, ...rest }))).toEqual([
      { row: 4, reason: 'skip_rows[0]: Active equals "no"', clientId: 'd', name: 'Dee' },
      { row: 5, reason: 'skip_rows[1]: Active is one of "left", "retired"', clientId: 'f', name: 'Fay' },
    ]);
    expect(summary.filteredRowsNotStored).toBe(0);
  });

  it('a rejected row carries its client_id when readable, and no name when the name is what is wrong', async () => {
    const summary = await mapRoster(memorySource(people), compiled());
    const rejected = summary.rejected.find((row) => row.provenance.row === 3);
    expect(rejected).toMatchObject({ clientId: 'c' });
    expect(rejected).not.toHaveProperty('name');
  });

  it(`lists at most ${FILTERED_ROWS_LISTED} filtered rows and counts the rest`, async () => {
    const many = Array.from({ length: FILTERED_ROWS_LISTED + 5 }, (_, i) => ({ ID: `x${i}`, Name: `N ${i}`, Active: 'no' }));
    const summary = await mapRoster(memorySource(many), compiled());
    expect(summary.filteredRows).toHaveLength(FILTERED_ROWS_LISTED);
    expect(summary.filteredRowsNotStored).toBe(5);
  });
});
