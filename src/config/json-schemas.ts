/**
 * Renders the JSON Schemas of pipeline and mapping files from their zod schemas (one schema per
 * shape; the committed files let editors autocomplete and a test stops them drifting).
 *
 * Regenerate after changing a schema:  npx tsx scripts/write-json-schemas.ts
 */
import { z } from 'zod';
import { mappingFileSchema } from '../mapping/schema.js';
import { pipelineSchema } from './pipeline.js';

/** Committed files, relative to the repository root. */
export const JSON_SCHEMA_FILES = {
  mapping: 'mappings/schema.json',
  pipeline: 'pipelines/schema.json',
} as const;

function render(schema: z.ZodType, id: string, title: string): string {
  // `io: 'input'`: keys with defaults are optional for the person writing the file.
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return `${JSON.stringify({ ...json, $id: id, title }, null, 2)}\n`;
}

/** The text each committed schema file must have. */
export function renderJsonSchemas(): Record<keyof typeof JSON_SCHEMA_FILES, string> {
  return {
    mapping: render(mappingFileSchema, 'rostersync-mapping.schema.json', 'rostersync mapping file'),
    pipeline: render(pipelineSchema, 'rostersync-pipeline.schema.json', 'rostersync pipeline file'),
  };
}
