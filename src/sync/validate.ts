/**
 * Validation of a pipeline's roster without touching the service's records: read the source,
 * compile the mapping against the custom fields, map every row, count and explain.
 * This is the same reading and mapping code a sync run uses (design: a dry run is the same path).
 */
import type { CustomFieldsListing } from '../client/schemas.js';
import type { ResolvedPipeline } from '../config/load.js';
import { openSource } from '../sources/index.js';
import { overlayOpeners } from '../sources/layers.js';
import type { OpenedSource } from '../sources/types.js';
import { compileMapping, type CompiledMapping } from '../mapping/compile.js';
import { mapRoster, type MapRosterOptions, type RosterSummary } from '../mapping/roster.js';
import { DuplicatePeopleFinder, describePartialBlocks } from '../mapping/duplicate-people.js';

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
  const overlays = overlayOpeners(pipeline.source.overlays, { baseDir: pipeline.dir, ...(options.signal ? { signal: options.signal } : {}) });
  const people = new DuplicatePeopleFinder();
  const summary = await mapRoster(source, compiled, {
    reopen: open,
    ...(overlays.openers.length > 0 ? { overlays: overlays.openers } : {}),
    onRecord: (record) => {
      people.add(record);
      return options.onRecord?.(record);
    },
    ...(options.maxStoredRejected !== undefined ? { maxStoredRejected: options.maxStoredRejected } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  // The same person under two client_ids, among the rows (validate has no inventory to look in).
  const dropped = new Set([...summary.duplicateClientIds, ...summary.rejectedClientIds]);
  const pairs = people.inRoster().filter((pair) => !dropped.has(pair.a.clientId) && !dropped.has(pair.b.clientId));
  if (pairs.length > 0) summary.duplicatePeople = pairs;
  const { file, format, sheet, headers } = source;
  const partial = describePartialBlocks(people.partialBlocks);
  const notes = [...source.notes, ...overlays.notes(), ...(partial ? [partial] : [])];
  return { source: { file, format, ...(sheet !== undefined ? { sheet } : {}), headers, notes }, compiled, summary };
}
