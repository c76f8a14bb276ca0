/**
 * The row key of the plan's fast path (src/mapping/row-key.ts): everything that decides a row's
 * mapped output is in it, so changing any one of those things changes the key.
 */
import { describe, expect, it } from 'vitest';
import { ROW_KEY_LENGTH, rowKeyOf, rowKeySalt, type RowKeyScope } from '../../src/mapping/row-key.js';
import type { CellValue } from '../../src/sources/types.js';

const HEADERS = ['ID', 'Name', 'Reviews'];
const SCOPE: RowKeyScope = {
  mappingHash: 'a'.repeat(64),
  listing: { author_from_group: [{ api_id: 'f1', data_kind: 'single_option', name: 'Level', options: [{ api_id: 'o1', option: 'Senior' }] }], folder: [], proposal: [] },
  headers: HEADERS,
  format: 'csv',
  version: '1.0.0',
};
const ROW: Record<string, CellValue> = { ID: 'p1', Name: 'Ada Lovelace', Reviews: '1' };

const keyOf = (scope: Partial<RowKeyScope> = {}, values: Record<string, CellValue> = ROW, headers: readonly string[] = scope.headers ?? HEADERS): string | undefined =>
  rowKeyOf(rowKeySalt({ ...SCOPE, ...scope }), headers, { values });

describe('row key', () => {
  it('is stable, and ROW_KEY_LENGTH base64url characters', () => {
    const key = keyOf();
    expect(key).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(key).toHaveLength(ROW_KEY_LENGTH);
    expect(keyOf({}, { ...ROW })).toBe(key);
  });

  it('changes with the version, the mapping file, the listing, the headers and the format', () => {
    const base = keyOf();
    const variants = {
      version: keyOf({ version: '1.0.1' }),
      mappingHash: keyOf({ mappingHash: 'b'.repeat(64) }),
      listingLabel: keyOf({ listing: { ...(SCOPE.listing as object), author_from_group: [{ api_id: 'f1', data_kind: 'single_option', name: 'Level', options: [{ api_id: 'o1', option: 'Senior (new)' }] }] } }),
      listingField: keyOf({ listing: { ...(SCOPE.listing as object), folder: [{ api_id: 'f2', data_kind: 'str', name: 'Notes' }] } }),
      headerOrder: keyOf({ headers: ['Name', 'ID', 'Reviews'] }),
      headerAdded: keyOf({ headers: [...HEADERS, 'Extra'] }),
      format: keyOf({ format: 'xlsx' }),
    };
    for (const [what, key] of Object.entries(variants)) expect(key, what).not.toBe(base);
    expect(new Set(Object.values(variants)).size).toBe(Object.keys(variants).length);
  });

  it('changes with any cell, its type, and null versus missing', () => {
    const base = keyOf();
    const variants: Record<string, Record<string, CellValue>> = {
      id: { ...ROW, ID: 'p2' },
      padded: { ...ROW, Name: 'Ada Lovelace ' },
      number: { ...ROW, Reviews: 1 },
      boolean: { ...ROW, Reviews: true },
      empty: { ...ROW, Reviews: '' },
      null: { ...ROW, Reviews: null },
      // Shifting text between cells must not give the same key (cells are delimited).
      shifted: { ...ROW, ID: 'p1Ada', Name: ' Lovelace' },
    };
    const keys = Object.fromEntries(Object.entries(variants).map(([what, values]) => [what, keyOf({}, values)]));
    for (const [what, key] of Object.entries(keys)) expect(key, what).not.toBe(base);
    const { Reviews: _reviews, ...missing } = ROW;
    expect(keyOf({}, missing), 'missing').not.toBe(keys.null);
    expect(keyOf({}, { ...ROW, Reviews: 0 })).not.toBe(keyOf({}, { ...ROW, Reviews: -0 }));
    expect(keyOf({}, { ...ROW, Reviews: '1' })).not.toBe(keyOf({}, { ...ROW, Reviews: 1 }));
    expect(keyOf({}, { ...ROW, Reviews: 'true' })).not.toBe(keyOf({}, { ...ROW, Reviews: true }));
    expect(new Set(Object.values(keys)).size).toBe(Object.keys(keys).length);
  });

  it('ignores cells outside the header (the mapping cannot read them)', () => {
    expect(keyOf({}, { ...ROW, Other: 'x' })).toBe(keyOf());
  });

  it('is the same from the cells text a worker-thread reader sends (cells joined by NUL, empty as nothing)', () => {
    const salt = rowKeySalt(SCOPE);
    const values: Record<string, CellValue> = { ID: 'p1', Name: null, Reviews: '1' };
    expect(rowKeyOf(salt, HEADERS, { values, cellsText: 'p1\u0000\u00001' })).toBe(rowKeyOf(salt, HEADERS, { values }));
    expect(rowKeyOf(salt, HEADERS, { values, cellsText: 'p1\u0000\u00001' })).not.toBe(rowKeyOf(salt, HEADERS, { values: { ...values, Name: '' } }));
  });

  it('gives a row with a NUL in a cell no key, so it is always mapped', () => {
    expect(keyOf({}, { ...ROW, Name: 'Ada\u0000Lovelace' })).toBeUndefined();
    expect(keyOf({}, { ...ROW, Reviews: '\u0000' })).toBeUndefined();
  });
});
