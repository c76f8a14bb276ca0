/**
 * Small formatting helpers shared by the Markdown, HTML and console renderings of a `RunReport`.
 * Pure functions, no I/O.
 */
import type { FieldValue } from '../mapping/types.js';
import type { Provenance } from '../sources/types.js';
import { planItemSchema, recordChangeOf } from '../plan/types.js';
import type { CountedAction, PlanAction, RecordEntry, RecordOutcome, RunReport } from './types.js';

/** The rows of the counts: a replace is counted as an update (`countedAs`). */
export const ACTIONS: readonly CountedAction[] = ['create', 'update', 'delete', 'noop'];
export const OUTCOMES: readonly RecordOutcome[] = ['planned', 'done', 'failed', 'skipped'];

/** The actions a listed record can have (the filter of report.html offers them). */
export const RECORD_ACTIONS = planItemSchema.shape.action.options;

/** Terraform-style symbols for the closed set of actions. */
export const ACTION_SYMBOL: Record<PlanAction, string> = { create: '+', update: '~', replace: '~', delete: '-', noop: '=' };

/** The count a record of this action is in. */
export function countedAs(action: PlanAction): CountedAction {
  return action === 'noop' ? 'noop' : recordChangeOf(action);
}

/** The count of one action × outcome cell; absent means zero. */
export function countOf(report: RunReport, action: CountedAction, outcome: RecordOutcome): number {
  return report.counts[action]?.[outcome] ?? 0;
}

export function actionTotal(report: RunReport, action: CountedAction): number {
  return OUTCOMES.reduce((sum, outcome) => sum + countOf(report, action, outcome), 0);
}

/** Outcomes that occur at least once, in the canonical order (keeps tables narrow). */
export function outcomesPresent(report: RunReport): RecordOutcome[] {
  const present = OUTCOMES.filter((outcome) => ACTIONS.some((action) => countOf(report, action, outcome) > 0));
  return present.length > 0 ? present : ['planned'];
}

/** `850 ms`, `3.2 s`, `2 min 5 s`, `1 h 2 min`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const totalSeconds = Math.round(seconds);
  const minutes = Math.floor(totalSeconds / 60);
  if (minutes < 60) return `${minutes} min ${totalSeconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** First 12 hex digits: enough to tell files apart at a glance; report.json keeps the full hash. */
export function shortSha(sha256: string): string {
  return sha256.slice(0, 12);
}

/** `roster.csv:12`, `experts.xlsx[Sheet1]:12` — the file's base name only, the JSON keeps the path. */
export function formatProvenance(provenance: Provenance | undefined): string {
  if (!provenance) return '';
  const base = provenance.file.split(/[\\/]/).pop() ?? provenance.file;
  return `${base}${provenance.sheet ? `[${provenance.sheet}]` : ''}:${provenance.row}`;
}

/** A field value for people: `—` not set / not present, `∅` empty (null), lists joined. */
export function formatValue(value: FieldValue | undefined): string {
  if (value === undefined) return '—';
  if (value === null) return '∅';
  if (Array.isArray(value)) return value.length === 0 ? '∅' : value.join(', ');
  return String(value);
}

