/**
 * `report.md`: the run summary for e-mails and CI job summaries (docs/reading-plans-and-reports.md, "Reports").
 * It names records by client_id only: no names, no emails, and free text (service errors, notes)
 * has e-mail-shaped strings masked, because CI summaries are widely readable (docs/security-and-personal-data.md).
 */
import {
  ACTIONS,
  ACTION_SYMBOL,
  actionTotal,
  clientIdChanges,
  countOf,
  failedRecords,
  formatDuration,
  formatProvenance,
  limiterSentence,
  outcomesPresent,
  redactEmails,
  driftSentence,
  reportOutcomeWords,
  sentence,
  shortSha,
  guardState,
} from './format.js';
import type { RunReport } from './types.js';

/** How many failures and changed records the summary lists; the rest are in report.json/html. */
export const MARKDOWN_LIMITS = { failures: 20, changes: 20 } as const;

const OUTCOME_ICON: Record<RunReport['outcome'], string> = {
  success: '✅',
  warning: '⚠️',
  dry_run: '🔍',
  partial: '⚠️',
  refused: '⛔',
  failed: '❌',
  interrupted: '⏹️',
};

/**
 * Text a Markdown renderer would turn into a link on its own (GFM's extended autolinks): URLs,
 * `www.` hosts and e-mail addresses. Shown as code spans instead, which never link.
 */
