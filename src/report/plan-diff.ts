/**
 * The console view of a plan, Terraform style (`rostersync plan`): one block per record with its
 * action symbol (+ create, ~ update or replace, - delete) and, field by field, the old value -> the new one.
 * It renders a RunReport (the plan holds no display text); the HTML report shows the same changes.
 *
 * With `mask`, every field value is replaced by `(masked)` (lists keep their length), so the
 * output can be pasted into a ticket or a CI log without names and emails; client_ids, field names
 * and the shape of each change stay visible.
 */
import type { FieldValue } from '../mapping/types.js';
import { ACTION_SYMBOL, actionTotal, formatProvenance, plain } from './format.js';
import type { CountedAction, FieldChange, PlanAction, RecordEntry, RunReport } from './types.js';

export interface PlanDiffOptions {
  color: boolean;
  /** Replace every field value by `(masked)`. */
  mask: boolean;
  /** Records shown before pointing at the report; 0 shows all. @default 100 */
  limit?: number;
}

export const DEFAULT_DIFF_LIMIT = 100;

const ANSI = { bold: 1, dim: 2, red: 31, green: 32, yellow: 33 } as const;
const ACTION_STYLE: Record<Exclude<PlanAction, 'noop'>, keyof typeof ANSI> = { create: 'green', update: 'yellow', replace: 'yellow', delete: 'red' };
const REASON_TEXT: Record<string, string> = {
  new: 'new in the roster',
  changed: 'changed in the roster',
  retry_failed: 'last write failed or was not confirmed',
  drift: 'the service differs from the last applied values',
  remote_deleted: 'deleted in the service',
  gone_from_roster: 'gone from the roster',
  client_id_changed: 'client_id changed',
  revert: 'undoes the reverted run',
};

/** A value as Terraform shows it: strings quoted, lists bracketed, `null` for a cleared field. */
export function diffValue(value: FieldValue | undefined, mask: boolean): string {
  if (value === undefined || value === null) return 'null';
  if (mask) return Array.isArray(value) ? `[${value.map(() => '(masked)').join(', ')}]` : '(masked)';
  if (Array.isArray(value)) return `[${value.map((item) => JSON.stringify(plain(item))).join(', ')}]`;
  return typeof value === 'number' ? String(value) : JSON.stringify(plain(value));
}

function changeLine(action: PlanAction, change: FieldChange, width: number, mask: boolean): { symbol: string; text: string } {
  const label = plain(change.label).padEnd(width);
  // A seeded field (`write: on_create | if_empty`): the service's value stays.
  if (change.kept) {
    // Without --refresh the service's value is not known (an editor may have changed it): not shown.
    const held = change.remote !== undefined ? ` = ${diffValue(change.remote, mask)}` : '';
    return { symbol: '=', text: `${label}${held} (kept, write: ${change.policy}; the roster has ${diffValue(change.after, mask)})` };
  }
  // Written only where the service holds no value, and it held one at the last sync: kept unless
  // an editor cleared it since (apply reads the record first). Not a change to show as one.
  if (change.policy !== undefined && !isEmpty(change.before)) {
    return { symbol: '=', text: `${label} = ${diffValue(change.before, mask)} (kept where the service still holds a value, write: ${change.policy}; the roster has ${diffValue(change.after, mask)})` };
  }
  if (change.policy !== undefined) {
    const line = changeLine(action, { ...change, policy: undefined }, width, mask);
    return { ...line, text: `${line.text} (only where the service holds no value, write: ${change.policy})` };
  }
  if (action === 'create' || change.before === undefined || change.before === null) {
    return { symbol: '+', text: `${label} = ${diffValue(change.after, mask)}` };
  }
  if (action === 'delete' || change.after === undefined || change.after === null) {
    return { symbol: '-', text: `${label} = ${diffValue(change.before, mask)} -> null` };
  }
  return { symbol: '~', text: `${label} = ${diffValue(change.before, mask)} -> ${diffValue(change.after, mask)}` };
}

type Paint = (style: keyof typeof ANSI, text: string) => string;

/** An empty value: nothing a delete removes, nothing a create sets. */
function isEmpty(value: FieldValue | undefined): boolean {
  return value === undefined || value === null || (Array.isArray(value) && value.length === 0);
}

function recordBlock(record: RecordEntry, options: PlanDiffOptions, paint: Paint): string[] {
  const action = record.action as Exclude<PlanAction, 'noop'>;
  const where = formatProvenance(record.provenance);
  const why = [REASON_TEXT[record.reason] ?? record.reason, where, record.pairedWith ? `pairs with ${plain(record.pairedWith)}` : ''].filter(Boolean).join('; ');
  const lines = [`  ${paint(ACTION_STYLE[action], paint('bold', `${ACTION_SYMBOL[action]} ${action}`))} ${paint('bold', plain(record.clientId))}  ${paint('dim', `(${why})`)}`];
  // A delete removes only the values the record had: an empty field is not a change.
  const changes = action === 'delete' ? record.changes.filter((change) => !isEmpty(change.before)) : record.changes;
  const width = Math.min(28, Math.max(0, ...changes.map((change) => change.label.length)));
  for (const change of changes) {
    const line = changeLine(action, change, width, options.mask);
    const style = line.symbol === '+' ? 'green' : line.symbol === '-' ? 'red' : line.symbol === '=' ? 'dim' : 'yellow';
    lines.push(`      ${paint(style, line.symbol)} ${line.text}`);
  }
  return lines;
}