const EMAIL_PATTERN = /[^\s@<>()"',;:]+@[^\s@<>()"',;:]+\.[A-Za-z]{2,}/g;

/**
 * Masks anything shaped like an e-mail address in free text (service error messages, notes).
 * The Markdown goes to CI summaries and e-mails, which must not carry roster emails (docs/security-and-personal-data.md).
 */
export function redactEmails(text: string): string {
  return text.replace(EMAIL_PATTERN, '<email>');
}

/** Roster and service text on a terminal must not move the cursor or recolour it: control characters become `?`. */
export function plain(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

/** Ends text with a full stop unless it already ends with punctuation, so a following sentence reads right. */
export function sentence(text: string): string {
  return /[.!?…]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`;
}

/** Records that failed, in report order. */
export function failedRecords(report: RunReport): RecordEntry[] {
  return report.records.filter((record) => record.outcome === 'failed');
}

/** A roster change of client_id is a delete + create pair; returns each pair once, old → new. */
export function clientIdChanges(report: RunReport): { from: string; to: string }[] {
  const pairs = new Map<string, { from: string; to: string }>();
  for (const record of report.records) {
    if (record.reason !== 'client_id_changed' || record.pairedWith === undefined) continue;
    const pair =
      record.action === 'create'
        ? { from: record.pairedWith, to: record.clientId }
        : { from: record.clientId, to: record.pairedWith };
    pairs.set(`${pair.from}\u0000${pair.to}`, pair);
  }
  return [...pairs.values()];
}

/** Guards that refused the run. */
export function trippedGuards(report: RunReport) {
  return report.guards.filter((guard) => guard.tripped);
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/**
 * The rate limiter's figures as a sentence for people: the rate achieved over the run
 * (the whole run, reading and planning included: the client does not report its active span),
 * how often the service answered 429 and how often the client paused for it, retries, and a rate
 * that ended below the configured one. `undefined` when the run made no request.
 */
export function limiterSentence(report: Pick<RunReport, 'limiter' | 'durationMs'>): string | undefined {
  const limiter = report.limiter;
  if (!limiter || !(limiter.requests > 0)) return undefined;
  const seconds = report.durationMs / 1000;
  const achieved = seconds > 0 ? limiter.requests / seconds : limiter.requests;
  const configured = limiter.configuredRate;
  const parts = [
    `${plural(limiter.requests, 'request', 'requests')} in a run of ${formatDuration(report.durationMs)}, ${achieved.toFixed(1)} per second on average${configured ? ` (limit ${configured} per second)` : ''}`,
  ];
  // The client slows its pace on each 429 and retries the call on it; a pause count, when the
  // client reports one (`pauses`, `pausedMs`), says how often it also waited out a Retry-After.
  const pauses = limiter.pauses
    ? `, pausing ${plural(limiter.pauses, 'time', 'times')}${limiter.pausedMs ? ` (${formatDuration(limiter.pausedMs)} in all)` : ''}`
    : '';
  parts.push(
    limiter.rateLimited === 0
      ? 'the service never answered 429 (too many requests)'
      : `the service answered 429 (too many requests) ${plural(limiter.rateLimited, 'time', 'times')}: the client slowed down${pauses} and retried those calls`,
  );
  parts.push(limiter.retries === 0 ? 'no call was retried' : `${plural(limiter.retries, 'retry', 'retries')}`);
  if (configured && limiter.currentRate < configured) parts.push(`its pace ended lowered to ${Number(limiter.currentRate.toFixed(2))} per second`);
  return `${sentence(parts.join('; '))}`;
}

/**
 * A run's outcome in words an admin reads correctly at a glance: `done, 3 rows rejected` rather
 * than "PARTIAL" (which reads as half-done when every write succeeded), `2 records failed`,
 * `refused by a guard`. The JSON keeps the outcome's code; people read these words.
 */
export function outcomeWords(run: { outcome: RunReport['outcome']; rejects: number; failures: number }): string {
  const rejected = run.rejects > 0 ? plural(run.rejects, 'row rejected', 'rows rejected') : '';
  const withRejected = (head: string) => (rejected ? `${head}, ${rejected}` : head);
  switch (run.outcome) {
    case 'success':
      return 'done';
    case 'warning':
      return withRejected('done');
    case 'partial':
      if (run.failures > 0) return withRejected(`incomplete, ${plural(run.failures, 'record failed', 'records failed')}`);
      return rejected ? withRejected('done') : 'stopped early, the rest is left for the next run';
    case 'refused':
      return 'refused by a guard, nothing written';
    case 'dry_run':
      return withRejected('dry run');
    default:
      return run.outcome;
  }
}

/** `outcomeWords` of a report. */
export function reportOutcomeWords(report: RunReport): string {
  return outcomeWords({ outcome: report.outcome, rejects: report.input.rejected, failures: failedRecords(report).length });
}

/**
 * The drift check in a sentence: `39 owned records read back (39 calls): all as the inventory
 * holds them; rotating window: 34 of 1,000 owned records, 680 (68 %) read back since
 * 2026-11-01 02:00 UTC (all once in 30 runs), last full pass ended 2026-10-31 02:00 UTC`.
 */
export function driftSentence(drift: NonNullable<RunReport['drift']>): string {
  const found = drift.deleted.length + drift.changed.length;
  const read = `${plural(drift.sampled, 'owned record', 'owned records')} read back (${plural(drift.calls, 'call', 'calls')})`;
  const what = found === 0 ? `${read}: all as the inventory holds them` : `${read}: ${drift.deleted.length} deleted and ${drift.changed.length} changed in the service, written again by this run`;
  return drift.window ? `${what}; ${windowWords(drift.window)}` : what;
}

/** How far the rotating window has come: the share of the group read back since when, and the last full pass. */
function windowWords(window: NonNullable<NonNullable<RunReport['drift']>['window']>): string {
  const walked = Math.min(window.passWalked, window.owned);
  const share = window.owned > 0 ? Math.floor((100 * walked) / window.owned) : 100;
  const full = window.lastFullPassAt === null ? 'no full pass yet' : `last full pass ended ${minuteUtc(window.lastFullPassAt)}`;
  return (
    `rotating window: ${window.walked.toLocaleString('en')} of ${window.owned.toLocaleString('en')} owned record${window.owned === 1 ? '' : 's'}, ` +
    `${walked.toLocaleString('en')} (${share} %) read back since ${minuteUtc(window.passStartedAt)} (all once in ${plural(window.cycle, 'run', 'runs')}), ${full}`
  );
}

/** `2026-11-01 02:00 UTC` from an ISO time. */
function minuteUtc(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** Guards that never refuse a run: present, they warn (plan/guards.ts). */
const WARNING_GUARDS: ReadonlySet<string> = new Set(['inventory_missing']);

/** How a guard is shown: tripped, passed, or a warning, never a green "passed" next to one. */
export function guardState(guard: { guard: string; tripped: boolean }): 'tripped' | 'passed' | 'warning' {
  if (guard.tripped) return 'tripped';
  return WARNING_GUARDS.has(guard.guard) ? 'warning' : 'passed';
}
