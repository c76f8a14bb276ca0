/**
 * Writes the committed JSON Schemas of pipeline and mapping files (`pipelines/schema.json`,
 * `mappings/schema.json`) from their zod schemas. A development script: run it after changing a
 * schema; test/config/json-schemas.test.ts fails while they differ.
 *
 *   npx tsx scripts/write-json-schemas.ts
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { JSON_SCHEMA_FILES, renderJsonSchemas } from '../src/config/json-schemas.js';

const root = new URL('../', import.meta.url);
const rendered = renderJsonSchemas();
for (const kind of Object.keys(JSON_SCHEMA_FILES) as (keyof typeof JSON_SCHEMA_FILES)[]) {
  const path = fileURLToPath(new URL(JSON_SCHEMA_FILES[kind], root));
  writeFileSync(path, rendered[kind]);
  process.stdout.write(`wrote ${path}\n`);
}
