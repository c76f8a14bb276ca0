/**
 * `rostersync state export` / `state import --jsonl`: a pipeline's whole state as JSON lines, so
 * it moves between backends (SQLite → PostgreSQL, or back) without adopting its records again.
 *
 * What travels: the identity (service, group, created here, an unfinished group creation), the
 * inventory with last-applied fields, every unfinished or failed write (so the next run writes it
 * again, as it would have), the run history (the source-drop guard compares with the last
 * successful run) and the pipeline's target registration. Claims follow from the inventory. The
 * plan-signing secret does not travel: plans saved before the move are refused, as they should be,
 * since the inventory serial changes too.
 *
 * The file holds the last-applied fields of every record, emails included: written mode 0600.
 */
import { z } from 'zod';
import type { StateBackend } from './backend.js';
import { StateError } from './store.js';

export const EXPORT_FORMAT = 'rostersync-state';
export const EXPORT_VERSION = 1;

const headerLine = z.strictObject({
  kind: z.literal('header'),
  format: z.literal(EXPORT_FORMAT),
  version: z.literal(EXPORT_VERSION),
  pipeline: z.string(),
  exportedAt: z.string(),
  serial: z.number(),
});
const identityLine = z.strictObject({
  kind: z.literal('identity'),
  baseUrl: z.string().nullable(),
  groupId: z.number().int().nullable(),
  groupCreatedHere: z.boolean(),
  groupName: z.string().nullable().optional(),
  groupIntent: z.strictObject({ name: z.string(), at: z.string() }).nullable(),
  sharedPrefixes: z.array(z.string()).nullable().optional(),
});
const recordLine = z.strictObject({
  kind: z.literal('record'),
  clientId: z.string(),
  fieldsJson: z.string(),
  hash: z.string(),
  runId: z.string(),
  sourceRow: z.number().int().nullable(),
});
const unfinishedLine = z.strictObject({
  kind: z.literal('unfinished'),
  clientId: z.string(),
  action: z.enum(['create', 'update', 'delete']),
  state: z.enum(['planned', 'sent', 'done', 'failed', 'abandoned']),
  status: z.number().int().nullable(),
});
const runLine = z.strictObject({
  kind: z.literal('run'),
  id: z.string(),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  outcome: z.string().nullable(),
  dryRun: z.boolean(),
  validRecords: z.number().nullable(),
  sourceSha256: z.string().nullable(),
  countsJson: z.string().nullable(),
});
const trailerLine = z.strictObject({ kind: z.literal('end'), records: z.number().int(), unfinished: z.number().int(), runs: z.number().int() });
const exportLine = z.discriminatedUnion('kind', [headerLine, identityLine, recordLine, unfinishedLine, runLine, trailerLine]);
type ExportLine = z.infer<typeof exportLine>;

/** Run history kept in an export (the guard needs the last successful run; people want some history). */
const RUNS_EXPORTED = 1_000;

export interface TransferCounts {
  records: number;
  unfinished: number;
  runs: number;
}

/** Writes the pipeline's state as JSON lines, header first and a trailer with counts last. */
export function exportState(store: StateBackend, write: (line: string) => void, now: () => number = Date.now): TransferCounts {
  const emit = (line: ExportLine) => write(`${JSON.stringify(line)}\n`);
  const identity = store.identity();
  emit({ kind: 'header', format: EXPORT_FORMAT, version: EXPORT_VERSION, pipeline: store.pipeline, exportedAt: new Date(now()).toISOString(), serial: store.serial() });
  const registration =
    identity.baseUrl !== null && identity.groupId !== null
      ? store.targetsOn({ baseUrl: identity.baseUrl, groupId: identity.groupId }).find((target) => target.pipeline === store.pipeline)
      : undefined;
  emit({
    kind: 'identity',
    baseUrl: identity.baseUrl,
    groupId: identity.groupId,
    groupCreatedHere: identity.groupCreatedHere,
    ...(identity.groupName !== null ? { groupName: identity.groupName } : {}),
    groupIntent: store.groupIntent(),
    ...(registration ? { sharedPrefixes: registration.sharedPrefixes } : {}),
  });
  const counts: TransferCounts = { records: 0, unfinished: 0, runs: 0 };
  // Pages of ids keep a large inventory out of memory.
  let page: string[] = [];
  const flush = () => {
    for (const clientId of page) {
      const record = store.getOwned(clientId);
      if (!record) continue;
      emit({ kind: 'record', clientId, fieldsJson: record.fieldsJson, hash: record.hash, runId: record.runId, sourceRow: record.sourceRow });
      counts.records += 1;
    }
    page = [];
  };
  for (const clientId of store.ownedIds()) {
    page.push(clientId);
    if (page.length >= 1_000) flush();
  }
  flush();
  for (const [clientId, write] of store.unfinishedOrFailed()) {
    emit({ kind: 'unfinished', clientId, action: write.action, state: write.state, status: write.status });
    counts.unfinished += 1;
  }
  for (const run of store.recentRuns(RUNS_EXPORTED).reverse()) {
    emit({ kind: 'run', ...run });
    counts.runs += 1;
  }
  emit({ kind: 'end', ...counts });
  return counts;
}

/**
 * Reads an export into an empty state. `store` must have been opened with `clock` as its clock:
 * import sets it to each run's own times so the history keeps its dates.
 */
