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
 * The last line is a trailer with the counts and a sha256 of every line before it, so a cut-short
 * or edited export never imports. An import checks every value as it will be stored before it
 * writes, then writes everything in one transaction: a failed import leaves the state as it was.
 *
 * The file holds the last-applied fields of every record, emails included: written mode 0600.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { checkBaseUrl } from '../client/config.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { canonicalJson, hashJson } from '../mapping/canonical-json.js';
import type { StateBackend } from './backend.js';
import { StateError } from './backend.js';

export const EXPORT_FORMAT = 'rostersync-state';
/** 2: the trailer carries the sha256 of the lines before it. */
export const EXPORT_VERSION = 2;

/** PostgreSQL `integer` columns (status, source_row, valid_records) hold no more. */
const INT4_MAX = 2_147_483_647;
/** Text both backends store as given: PostgreSQL text cannot hold NUL. */
const text = z.string().refine((value) => !value.includes('\0'), 'holds a NUL character, which the state cannot store');
const id = text.pipe(z.string().min(1, 'is empty'));
/** A time exactly as the stores write it (`Date.toISOString()`), so it is stored unchanged. */
const isoTime = text.refine((value) => !Number.isNaN(Date.parse(value)) && new Date(value).toISOString() === value, 'is not a time as rostersync writes it (e.g. 2026-01-31T03:15:00.000Z)');
const jsonText = text.refine((value) => {
  try {
    JSON.parse(value);
    return true;
  } catch {
    return false;
  }
}, 'is not JSON');
/** What a run's outcome can be (the report's `outcome`). */
const RUN_OUTCOMES = new Set(['success', 'partial', 'refused', 'failed', 'interrupted', 'dry_run']);
const int4 = z.number().int().min(0).max(INT4_MAX);

const headerLine = z.strictObject({
  kind: z.literal('header'),
  format: z.literal(EXPORT_FORMAT),
  version: z.number(),
  pipeline: text,
  exportedAt: text,
  serial: z.number(),
});
const identityLine = z.strictObject({
  kind: z.literal('identity'),
  baseUrl: text.nullable(),
  groupId: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).nullable(),
  groupCreatedHere: z.boolean(),
  groupName: text.nullable().optional(),
  groupIntent: z.strictObject({ name: id, at: isoTime }).nullable(),
  sharedPrefixes: z.array(id).nullable().optional(),
});
const recordLine = z.strictObject({
  kind: z.literal('record'),
  clientId: id,
  fieldsJson: jsonText,
  hash: id,
  runId: id,
  sourceRow: int4.nullable(),
});
const unfinishedLine = z.strictObject({
  kind: z.literal('unfinished'),
  clientId: id,
  action: z.enum(['create', 'update', 'delete']),
  state: z.enum(['planned', 'sent', 'done', 'failed', 'abandoned']),
  status: z.number().int().min(100).max(599).nullable(),
});
const runLine = z.strictObject({
  kind: z.literal('run'),
  id,
  startedAt: isoTime,
  finishedAt: isoTime.nullable(),
  outcome: text.refine((value) => RUN_OUTCOMES.has(value), `is not a run outcome (${[...RUN_OUTCOMES].join(', ')})`).nullable(),
  dryRun: z.boolean(),
  validRecords: int4.nullable(),
  sourceSha256: text.nullable(),
  countsJson: jsonText.nullable(),
});
const trailerLine = z.strictObject({
  kind: z.literal('end'),
  records: z.number().int(),
  unfinished: z.number().int(),
  runs: z.number().int(),
  /** sha256 (hex) of every byte before this line. */
  sha256: z.string().optional(),
});
const exportLine = z.discriminatedUnion('kind', [headerLine, identityLine, recordLine, unfinishedLine, runLine, trailerLine]);
type ExportLine = z.infer<typeof exportLine>;

/** Run history kept in an export (the guard needs the last successful run; people want some history). */
const RUNS_EXPORTED = 1_000;

export interface TransferCounts {
  records: number;
  unfinished: number;
  runs: number;
}

/** Writes the pipeline's state as JSON lines: header first, a trailer with counts and digest last. */
export function exportState(store: StateBackend, write: (line: string) => void, now: () => number = Date.now): TransferCounts {
  const digest = createHash('sha256');
  const emit = (line: ExportLine) => {
    const text = `${JSON.stringify(line)}\n`;
    digest.update(text);
    write(text);
  };
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
  write(`${JSON.stringify({ kind: 'end', ...counts, sha256: digest.digest('hex') } satisfies ExportLine)}\n`);
  return counts;
}

