/**
 * Builds the RunReport from a plan and the outcomes of applying it.
 * This is where the plan's data becomes words for people: option api_ids are shown by their
 * labels, and the estimate is put in a sentence. Pure: no I/O.
 */
import type { ResolvedPipeline } from '../config/load.js';
import { outcomeOf, type ApplyResult } from '../plan/outcomes.js';
import type { FieldValue } from '../mapping/types.js';
import type { RosterSummary } from '../mapping/roster.js';
import { planItems, type FieldChange, type Plan, type PlanEstimate, type RecordOutcome } from '../plan/types.js';
import type { CountedAction, RecordEntry, RunReport } from './types.js';
import { countedAs } from './format.js';
import { planNoteText, reportedGuard } from './plan-text.js';

/** The run's facts that the plan and the outcomes do not carry. */
export type ReportHeader = Omit<
  RunReport,
  'counts' | 'records' | 'recordsOmitted' | 'recordsFile' | 'orphans' | 'orphanNames' | 'guards' | 'estimate' | 'input' | 'rejectedRows' | 'rejectedRowsOmitted' | 'notes' | 'finishedAt' | 'durationMs'
>;

/** What a run knows of itself when it reports, planned or not. */
export interface RunFacts {
  runId: string;
  pipeline: ResolvedPipeline;
  source: RunReport['source'];
  target: RunReport['target'];
  dryRun: boolean;
  /** A `rostersync revert` run: the run it undoes. */
  revertOf?: string | undefined;
  startedAt: number;
  /** Known once the run planned; a run that failed before is `failed` (earlyFailureReport). */
  outcome?: RunReport['outcome'];
  exitCode: number;
  message?: string | undefined;
  limiter?: RunReport['limiter'];
  drift?: RunReport['drift'];
}

/** The report's header, built here only: for a run that planned and for one that failed before. */
export function reportHeader(run: RunFacts & { outcome: RunReport['outcome'] }): ReportHeader;
export function reportHeader(run: RunFacts): Omit<ReportHeader, 'outcome'>;
export function reportHeader(run: RunFacts): Omit<ReportHeader, 'outcome'> {
  return {
    version: 1,
    runId: run.runId,
    pipeline: run.pipeline.name,
    pipelineFile: run.pipeline.file,
    source: run.source,
    target: run.target,
    mode: run.pipeline.config.policy.mode,
    update: run.pipeline.config.policy.update,
    dryRun: run.dryRun,
    ...(run.revertOf ? { revertOf: run.revertOf } : {}),
    startedAt: new Date(run.startedAt).toISOString(),
    ...(run.outcome ? { outcome: run.outcome } : {}),
    exitCode: run.exitCode,
    ...(run.message ? { message: run.message } : {}),
    ...(run.limiter ? { limiter: run.limiter } : {}),
    ...(run.drift ? { drift: run.drift } : {}),
  };
}

/**
 * What a run keeps of its roster for apply and the report: everything but the roster's ids
 * (`firstRowById`), which only planning needs and which a million-row roster makes about 70 MB
 * of live heap that would otherwise be held through the writes and the report.
 */
export type ReportedRoster = Omit<RosterSummary, 'firstRowById'>;

/** The roster as the report needs it, without its ids (`ReportedRoster`). */
export function reportedRoster(roster: RosterSummary): ReportedRoster {
  const { firstRowById: _ids, ...reported } = roster;
  return reported;
}

export interface ReportInput {
  base: ReportHeader;
  plan: Plan;
  roster: ReportedRoster;
  applied?: ApplyResult;
  /** The calls the writes made (retries of a 429 and the like not counted: one per call). */
  callsMade?: number;
  /**
   * Option labels by option api_id, so reports show `Senior → Expert` rather than two UUIDs.
   * Only the changes shown to people use them; request bodies keep the api_ids.
   */
  optionLabels?: ReadonlyMap<string, string>;
  finishedAt: number;
  startedAt: number;
  notes: string[];
}

/**
 * Records report.json lists; records.jsonl beside it (report/write.ts) holds every one. A first
 * sync of a million rows would otherwise keep a million entries in memory and write them into
 * one document no tool opens.
 */
export const RECORDS_LISTED = 10_000;
/** Failed records listed beyond the first RECORDS_LISTED, so report.json names what needs attention. */
export const FAILED_RECORDS_LISTED = 10_000;
/** The file beside report.json with every record, one JSON object a line. */
export const RECORDS_FILE = 'records.jsonl';

/**
 * Every record of the run, in plan order, built as it is read: the report keeps only those it
 * lists, and the writer streams the rest to records.jsonl without holding them.
 */
