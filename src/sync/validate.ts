/**
 * Validation of a pipeline's roster without touching the service's records: read the source,
 * compile the mapping against the custom fields, map every row, count and explain.
 * This is the same reading and mapping code a sync run uses (design: a dry run is the same path).
 */
import type { CustomFieldsListing } from '../client/schemas.js';
import type { ResolvedPipeline } from '../config/load.js';
import { openSource } from '../sources/index.js';
import { overlayOpeners } from '../sources/overlays.js';
import type { OpenedSource } from '../sources/types.js';
import { compileMapping, type CompiledMapping } from '../mapping/compile.js';
import { mapRoster, type MapRosterOptions, type RosterSummary } from '../mapping/roster.js';
import { DuplicatePeopleFinder } from '../mapping/duplicate-people.js';
import type { StateBackend } from '../state/backend.js';
import { checkDuplicatePeople, notOwned } from './duplicate-people-check.js';

export interface ValidatePipelineOptions {
  /** The organization's custom fields (from the service, or a saved listing). */
  customFields: CustomFieldsListing;
  /** Called for each accepted record (validate itself keeps none). */
  onRecord?: MapRosterOptions['onRecord'];
  /** Cap on stored rejected rows. @default 10000 */
  maxStoredRejected?: number;
  signal?: AbortSignal;
  /**
   * The pipeline's state, when it has one: the check for the same person then compares as the
   * plan does (new rows with each other and with the owned records), so both give one answer.
   */
  store?: StateBackend;
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
  const { store } = options;
  // With a state: which mapped rows the inventory lacks, looked up a batch at a time as in a plan.
  // An empty inventory owns none: every row is new (as without a state), and no set of ids is kept.
  const newIds = store && store.ownedCount() > 0 ? new Set<string>() : undefined;
  const batch: string[] = [];
  const lookUp = () => {
    if (store && newIds) for (const clientId of notOwned(store, batch)) newIds.add(clientId);
    batch.length = 0;
  };
  const summary = await mapRoster(source, compiled, {
    reopen: open,
    ...(overlays.openers.length > 0 ? { overlays: overlays.openers } : {}),
    onRecord: (record) => {
      people.add(record);
      if (store && batch.push(record.clientId) >= store.lookupBatch) lookUp();
      return options.onRecord?.(record);
    },
    ...(options.maxStoredRejected !== undefined ? { maxStoredRejected: options.maxStoredRejected } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  lookUp();
  // The same person under two client_ids: the plan's decision (src/plan/duplicate-people.ts), on the
  // same rows set aside (rejected for their values; duplicated ids under `reject`).
  const keepAsIs = new Set(summary.rejectedClientIds);
  if (compiled.duplicatePolicy === 'reject') for (const clientId of summary.duplicateClientIds) keepAsIs.add(clientId);
  const samePerson = checkDuplicatePeople({
    people,
    ...(store && newIds ? { store, newIds } : {}),
    roster: summary,
    sourceFile: source.file,
    keepAsIs,
    policy: pipeline.config.policy.duplicate_people,
    ...(options.maxStoredRejected !== undefined ? { maxStoredRejected: options.maxStoredRejected } : {}),
  });
  const { file, format, sheet, headers } = source;
  const notes = [...source.notes, ...overlays.notes(), ...samePerson.notes];
  return { source: { file, format, ...(sheet !== undefined ? { sheet } : {}), headers, notes }, compiled, summary };
}