export function importState(store: StateBackend, clock: { at: number }, lines: Iterable<string>, origin: string): TransferCounts {
  if (store.ownedCount() > 0 || store.recentRuns(1).length > 0 || store.identity().baseUrl !== null || store.groupId() !== null) {
    throw new StateError(`the state of pipeline "${store.pipeline}" at ${store.path} is not empty; an export is imported only into an empty state.`, {
      hint: 'Import into a fresh state (a new database or state_dir), or `rostersync state export` this one first if it is the one to keep.',
    });
  }
  const parsed = parseExport(lines, origin, store.pipeline);
  const counts: TransferCounts = { records: 0, unfinished: 0, runs: 0 };
  const { identity } = parsed;
  if (identity.baseUrl !== null) store.bindService(identity.baseUrl);
  if (identity.groupId !== null) store.setGroupId(identity.groupId, { createdHere: identity.groupCreatedHere, ...(identity.groupName ? { name: identity.groupName } : {}) });
  if (identity.groupIntent) {
    clock.at = Date.parse(identity.groupIntent.at);
    store.recordGroupIntent(identity.groupIntent.name);
  }
  for (const record of parsed.records) {
    store.adopt({ clientId: record.clientId, fieldsJson: record.fieldsJson, hash: record.hash, runId: record.runId });
    counts.records += 1;
  }
  for (const write of parsed.unfinished) {
    const id = store.journalPlanned('imported', write.clientId, write.action);
    if (write.state === 'sent') store.journalSent(id);
    else if (write.state === 'failed') store.journalFailed(id, write.status, 'failed before the state was moved (state import)', 1);
    counts.unfinished += 1;
  }
  for (const run of parsed.runs) {
    clock.at = Date.parse(run.startedAt);
    store.startRun({ id: run.id, dryRun: run.dryRun, sourceSha256: run.sourceSha256 ?? '' });
    if (run.finishedAt !== null && run.outcome !== null) {
      clock.at = Date.parse(run.finishedAt);
      store.finishRun({ id: run.id, outcome: run.outcome, validRecords: run.validRecords ?? 0, counts: run.countsJson === null ? null : JSON.parse(run.countsJson) });
    }
    counts.runs += 1;
  }
  clock.at = Date.now();
  if (identity.baseUrl !== null && identity.groupId !== null) {
    const target = { baseUrl: identity.baseUrl, groupId: identity.groupId };
    if (identity.sharedPrefixes !== undefined) store.registerTarget(target, identity.sharedPrefixes);
    const shared = store.claimOwned(target);
    if (shared.size > 0) {
      const [clientId, owner] = [...shared][0]!;
      throw new StateError(`imported, but ${shared.size} owned records are claimed by other pipelines in this state location (e.g. ${clientId} by "${owner}").`, {
        hint: 'Two pipelines own the same records: decide which one keeps them and `rostersync state forget` them in the other.',
      });
    }
  }
  return counts;
}

interface ParsedExport {
  identity: z.infer<typeof identityLine>;
  records: z.infer<typeof recordLine>[];
  unfinished: z.infer<typeof unfinishedLine>[];
  runs: z.infer<typeof runLine>[];
}

/** Validates the whole file before anything is written: a cut-short export imports nothing. */
function parseExport(lines: Iterable<string>, origin: string, pipeline: string): ParsedExport {
  const result: ParsedExport = { identity: { kind: 'identity', baseUrl: null, groupId: null, groupCreatedHere: false, groupIntent: null }, records: [], unfinished: [], runs: [] };
  let header: z.infer<typeof headerLine> | undefined;
  let trailer: z.infer<typeof trailerLine> | undefined;
  let number = 0;
  for (const text of lines) {
    number += 1;
    if (text.trim() === '') continue;
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (error) {
      throw new StateError(`${origin}:${number}: not JSON: ${(error as Error).message}`, { hint: 'Give the file `rostersync state export` wrote, unedited.' });
    }
    const line = exportLine.safeParse(doc);
    if (!line.success) {
      const issue = line.error.issues[0]!;
      throw new StateError(`${origin}:${number}: ${issue.path.join('.') || '(line)'}: ${issue.message}`, { hint: 'Give the file `rostersync state export` wrote, unedited.' });
    }
    const value = line.data;
    if (number === 1 && value.kind !== 'header') throw new StateError(`${origin}:1: not a rostersync state export (no header line).`, { hint: 'Create it with `rostersync state export`.' });
    if (trailer) throw new StateError(`${origin}:${number}: lines after the end line.`, { hint: 'Give the file `rostersync state export` wrote, unedited.' });
    switch (value.kind) {
      case 'header':
        header = value;
        break;
      case 'identity':
        result.identity = value;
        break;
      case 'record':
        result.records.push(value);
        break;
      case 'unfinished':
        result.unfinished.push(value);
        break;
      case 'run':
        result.runs.push(value);
        break;
      case 'end':
        trailer = value;
        break;
    }
  }
  if (!header) throw new StateError(`${origin}: empty, not a rostersync state export.`, { hint: 'Create it with `rostersync state export`.' });
  if (!trailer || trailer.records !== result.records.length || trailer.unfinished !== result.unfinished.length || trailer.runs !== result.runs.length) {
    throw new StateError(`${origin}: the export is incomplete (cut short or edited): nothing was imported.`, { hint: 'Export again with `rostersync state export`.' });
  }
  if (header.pipeline !== pipeline) {
    throw new StateError(`${origin}: this export is the state of pipeline "${header.pipeline}", not "${pipeline}".`, { hint: 'Import it with the pipeline file it came from.' });
  }
  return result;
}