export function* reportRecords(input: Pick<ReportInput, 'plan' | 'applied' | 'optionLabels'>): Generator<RecordEntry> {
  const { plan, applied } = input;
  const show = showChange(input.optionLabels);
  const newRecords = plan.newRecords?.count ?? 0;
  let position = 0;
  for (const item of planItems(plan)) {
    const result = applied ? outcomeOf(applied, item.clientId, position < newRecords ? position : undefined) : undefined;
    position += 1;
    const outcome: RecordOutcome = result?.outcome ?? (applied ? 'skipped' : 'planned');
    const entry: RecordEntry = { clientId: item.clientId, action: item.action, reason: item.reason, changes: item.changes.map(show), outcome };
    if (item.provenance) entry.provenance = item.provenance;
    if (item.pairedWith) entry.pairedWith = item.pairedWith;
    if (result?.httpStatus !== undefined) entry.httpStatus = result.httpStatus;
    if (result?.attempts !== undefined) entry.attempts = result.attempts;
    if (result?.error !== undefined) entry.error = result.error;
    if (result?.recreated) entry.reason = 'remote_deleted';
    if (result?.adopted) entry.adopted = true;
    // Fields apply found already set in the service (write: if_empty, or on_create on an adoption).
    if (result?.kept) entry.changes = entry.changes.map((change) => (result.kept!.includes(change.field) ? { ...change, kept: true } : change));
    if (result?.overwritten) {
      const labels = new Map(entry.changes.map((change) => [change.field, change.label]));
      entry.overwritten = result.overwritten.map((value) => ({ ...value, label: labels.get(value.field) ?? value.field }));
    }
    yield entry;
  }
}

export function buildRunReport(input: ReportInput): RunReport {
  const { plan, roster, applied } = input;
  const counts: RunReport['counts'] = { create: {}, update: {}, delete: {}, noop: {} };
  const bump = (action: CountedAction, outcome: RecordOutcome, by = 1) => {
    counts[action][outcome] = (counts[action][outcome] ?? 0) + by;
  };
  // One pass: counted, and listed while the caps allow (the first records, then failures).
  const records: RecordEntry[] = [];
  const adoptions: Adoptions = { named: [], count: 0, overwrote: [], overwroteCount: 0 };
  let failedListed = 0;
  let total = 0;
  for (const entry of reportRecords(input)) {
    bump(countedAs(entry.action), entry.outcome);
    if (entry.adopted && ++adoptions.count <= ADOPTIONS_NAMED) adoptions.named.push(entry.clientId);
    if (entry.overwritten && ++adoptions.overwroteCount <= ADOPTIONS_NAMED) adoptions.overwrote.push(`${entry.clientId} (${entry.overwritten.map((value) => value.label).join(', ')})`);
    if (total++ < RECORDS_LISTED) records.push(entry);
    else if (entry.outcome === 'failed' && failedListed++ < FAILED_RECORDS_LISTED) records.push(entry);
  }
  if (plan.counts.noop > 0) bump('noop', applied ? 'done' : 'planned', plan.counts.noop);
  return {
    ...input.base,
    finishedAt: new Date(input.finishedAt).toISOString(),
    durationMs: input.finishedAt - input.startedAt,
    input: {
      rowsRead: roster.counts.rowsRead,
      valid: roster.counts.valid,
      rejected: roster.counts.rejected,
      filtered: roster.counts.filtered,
      duplicates: roster.duplicateClientIds.size,
    },
    counts,
    estimate: { ...plan.estimate, ...(input.callsMade !== undefined ? { made: input.callsMade } : {}), text: estimateText(plan.estimate, input.callsMade) },
    guards: plan.guards.map(reportedGuard),
    records,
    ...(total > records.length ? { recordsOmitted: total - records.length } : {}),
    ...(total > 0 ? { recordsFile: RECORDS_FILE } : {}),
    orphans: plan.orphans,
    ...(plan.orphanNames ? { orphanNames: plan.orphanNames } : {}),
    rejectedRows: roster.rejected,
    rejectedRowsOmitted: roster.rejectedNotStored,
    ...(roster.warnedRows?.length ? { warnings: roster.warnedRows, warningsOmitted: roster.warnedRowsNotStored ?? 0 } : {}),
    ...(roster.discarded ? { discardedRows: roster.discarded } : {}),
    ...(roster.counts.filtered > 0 ? { filteredRows: roster.filteredRows ?? [], filteredRowsOmitted: roster.filteredRowsNotStored ?? roster.counts.filtered } : {}),
    ...(roster.duplicatePeople?.length ? { duplicatePeople: roster.duplicatePeople } : {}),
    ...(roster.duplicatePeopleFound ? { duplicatePeopleFound: roster.duplicatePeopleFound } : {}),
    ...(roster.layers ? { layers: { files: roster.layers.files, replaced: roster.layers.replaced, added: roster.layers.added, addedOmitted: roster.layers.addedNotStored } } : {}),
    notes: [...plan.notes.map(planNoteText), ...input.notes, ...adoptionNote(adoptions)],
  };
}

