/**
 * Validation of a pipeline's roster without touching the service's records: read the source,
 * compile the mapping against the custom fields, map every row, count and explain.
 * This is the same reading and mapping code a sync run uses (design: a dry run is the same path).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { customFieldSchema, type CustomFieldsListing } from '../client/schemas.js';
import { ConfigError } from '../config/errors.js';
import type { ResolvedPipeline } from '../config/load.js';
import { openSource } from '../sources/index.js';
import type { OpenedSource } from '../sources/types.js';
import { compileMapping, type CompiledMapping } from './compile.js';
import { mapRoster, type MapRosterOptions, type RosterSummary } from './roster.js';

export interface ValidatePipelineOptions {
  /** The organization's custom fields (from the service, or a saved listing). */
  customFields: CustomFieldsListing;
  /** Called for each accepted record (validate itself keeps none). */
  onRecord?: MapRosterOptions['onRecord'];
  /** Cap on stored rejected rows. @default 10000 */
  maxStoredRejected?: number;
  signal?: AbortSignal;
}

export interface ValidationResult {
  source: Pick<OpenedSource, 'file' | 'format' | 'sheet' | 'headers' | 'notes'>;
  compiled: CompiledMapping;
  summary: RosterSummary;
}

export async function validatePipeline(pipeline: ResolvedPipeline, options: ValidatePipelineOptions): Promise<ValidationResult> {
  const compiled = compileMapping(pipeline.mapping, options.customFields, { mappingFile: pipeline.mappingFile });
  const sourceConfig = { ...pipeline.config.source, file: pipeline.source.file, format: pipeline.source.format };
  const open = (): Promise<OpenedSource> =>
    openSource(sourceConfig, { baseDir: pipeline.dir, ...(options.signal ? { signal: options.signal } : {}) });
  const source = await open();
  const summary = await mapRoster(source, compiled, {
    reopen: open,
    ...(options.onRecord ? { onRecord: options.onRecord } : {}),
    ...(options.maxStoredRejected !== undefined ? { maxStoredRejected: options.maxStoredRejected } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const { file, format, sheet, headers, notes } = source;
  return { source: { file, format, ...(sheet !== undefined ? { sheet } : {}), headers, notes }, compiled, summary };
}

/**
 * A saved custom-fields listing: the service's answer to `GET /custom-fields/all/` (what
 * `rostersync fields --json` prints), or just its `author_from_group` array.
 */
const listingObjectSchema = z
  .object({
    author_from_group: z.array(customFieldSchema),
    folder: z.array(customFieldSchema).default([]),
    proposal: z.array(customFieldSchema).default([]),
  })
  .loose();
const listingArraySchema = z
  .array(customFieldSchema)
  .transform((author_from_group) => ({ author_from_group, folder: [], proposal: [] }));

export function loadFieldsFile(path: string): CustomFieldsListing {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(path, [{ path: '', message: `cannot read the custom-fields listing: ${code === 'ENOENT' ? 'fields file not found' : `cannot be read (${code})`}` }], {
      hint: 'Save a listing with `rostersync fields --json > fields.json`, or leave out --fields-file to ask the service.',
      cause: error,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ConfigError(path, [{ path: '', message: `cannot read the custom-fields listing: not valid JSON: ${(error as Error).message}` }], {
      hint: 'Save the listing again with `rostersync fields --json > fields.json`.',
      cause: error,
    });
  }
  const parsed = (Array.isArray(json) ? listingArraySchema : listingObjectSchema).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(
      path,
      [{ path: issue?.path.join('.') ?? '', message: `not a custom-fields listing: ${issue?.message ?? 'unexpected shape'}` }],
      { hint: 'Expected the JSON of GET /custom-fields/all/ (`rostersync fields --json`), with an author_from_group array.' },
    );
  }
  return parsed.data as CustomFieldsListing;
}
