/**
 * An XLSX row rejected for an error cell still says whose row it is: the reader passes the cells
 * it could read, and the mapping reads the client_id from them, so that person's record is neither
 * updated with an empty value nor deleted ("Readers").
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileMapping, mapRoster } from '../../src/mapping/index.js';
import { openSource } from '../../src/sources/index.js';
import { fixtureFields, mapping } from '../mapping/builders.js';

const CORPUS = fileURLToPath(new URL('../fixtures/xlsx-corpus/', import.meta.url));

describe('XLSX rows rejected for an error cell', () => {
  it('are rejects that keep their client_id, cells and how to fix them', async () => {
    const compiled = compileMapping(mapping({ client_id: { column: 'Email' }, fields: { name: { column: 'Name' } } }), fixtureFields(), { mappingFile: 'm.yaml' });
    const source = await openSource({ file: 'real/libreoffice.xlsx' }, { baseDir: CORPUS });
    const valid: string[] = [];
    const summary = await mapRoster(source, compiled, { onRecord: (record) => void valid.push(record.clientId) });

    expect(valid).toEqual(['marie@example.org', 'niels@example.org', 'taro@example.jp', 'ada@example.org']);
    // Row 7 has no email at all: that one cannot say whose it is.
    expect(summary.rejected.map((row) => [row.provenance.row, row.clientId])).toEqual([[6, 'broken@example.org'], [7, undefined]]);
    expect(summary.unidentifiedRejected).toBe(1);
    expect([...summary.rejectedClientIds]).toEqual(['broken@example.org']);
    const rejected = summary.rejected.find((row) => row.provenance.row === 6);
    expect(rejected).toMatchObject({ clientId: 'broken@example.org', name: 'Broken Row', values: { Name: 'Broken Row', Email: 'broken@example.org', Reviews: null } });
    expect(rejected?.problems[0]?.message).toContain('cell C6 (column "Reviews") holds the error #DIV/0!');
    expect(rejected?.problems[0]?.hint).toMatch(/Correct the formula or value in the workbook/);
  });

  it('count as unidentified when the client_id cell itself holds the error', async () => {
    const compiled = compileMapping(mapping({ client_id: { column: 'Reviews' }, fields: { name: { column: 'Name' } } }), fixtureFields(), { mappingFile: 'm.yaml' });
    const source = await openSource({ file: 'real/libreoffice.xlsx' }, { baseDir: CORPUS });
    const summary = await mapRoster(source, compiled);
    // Rows 6 (#DIV/0! in Reviews) and 7 (Reviews empty).
    expect(summary.rejected.map((row) => [row.provenance.row, row.clientId])).toEqual([[6, undefined], [7, undefined]]);
    expect(summary.unidentifiedRejected).toBe(2);
  });
});