/** Dry runs are journaled too; the state's history is the real runs (bounded: runs are pruned). */
function hasRealRun(store: StateBackend): boolean {
  return store.recentRuns(IMPORT_RUNS_LOOKED_AT).some((run) => !run.dryRun);
}
const IMPORT_RUNS_LOOKED_AT = 1000;

/**
 * Reads an export (the file's whole text) into an empty state, all or nothing: every line is
 * checked first, then everything is written in one transaction. `store` must have been opened with
 * `clock` as its clock: import sets it to each run's own times so the history keeps its dates.
 */
export function importState(store: StateBackend, clock: { at: number }, text: string, origin: string): TransferCounts {
  const parsed = parseExport(text, origin, store.pipeline);
  const { identity } = parsed;
  try {
    return store.transaction(() => {
      // Dry runs (`plan`, `sync --dry-run`) leave only their journal rows: nothing an import would lose.
      if (store.ownedCount() > 0 || hasRealRun(store) || store.identity().baseUrl !== null || store.groupId() !== null) {
        throw new StateError(`the state of pipeline "${store.pipeline}" at ${store.path} is not empty; an export is imported only into an empty state. Nothing was imported.`, {
          hint: 'Import into a fresh state (a new database or state_dir), or `rostersync state export` this one first if it is the one to keep.',
        });
      }
      if (identity.baseUrl !== null) store.bindService(identity.baseUrl);
      if (identity.groupId !== null) store.setGroupId(identity.groupId, { createdHere: identity.groupCreatedHere, ...(identity.groupName ? { name: identity.groupName } : {}) });
      if (identity.groupIntent) {
        clock.at = Date.parse(identity.groupIntent.at);
        store.recordGroupIntent(identity.groupIntent.name);
      }
      for (const record of parsed.records) store.adopt({ clientId: record.clientId, fieldsJson: record.fieldsJson, hash: record.hash, runId: record.runId });
      for (const write of parsed.unfinished) {
        // A write journaled `planned` (by older versions) counts as sent: either may have written.
        const journalId = store.journalSent('imported', write.clientId, write.action);
        if (write.state === 'failed') store.journalFailed(journalId, write.status, 'failed before the state was moved (state import)', 1);
      }
      for (const run of parsed.runs) {
        clock.at = Date.parse(run.startedAt);
        store.startRun({ id: run.id, dryRun: run.dryRun, sourceSha256: run.sourceSha256 ?? '' });
        if (run.finishedAt !== null && run.outcome !== null) {
          clock.at = Date.parse(run.finishedAt);
          store.finishRun({ id: run.id, outcome: run.outcome, validRecords: run.validRecords ?? 0, counts: run.countsJson === null ? null : JSON.parse(run.countsJson) });
        }
      }
      clock.at = Date.now();
      if (identity.baseUrl !== null && identity.groupId !== null) {
        const target = { baseUrl: identity.baseUrl, groupId: identity.groupId };
        if (identity.sharedPrefixes !== undefined) store.registerTarget(target, identity.sharedPrefixes);
        const shared = store.claimOwned(target);
        if (shared.size > 0) {
          const [clientId, owner] = [...shared][0]!;
          throw new StateError(`${origin}: ${shared.size} of its records are owned by other pipelines in this state location (e.g. ${clientId} by "${owner}"). Nothing was imported.`, {
            hint: 'Two pipelines would own the same records: decide which one keeps them, `rostersync state forget` them in the other, and import again.',
          });
        }
      }
      return { records: parsed.records.length, unfinished: parsed.unfinished.length, runs: parsed.runs.length };
    });
  } catch (error) {
    if (error instanceof UserFacingError) throw error;
    // Every value was checked before the transaction: a failure here is the database's, and the
    // transaction took everything back with it.
    throw new StateError(`${origin}: the import failed while writing, and was rolled back (nothing was imported): ${(error as Error).message}`, {
      hint: 'The state is as it was before. Fix the cause named above and import again.',
      cause: error,
    });
  }
}

interface ParsedExport {
  identity: z.infer<typeof identityLine>;
  records: z.infer<typeof recordLine>[];
  unfinished: z.infer<typeof unfinishedLine>[];
  runs: z.infer<typeof runLine>[];
}

const UNEDITED = 'Give the file `rostersync state export` wrote, unedited.';

/**
 * Checks the whole file before anything is written: its trailer (counts and digest), then every
 * line and every value as the state will store it. A cut-short or edited export imports nothing.
 */