/** The group a `--create-group` run creates: a planned change like the records. */
function groupBlock(report: RunReport, paint: Paint): string[] {
  const { groupName, groupToCreate } = report.target;
  if (!groupToCreate) return [];
  const teams: [string, FieldValue][] = [
    ['owner_team', groupToCreate.ownerTeam],
    ['editor_teams', groupToCreate.editorTeams],
    ['viewer_teams', groupToCreate.viewerTeams],
  ];
  return [
    `  ${paint('green', paint('bold', '+ create group'))} ${paint('bold', JSON.stringify(plain(groupName ?? '')))}  ${paint('dim', '(--create-group; its id is known once created)')}`,
    ...teams.filter(([, value]) => !isEmpty(value)).map(([label, value]) => `      ${paint('green', '+')} ${label.padEnd(12)} = ${diffValue(value, false)}`),
    '',
  ];
}

/** Orphans by client_id and last-applied name: the people upsert mode keeps although the roster dropped them. */
function orphanBlock(report: RunReport, options: PlanDiffOptions, paint: Paint, limit: number): string[] {
  if (report.orphans.length === 0) return [];
  const shown = limit > 0 ? report.orphans.slice(0, limit) : report.orphans;
  const names = report.orphanNames ?? {};
  const lines = [`  ${paint('bold', `Orphans kept (gone from the roster, not deleted in ${report.mode} mode):`)}`];
  for (const clientId of shown) {
    const name = names[clientId];
    lines.push(`      ${paint('bold', plain(clientId))}${name === undefined ? '' : `  ${diffValue(name, options.mask)}`}`);
  }
  if (shown.length < report.orphans.length) lines.push(paint('dim', `      ... and ${report.orphans.length - shown.length} more: see the report, or --diff-limit 0 to print them all.`));
  return [...lines, ''];
}

/** The plan as a field-by-field diff; ends with Terraform's one-line total. */
export function renderPlanDiff(report: RunReport, options: PlanDiffOptions): string {
  const paint: Paint = (style, text) => (options.color ? `\u001b[${ANSI[style]}m${text}\u001b[0m` : text);
  const changed = report.records.filter((record) => record.action !== 'noop');
  const total = (action: CountedAction) => actionTotal(report, action);
  const limit = options.limit ?? DEFAULT_DIFF_LIMIT;
  const shown = limit > 0 ? changed.slice(0, limit) : changed;
  const creatingGroup = report.target.groupToCreate !== undefined;

  const lines: string[] = [];
  if (changed.length === 0 && !creatingGroup) {
    lines.push('No changes. The service matches the roster.', '');
  } else {
    const group = report.target.groupName ? `"${plain(report.target.groupName)}"` : 'the group';
    const id = report.target.groupId !== null ? ` (#${report.target.groupId})` : creatingGroup ? ' (new)' : '';
    lines.push(`rostersync would make these changes to ${group}${id}${options.mask ? ' (values masked)' : ''}:`, '');
    lines.push(...groupBlock(report, paint));
    for (const record of shown) lines.push(...recordBlock(record, options, paint), '');
    // A large run's report lists only some records; the others are in its records.jsonl.
    const more = changed.length - shown.length + (report.recordsOmitted ?? 0);
    if (more > 0) {
      const where = shown.length < changed.length ? 'see the report, or --diff-limit 0 to print them all' : `every record is in ${report.recordsFile ?? 'report.json'} beside the report`;
      lines.push(paint('dim', `  ... and ${more} more records: ${where}.`), '');
    }
  }
  lines.push(...orphanBlock(report, options, paint, limit));
  lines.push(
    `${paint('bold', 'Plan:')} ${creatingGroup ? '1 group to create; ' : ''}${total('create')} to create, ${total('update')} to update, ${total('delete')} to delete, ${total('noop')} unchanged.` +
      (report.orphans.length > 0 ? ` ${report.orphans.length} orphans kept (${report.mode} mode).` : ''),
  );
  return `${lines.join('\n')}\n`;
}

/** Whether the plan would change anything in the service (`--detailed-exitcode`). */
export function planHasChanges(report: RunReport): boolean {
  return report.target.groupToCreate !== undefined || (['create', 'update', 'delete'] as const).some((action) => actionTotal(report, action) > 0);
}
