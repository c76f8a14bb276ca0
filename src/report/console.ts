/**
 * The compact summary the CLI prints after each run ("The console prints the summary
 * table and the paths"). Counts, guards and where the report files are; no record detail, no emails.
 */
import {
  ACTIONS,
  ACTION_SYMBOL,
  actionTotal,
  countOf,
  failedRecords,
  formatDuration,
  outcomesPresent,
  plain,
  redactEmails,
  driftSentence,
  reportOutcomeWords,
  trippedGuards,
} from './format.js';
import type { RunReport } from './types.js';
import { SKIPPED_VALUE_WORDS } from '../mapping/map-row.js';

export interface ConsoleSummaryOptions {
  /** Use ANSI colours (the CLI passes true when stdout is a TTY and NO_COLOR is unset). */
  color: boolean;
  /** Report files to list: the `files` returned by `writeReport`. */
  files?: { json?: string; md?: string; html?: string; rejectedCsv?: string; index?: string };
}

/** Notes (reader detections, client_id changes, a created group) shown before pointing at the report. */
const CONSOLE_NOTES = 6;

const ANSI = { bold: 1, dim: 2, red: 31, green: 32, yellow: 33, blue: 34 } as const;
type Style = keyof typeof ANSI;

const OUTCOME_STYLE: Record<RunReport['outcome'], Style> = {
  success: 'green',
  warning: 'yellow',
  dry_run: 'blue',
  partial: 'yellow',
  refused: 'red',
  failed: 'red',
  interrupted: 'yellow',
};

/** How many failures the console lists before pointing at the report. */
const CONSOLE_FAILURES = 5;

/**
 * Values left out under `on_invalid: skip_value` change what the service holds (a list loses an
 * item synced before): said on the console, not only in the report. No value is shown.
 */
function skippedValuesLine(report: RunReport): string | undefined {
  const rows = (report.warnings ?? []).filter((row) => row.problems.some((p) => p.message.includes(SKIPPED_VALUE_WORDS)));
  if (rows.length === 0) return undefined;
  const values = rows.reduce((n, row) => n + row.problems.filter((p) => p.message.includes(SKIPPED_VALUE_WORDS)).length, 0);
  const where = rows.slice(0, 5).map((row) => `row ${row.provenance.row}`).join(', ');
  const more = (report.warningsOmitted ?? 0) > 0 ? ' and more' : '';
  return `${values} invalid value${values === 1 ? '' : 's'} skipped (on_invalid: skip_value) in ${where}${rows.length > 5 ? ', …' : ''}${more}: the record keeps the service's value, or a list only its valid items (one synced before is dropped); see the report's warnings.`;
}

export function renderConsoleSummary(report: RunReport, options: ConsoleSummaryOptions): string {
  const paint = (style: Style, text: string) => (options.color ? `\u001b[${ANSI[style]}m${text}\u001b[0m` : text);
  const lines: string[] = [];

  const outcome = paint(OUTCOME_STYLE[report.outcome], paint('bold', reportOutcomeWords(report).toUpperCase()));
  lines.push(
    `${paint('bold', plain(report.pipeline))}: ${outcome} (exit ${report.exitCode})${report.dryRun ? ' · dry run, nothing written' : ''} · ${formatDuration(report.durationMs)}`,
  );
  if (report.message) lines.push(plain(redactEmails(report.message)));
  lines.push(
    paint(
      'dim',
      `input: ${report.input.rowsRead} rows · ${report.input.valid} valid · ${report.input.rejected} rejected · ${report.input.filtered} filtered · ${report.input.duplicates} duplicates`,
    ),
  );

  // The action × outcome table, right-aligned numbers; zero cells dimmed so the eye finds the rest.
  const outcomes = outcomesPresent(report);
  const header = ['action', ...outcomes, 'total'];
  const rows = ACTIONS.map((action) => [
    `${ACTION_SYMBOL[action]} ${action}`,
    ...outcomes.map((o) => String(countOf(report, action, o))),
    String(actionTotal(report, action)),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const format = (cells: string[], isHeader: boolean) =>
    cells
      .map((cell, column) => {
        const width = widths[column] ?? cell.length;
        const padded = column === 0 ? cell.padEnd(width) : cell.padStart(width);
        if (isHeader) return paint('bold', padded);
        if (column > 0 && cell === '0') return paint('dim', padded);
        if (outcomes[column - 1] === 'failed') return paint('red', padded);
        return padded;
      })
      .join('  ');
  lines.push('', `  ${format(header, true)}`, ...rows.map((row) => `  ${format(row, false)}`), '');

  if (report.estimate) lines.push(`estimate: ${report.estimate.text}`);
  if (report.drift) lines.push(`drift check: ${driftSentence(report.drift)}`);
  for (const guard of trippedGuards(report)) {
    lines.push(
      `${paint('red', `guard ${guard.guard} tripped:`)} ${plain(guard.message)}${guard.allowWith ? ` — allow with ${paint('bold', plain(guard.allowWith))}` : ''}`,
    );
  }
  for (const guard of report.guards.filter((g) => !g.tripped)) lines.push(`${paint('yellow', 'warning:')} ${plain(guard.message)}`);
  const skipped = skippedValuesLine(report);
  if (skipped) lines.push(`${paint('yellow', 'warning:')} ${skipped}`);
  for (const note of report.notes.slice(0, CONSOLE_NOTES)) lines.push(`${paint('dim', 'note:')} ${plain(redactEmails(note))}`);
  if (report.notes.length > CONSOLE_NOTES) lines.push(`… and ${report.notes.length - CONSOLE_NOTES} more notes in the report`);
  const failures = failedRecords(report);
  for (const record of failures.slice(0, CONSOLE_FAILURES)) {
    lines.push(
      `${paint('red', 'failed')} ${record.action} ${plain(record.clientId)}${record.httpStatus ? ` (${record.httpStatus})` : ''}: ${plain(redactEmails(record.error ?? 'no error recorded'))}`,
    );
  }
  if (failures.length > CONSOLE_FAILURES) lines.push(`… and ${failures.length - CONSOLE_FAILURES} more failures in the report`);
  if (report.orphans.length > 0) lines.push(`orphans: ${report.orphans.length} owned record(s) gone from the roster, kept (upsert mode)`);

  const files = options.files;
  if (files) {
    const entries: [string, string | undefined][] = [
      ['html', files.html],
      ['markdown', files.md],
      ['json', files.json],
      ['rejected', files.rejectedCsv],
      ['all runs', files.index],
    ];
    const listed = entries.filter((entry): entry is [string, string] => entry[1] !== undefined);
    if (listed.length > 0) lines.push('', 'report:', ...listed.map(([label, path]) => `  ${label.padEnd(9)}${path}`));
  }
  return `${lines.join('\n')}\n`;
}