const ADOPTIONS_NAMED = 50;

/** Adoptions are listed, so an operator sees which existing records the pipeline took over. */
interface Adoptions {
  /** The first ADOPTIONS_NAMED adopted client_ids, and how many there were. */
  named: string[];
  count: number;
  /** The first ADOPTIONS_NAMED adoptions that overwrote a service value, as `id (fields)`, and how many. */
  overwrote: string[];
  overwroteCount: number;
}

function adoptionNote({ named, count, overwrote, overwroteCount }: Adoptions): string[] {
  if (count === 0) return [];
  const shown = named.join(', ') + (count > named.length ? `, … (${count - named.length} more)` : '');
  const notes = [`adopted ${count} record${count === 1 ? '' : 's'} that already existed in the group: only the managed fields were written, fields set in the UI were kept (${shown}).`];
  // Values are personal data (report.md prints notes): the fields are named here, the values in report.html/json.
  if (overwroteCount > 0) {
    notes.push(
      `${overwroteCount} adoption${overwroteCount === 1 ? '' : 's'} overwrote values the service held in managed fields, perhaps typed in its UI: ${overwrote.join('; ')}${overwroteCount > overwrote.length ? `; … (${overwroteCount - overwrote.length} more)` : ''}. The old values are in report.html and report.json.`,
    );
  }
  return notes;
}

/**
 * The report of a run that failed before its plan existed (service unreachable or refusing the
 * key, an unreadable roster, a mapping error): no records, no counts, and the error as its message.
 */
export function earlyFailureReport(input: { base: Omit<ReportHeader, 'outcome'>; startedAt: number; finishedAt: number }): RunReport {
  return {
    ...input.base,
    outcome: 'failed',
    finishedAt: new Date(input.finishedAt).toISOString(),
    durationMs: input.finishedAt - input.startedAt,
    input: { rowsRead: 0, valid: 0, rejected: 0, filtered: 0, duplicates: 0 },
    counts: { create: {}, update: {}, delete: {}, noop: {} },
    guards: [],
    records: [],
    orphans: [],
    rejectedRows: [],
    rejectedRowsOmitted: 0,
    notes: ['the run stopped before planning: nothing was written.'],
  };
}

/** `25 calls at 10/s ≈ 2.5 s`; after the writes, `…; 24 made`. */
export function estimateText(estimate: PlanEstimate, made?: number): string {
  const readFirst = [
    ...(estimate.ifAbsent ? [`${estimate.ifAbsent} create-if-absent`] : []),
    ...(estimate.ifEmpty ? [`${estimate.ifEmpty} update${estimate.ifEmpty === 1 ? '' : 's'} of if_empty fields`] : []),
    ...(estimate.undoReads ? [`${estimate.undoReads} write${estimate.undoReads === 1 ? '' : 's'} read first for policy.undo: exact`] : []),
  ];
  const ifAbsent = readFirst.length > 0 ? ` (${readFirst.join(' and ')} counted twice: read first, then written)` : '';
  const pace = estimate.rps === 0 ? 'at the rate the service allows (no max_rps)' : `at ${estimate.rps}/s ≈ ${formatSeconds(estimate.seconds)}`;
  const drift = estimate.driftReads ? `, after ${estimate.driftReads} drift-check read${estimate.driftReads === 1 ? '' : 's'}` : '';
  return `${estimate.calls} calls${ifAbsent}${drift} ${pace}${made === undefined ? '' : `; ${made} made`}`;
}

/** Coarse on purpose: an estimate, not a measurement (the measured duration uses formatDuration). */
function formatSeconds(seconds: number): string {
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 90) return `${seconds.toFixed(1)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

function showChange(optionLabels: ReadonlyMap<string, string> | undefined): (change: FieldChange) => FieldChange {
  if (!optionLabels || optionLabels.size === 0) return (change) => change;
  const one = (text: string) => optionLabels.get(text) ?? text;
  const show = (value: FieldValue | undefined): FieldValue | undefined =>
    typeof value === 'string' ? one(value) : Array.isArray(value) ? value.map(one) : value;
  return (change) => ({ ...change, before: show(change.before), after: show(change.after), ...('remote' in change ? { remote: show(change.remote) } : {}) });
}
