import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JSON_SCHEMA_FILES, renderJsonSchemas } from '../../src/config/json-schemas.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('committed JSON Schemas', () => {
  const rendered = renderJsonSchemas();
  it.each(Object.entries(JSON_SCHEMA_FILES) as [keyof typeof JSON_SCHEMA_FILES, string][])(
    '%s schema (%s) matches the zod schema',
    (kind, file) => {
      const committed = readFileSync(join(ROOT, file), 'utf8');
      if (committed !== rendered[kind]) {
        throw new Error(`${file} is out of date with its zod schema. Regenerate it: npx tsx scripts/write-json-schemas.ts`);
      }
      expect(committed).toBe(rendered[kind]);
    },
  );

  it('forbids unknown keys, so editors flag typos', () => {
    const mapping = JSON.parse(rendered.mapping) as { additionalProperties?: boolean; properties: Record<string, unknown> };
    expect(mapping.additionalProperties).toBe(false);
    expect(Object.keys(mapping.properties)).toEqual(
      expect.arrayContaining(['client_id', 'fields', 'custom_fields', 'skip_rows', 'duplicate_client_ids']),
    );
  });
});