const AUTOLINK_PATTERN = /(?:\b(?:https?|ftp):\/\/|\bwww\.)[^\s<>|`]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+/gi;

/**
 * Escapes text for a Markdown table cell or inline position: pipes, HTML-significant characters
 * (GitHub renders inline HTML), emphasis/link/heading/strike/math markers, and folds line breaks.
 * Link-shaped text goes into a code span, so no roster value renders as a link or an image.
 */
export function mdText(text: string): string {
  const folded = text.replace(/\r?\n|\r/g, ' ');
  let out = '';
  let last = 0;
  for (const match of folded.matchAll(AUTOLINK_PATTERN)) {
    out += escapeInline(folded.slice(last, match.index)) + code(match[0]);
    last = match.index + match[0].length;
  }
  return out + escapeInline(folded.slice(last));
}

function escapeInline(text: string): string {
  return text
    .replace(/[\\`*_[\]|#~$]/g, (char) => `\\${char}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/**
 * Inline code span for any text: the fence is one backtick longer than the longest run of
 * backticks inside, and padded with spaces, so no value (a client_id like ``a``<img>``) can close
 * it early; a code span renders neither HTML nor links. Pipes become `¦` so table cells stay whole.
 */
export function code(text: string): string {
  const clean = text.replace(/\r?\n|\r/g, ' ').replace(/\|/g, '¦');
  const longestRun = Math.max(0, ...(clean.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  // CommonMark strips one space from each side when both are present; pad whenever a backtick or
  // space at an edge would otherwise merge with the fence or be lost.
  const pad = longestRun > 0 || /^[ `]|[ `]$/.test(clean) ? ' ' : '';
  return `${fence}${pad}${clean}${pad}${fence}`;
}

/** The overlays in one table cell: each file, the rows replaced, the new rows by client_id. */
function layersText(layers: NonNullable<RunReport['layers']>): string {
  const files = layers.files.map((file) => code(file.split(/[\\/]/).pop() ?? file)).join(', ');
  const added = layers.added.length + layers.addedOmitted;
  const listed = layers.added.slice(0, MARKDOWN_LIMITS.changes).map((row) => `${code(row.clientId)} at ${code(formatProvenance(row.provenance))}`);
  const more = added > listed.length ? `, and ${added - listed.length} more` : '';
  return `${files} · ${layers.replaced} row${layers.replaced === 1 ? '' : 's'} replaced · ${added} new row${added === 1 ? '' : 's'}${listed.length ? `: ${listed.join(', ')}${more}` : ''}`;
}

export function renderMarkdown(report: RunReport): string {
  // Each section is its own list of lines, ending with a blank line when it is not empty; a
  // section with nothing to say is left out whole.
  const lines = [
    ...heading(report),
    ...summaryTable(report),
    ...countsSection(report),
    ...guardsSection(report),
    ...limiterSection(report),
    ...failuresSection(report),
    ...clientIdChangesSection(report),
    ...changesSection(report),
    ...orphansSection(report),
    ...rejectedSection(report),
    ...discardedSection(report),
    ...notesSection(report),
  ];
  return `${lines.join('\n').trimEnd()}\n`;
}

/** The title line with the outcome, then whether anything was written and the run's message. */
function heading(report: RunReport): string[] {
  const lines = [`## rostersync · ${code(report.pipeline)} — ${OUTCOME_ICON[report.outcome]} ${reportOutcomeWords(report)} (exit ${report.exitCode})`, ''];
  if (report.dryRun) lines.push('**Dry run** — nothing was written to the service.', '');
  if (report.message) lines.push(`> ${mdText(redactEmails(report.message))}`, '');
  return lines;
}

/** What was synced where, when and from what: one row per fact, optional rows only when they apply. */
function summaryTable(report: RunReport): string[] {
  const { source, target } = report;
  const groupText =
    target.groupId === null
      ? `group ${target.groupName ? `${mdText(target.groupName)} ` : ''}${target.groupToCreate ? 'to be created (--create-group)' : 'not created yet'}`
      : `group ${target.groupId}${target.groupName ? ` (${mdText(target.groupName)})` : ''}`;
  const lines = [
    '| | |',
    '|---|---|',
    `| Pipeline | ${code(report.pipeline)} from ${code(report.pipelineFile)} |`,
    `| Source | ${code(source.file)}${source.sheet ? ` sheet ${code(source.sheet)}` : ''} (${mdText(source.format)}) · sha256 ${code(shortSha(source.sha256))} |`,
    `| Target | ${groupText} at ${code(target.baseUrl)} |`,
    `| Mode | ${report.mode}, ${report.update} updates${report.dryRun ? ', dry run' : ''} |`,
    `| Run | ${code(report.runId)} · ${mdText(report.startedAt)} → ${mdText(report.finishedAt)} · ${formatDuration(report.durationMs)} |`,
    `| Input | ${report.input.rowsRead} rows read · ${report.input.valid} valid · ${report.input.rejected} rejected · ${report.input.filtered} filtered · ${report.input.duplicates} duplicates |`,
  ];
  if (report.layers) lines.push(`| Overlays | ${layersText(report.layers)} |`);
  if (report.duplicatePeople?.length) lines.push(`| Same person? | ${duplicatePeopleText(report)} |`);
  if (report.estimate) lines.push(`| Estimate | ${mdText(report.estimate.text)} |`);
  if (report.drift) lines.push(`| Drift check | ${mdText(driftSentence(report.drift))} |`);
  lines.push('');
  return lines;
}

/** The pairs that may be one person, by client_id and tier. */
function duplicatePeopleText(report: RunReport): string {
  const found = report.duplicatePeople ?? [];
  // Client_ids and tiers only: the evidence holds names and emails, which stay in report.html.
  const pairs = found.slice(0, MARKDOWN_LIMITS.changes).map((pair) => `${code(pair.a.clientId)} = ${code(pair.b.clientId)} (same ${pair.tier}${pair.pendingRename ? ', pending rename' : ''})`);
  const total = report.duplicatePeopleFound ? report.duplicatePeopleFound.listed + report.duplicatePeopleFound.leftOut : found.length;
  const more = total > pairs.length ? `, and ${total - pairs.length} more` : '';
  return `${pairs.join(', ')}${more}`;
}

/** Counts by action × outcome (docs/reading-plans-and-reports.md, "Reports"). */
function countsSection(report: RunReport): string[] {
  const outcomes = outcomesPresent(report);
  const lines = ['### Counts', '', `| action | ${outcomes.join(' | ')} | total |`, `|---|${outcomes.map(() => '---:').join('|')}|---:|`];
  for (const action of ACTIONS) {
    const cells = outcomes.map((outcome) => String(countOf(report, action, outcome)));
    lines.push(`| ${ACTION_SYMBOL[action]} ${action} | ${cells.join(' | ')} | ${actionTotal(report, action)} |`);
  }
  lines.push('');
  return lines;
}

function guardsSection(report: RunReport): string[] {
  if (report.guards.length === 0) return [];
  const lines = ['### Guards', ''];
  for (const guard of report.guards) {
    const allow = guard.tripped && guard.allowWith ? ` To allow it: ${code(guard.allowWith)}` : '';
    const state = guardState(guard);
    lines.push(`- ${state === 'tripped' ? '⛔ **tripped**' : state === 'warning' ? '⚠️ warning' : '✅ passed'} ${code(guard.guard)} — ${mdText(sentence(guard.message))}${allow}`);
  }
  lines.push('');
  return lines;
}

function limiterSection(report: RunReport): string[] {
  const limiter = limiterSentence(report);
  return limiter ? ['### Rate limiter', '', mdText(limiter), ''] : [];
}

/** The first failures, with the service's status and error (e-mail-shaped text masked). */
function failuresSection(report: RunReport): string[] {
  const failures = failedRecords(report);
  if (failures.length === 0) return [];
  const shown = failures.slice(0, MARKDOWN_LIMITS.failures);
  const lines = [
    `### Failures (${shown.length < failures.length ? `first ${shown.length} of ` : ''}${failures.length})`,
    '',
    '| client_id | action | status | attempts | error |',
    '|---|---|---:|---:|---|',
  ];
  for (const record of shown) {
    lines.push(`| ${code(record.clientId)} | ${record.action} | ${record.httpStatus ?? ''} | ${record.attempts ?? ''} | ${mdText(redactEmails(record.error ?? ''))} |`);
  }
  lines.push('');
  return lines;
}

function clientIdChangesSection(report: RunReport): string[] {
  const idChanges = clientIdChanges(report);
  if (idChanges.length === 0) return [];
  return ['### client_id changes (delete + create)', '', ...idChanges.map((change) => `- ${code(change.from)} → ${code(change.to)}`), ''];
}

/** The first changed records, with the fields that changed (names only, never values). */
function changesSection(report: RunReport): string[] {
  const changed = report.records.filter((record) => record.action !== 'noop');
  if (changed.length === 0) return [];
  // Records report.json does not list (a large run) are in records.jsonl, and counted here.
  const changedTotal = changed.length + (report.recordsOmitted ?? 0);
  const shown = changed.slice(0, MARKDOWN_LIMITS.changes);
  const lines = [`### Changes (${shown.length < changedTotal ? `first ${shown.length} of ` : ''}${changedTotal})`, ''];
  for (const record of shown) {
    const fields = record.changes.map((change) => mdText(change.label || change.field)).join(', ');
    const where = record.provenance ? ` at ${code(formatProvenance(record.provenance))}` : '';
    lines.push(`- ${code(`${ACTION_SYMBOL[record.action]} ${record.clientId}`)} ${record.action} (${mdText(record.reason)}, ${record.outcome})${where}${fields ? `: ${fields}` : ''}`);
  }
  if (shown.length < changedTotal) lines.push('', `Field-level detail for every record is in report.html and ${report.recordsFile ?? 'report.json'}.`);
  lines.push('');
  return lines;
}

/** A count only: orphans are listed with their last-applied names, which stay out of this summary. */
function orphansSection(report: RunReport): string[] {
  if (report.orphans.length === 0) return [];
  return [
    '### Orphans',
    '',
    `${report.orphans.length} owned record(s) are gone from the roster and were kept (upsert mode). They are listed, with their last-applied names, in report.html and report.json.`,
    '',
  ];
}

/** A count only: rejected rows carry the roster's cells, which are in rejected.csv and report.html. */
function rejectedSection(report: RunReport): string[] {
  const rejectedTotal = report.rejectedRows.length + report.rejectedRowsOmitted;
  if (rejectedTotal === 0 && report.input.rejected === 0) return [];
  return ['### Rejected rows', '', `${Math.max(rejectedTotal, report.input.rejected)} row(s) rejected; see rejected.csv and report.html for every problem and how to fix it.`, ''];
}

function discardedSection(report: RunReport): string[] {
  const discarded = report.discardedRows ?? [];
  if (discarded.length === 0) return [];
  // Columns only: the values are personal data, listed in report.html.
  const lines = ['### Discarded duplicate rows', '', '| row | client_id | kept row | not synced |', '| --- | --- | --- | --- |'];
  for (const row of discarded.slice(0, MARKDOWN_LIMITS.changes)) {
    lines.push(`| ${row.provenance.row} | ${mdText(row.clientId)} | ${row.keptRow} | ${mdText(Object.keys(row.notSynced).join(', ') || '-')} |`);
  }
  if (discarded.length > MARKDOWN_LIMITS.changes) lines.push('', `${discarded.length - MARKDOWN_LIMITS.changes} more in report.html and report.json.`);
  lines.push('');
  return lines;
}

function notesSection(report: RunReport): string[] {
  if (report.notes.length === 0) return [];
  return ['### Notes', '', ...report.notes.map((note) => `- ${mdText(redactEmails(note))}`), ''];
}