function parseExport(text: string, origin: string, pipeline: string): ParsedExport {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const fail = (number: number | undefined, message: string, hint = UNEDITED) => new StateError(`${origin}${number === undefined ? '' : `:${number}`}: ${message}; nothing was imported.`, { hint });
  const parseLine = (number: number): ExportLine => {
    let doc: unknown;
    try {
      doc = JSON.parse(lines[number - 1]!);
    } catch (error) {
      throw fail(number, `not JSON: ${(error as Error).message}`);
    }
    const line = exportLine.safeParse(doc);
    if (!line.success) {
      const issue = line.error.issues[0]!;
      throw fail(number, `${issue.path.join('.') || '(line)'}: ${issue.message}`);
    }
    return line.data;
  };
  if (lines.length === 0) throw fail(undefined, 'empty, not a rostersync state export', 'Create it with `rostersync state export`.');
  const header = parseLine(1);
  if (header.kind !== 'header') throw fail(1, 'not a rostersync state export (no header line)', 'Create it with `rostersync state export`.');
  if (header.version !== EXPORT_VERSION) {
    throw fail(1, `an export of format version ${header.version}; this rostersync reads version ${EXPORT_VERSION}`, 'Export the state again with this version of rostersync.');
  }
  // The trailer first: a cut-short file is named as such, not by whatever its last line lacks.
  const last = lines.length;
  const trailerText = lines[last - 1]!;
  let trailer: ExportLine | undefined;
  try {
    trailer = last > 1 ? parseLine(last) : undefined;
  } catch {
    trailer = undefined;
  }
  const body = text.slice(0, text.length - trailerText.length - (text.endsWith('\n') ? 1 : 0));
  if (trailer?.kind !== 'end' || trailer.sha256 === undefined) {
    throw fail(undefined, 'the export has no end line: it was cut short (or edited)', 'Export again with `rostersync state export` and check the copy arrived whole.');
  }
  if (createHash('sha256').update(body).digest('hex') !== trailer.sha256) {
    throw fail(last, 'the digest of the export does not match its content: it was edited or damaged');
  }
  const result: ParsedExport = { identity: { kind: 'identity', baseUrl: null, groupId: null, groupCreatedHere: false, groupIntent: null }, records: [], unfinished: [], runs: [] };
  const seen = { identity: 0, records: new Set<string>(), unfinished: new Set<string>(), runs: new Set<string>() };
  const once = (set: Set<string>, key: string, number: number, what: string) => {
    if (set.has(key)) throw fail(number, `${what} "${key}" appears twice`);
    set.add(key);
  };
  for (let number = 2; number < last; number++) {
    const value = parseLine(number);
    switch (value.kind) {
      case 'header':
      case 'end':
        throw fail(number, `a second ${value.kind} line`);
      case 'identity':
        if (++seen.identity > 1) throw fail(number, 'a second identity line');
        if (value.baseUrl !== null) {
          try {
            checkBaseUrl(value.baseUrl);
          } catch (error) {
            throw fail(number, `baseUrl: ${(error as Error).message}`);
          }
        }
        result.identity = value;
        break;
      case 'record': {
        once(seen.records, value.clientId, number, 'record');
        const fields: unknown = JSON.parse(value.fieldsJson);
        if (fields === null || typeof fields !== 'object' || Array.isArray(fields) || canonicalJson(fields as Parameters<typeof canonicalJson>[0]) !== value.fieldsJson) {
          throw fail(number, 'fieldsJson: not the canonical JSON object of a record\'s fields');
        }
        if (hashJson(value.fieldsJson) !== value.hash) throw fail(number, 'hash: does not match fieldsJson');
        result.records.push(value);
        break;
      }
      case 'unfinished':
        once(seen.unfinished, value.clientId, number, 'unfinished write of');
        result.unfinished.push(value);
        break;
      case 'run':
        once(seen.runs, value.id, number, 'run');
        if ((value.finishedAt === null) !== (value.outcome === null)) throw fail(number, 'finishedAt and outcome: a run has both or neither');
        result.runs.push(value);
        break;
    }
  }
  if (trailer.records !== result.records.length || trailer.unfinished !== result.unfinished.length || trailer.runs !== result.runs.length) {
    throw fail(last, 'the counts of the end line do not match the lines before it: the export was edited');
  }
  if (header.pipeline !== pipeline) {
    throw fail(1, `this export is the state of pipeline "${header.pipeline}", not "${pipeline}"`, 'Import it with the pipeline file it came from.');
  }
  return result;
}
