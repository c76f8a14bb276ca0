/** Builders for mapping tests: fixture custom fields, mapping files and in-memory sources. */
import type { CustomFieldsListing } from '../../src/client/schemas.js';
import { loadFixture } from '../../src/emulator/fixture.js';
import { mappingFileSchema, type MappingFile } from '../../src/mapping/schema.js';
import type { CellValue, OpenedSource, SourceItem, SourceRow } from '../../src/sources/types.js';

export function fixtureFields(): CustomFieldsListing {
  return loadFixture().orgs[0]!.custom_fields as CustomFieldsListing;
}

/** A mapping with defaults applied, from the (input-shaped) object a YAML file would hold. */
export function mapping(input: Record<string, unknown>): MappingFile {
  return mappingFileSchema.parse({ client_id: { column: 'ID' }, fields: { name: { column: 'Name' } }, ...input });
}

export function row(values: Record<string, CellValue>, rowNumber = 2, file = 'roster.csv'): SourceRow {
  return { values, provenance: { file, row: rowNumber } };
}

/** An OpenedSource over rows given in memory; rows are numbered from 2 (line 1 is the header). */
export function memorySource(
  rows: (Record<string, CellValue> | { error: string; row: number })[],
  headers?: string[],
): OpenedSource {
  const items: SourceItem[] = rows.map((r, i) =>
    'error' in r && typeof r.error === 'string' && typeof r.row === 'number'
      ? { kind: 'error', error: { provenance: { file: 'roster.csv', row: r.row }, message: r.error, raw: 'raw "line' } }
      : { kind: 'row', row: row(r as Record<string, CellValue>, i + 2) },
  );
  const allHeaders = headers ?? [...new Set(rows.flatMap((r) => ('error' in r ? [] : Object.keys(r))))];
  return {
    file: 'roster.csv',
    format: 'csv',
    headers: allHeaders,
    notes: [],
    items: (async function* () {
      yield* items;
    })(),
  };
}
