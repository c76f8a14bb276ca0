/**
 * `report.html`: one self-contained page for admins (docs/reading-plans-and-reports.md, "Reports") — no external
 * asset, no fetch; the CSS and the script are in assets.ts.
 *
 * Everything is rendered here, tables included, with every interpolated string escaped, so the page
 * reads with JavaScript off and a roster cell such as `<script>` stays text. The script only
 * filters, searches and pages through rows that are already in the document, and shows times in
 * the viewer's local time.
 */
import { pageShell } from './assets.js';
import { formatCount, renderChangeChart } from './charts.js';
import { escapeHtml, outcomeBadgeHtml, relativeHref, timeHtml } from './escape.js';
import {
  ACTIONS,
  RECORD_ACTIONS,
  ACTION_SYMBOL,
  OUTCOMES,
  actionTotal,
  countOf,
  failedRecords,
  formatDuration,
  formatProvenance,
  formatValue,
  driftSentence,
  reportOutcomeWords,
  limiterSentence,
  sentence,
  shortSha,
  guardState,
} from './format.js';
import { renderTable, text, type Cell } from './table.js';
import type { RejectedRow } from '../mapping/types.js';
import type { FieldChange, RecordEntry, RunReport } from './types.js';

export { escapeHtml } from './escape.js';

/** The name of the rejected-rows file beside report.html (write.ts writes it when rows were rejected). */
export const REJECTED_CSV = 'rejected.csv';

function countsTable(report: RunReport): string {
  const head = OUTCOMES.map((outcome) => `<th class="num">${outcome}</th>`).join('');
  const rows = ACTIONS.map((action) => {
    const cells = OUTCOMES.map((outcome) => {
      const count = countOf(report, action, outcome);
      return `<td class="num${count === 0 ? ' zero' : ''}">${formatCount(count)}</td>`;
    }).join('');
    return `<tr><th>${ACTION_SYMBOL[action]} ${action}</th>${cells}<td class="num total">${formatCount(actionTotal(report, action))}</td></tr>`;
  }).join('');
  return `<table class="counts"><thead><tr><th>action</th>${head}<th class="num">total</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function factsList(report: RunReport): string {
  const e = escapeHtml;
  const facts: [string, string][] = [
    ['Pipeline', `<code>${e(report.pipeline)}</code> from <code>${e(report.pipelineFile)}</code>`],
    [
      'Source',
      `<code>${e(report.source.file)}</code>${report.source.sheet ? ` sheet <code>${e(report.source.sheet)}</code>` : ''} (${e(report.source.format)})${report.source.sha256 ? ` · sha256 <code title="${e(report.source.sha256)}">${e(shortSha(report.source.sha256))}</code>` : ''}`,
    ],
    [
      'Target',
      `${report.target.groupId === null ? (report.target.groupToCreate ? 'group to be created (--create-group)' : 'group not created yet') : `group ${report.target.groupId}`}${report.target.groupName ? ` <q>${e(report.target.groupName)}</q>` : ''} at <code>${e(report.target.baseUrl)}</code>`,
    ],
    ['Mode', `${e(report.mode)}, ${e(report.update)} updates${report.dryRun ? ', <strong>dry run</strong>' : ''}`],
    ['Run', `<code>${e(report.runId)}</code> · ${timeHtml(report.startedAt)} → ${timeHtml(report.finishedAt)} · ${e(formatDuration(report.durationMs))}`],
    [
      'Input',
      `${formatCount(report.input.rowsRead)} rows read · ${formatCount(report.input.valid)} valid · ${formatCount(report.input.rejected)} rejected · ${formatCount(report.input.filtered)} filtered · ${formatCount(report.input.duplicates)} duplicates`,
    ],
  ];
  if (report.estimate) facts.push(['Estimate', e(report.estimate.text)]);
  if (report.drift) facts.push(['Drift check', e(driftSentence(report.drift))]);
  const limiter = limiterSentence(report);
  if (limiter) facts.push(['Rate limiter', e(limiter)]);
  return `<dl class="facts">${facts.map(([term, detail]) => `<dt>${term}</dt><dd>${detail}</dd>`).join('')}</dl>`;
}

function guardsBlock(report: RunReport): string {
  if (report.guards.length === 0) return '';
  const items = report.guards
    .map((guard) => {
      const allow = guard.tripped && guard.allowWith ? ` To allow it: <code>${escapeHtml(guard.allowWith)}</code>` : '';
      const state = guardState(guard);
      return `<li class="${state}"><strong>${state}</strong> <code>${escapeHtml(guard.guard)}</code> — ${escapeHtml(sentence(guard.message))}${allow}</li>`;
    })
    .join('');
  return `<section id="guards"><h2>Guards</h2><ul class="guards">${items}</ul></section>`;
}

function notesBlock(report: RunReport): string {
  if (report.notes.length === 0) return '';
  return `<section id="notes"><h2>Notes</h2><ul>${report.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join('')}</ul></section>`;
}

/**
 * `Name: Ada Lovelace → Ada King remote: …`, one line per field, as the column heading reads
 * (last applied → roster (remote)). Kept lean: an initial import lists every field of every record.
 */
function changesCell(record: RecordEntry): Cell {
  const lines = record.changes.map((change: FieldChange) => {
    const before = record.action === 'create' ? '' : `<s>${escapeHtml(formatValue(change.before))}</s> → `;
    const remote = 'remote' in change ? `<i>remote: ${escapeHtml(formatValue(change.remote))}</i>` : '';
    return `<div><b>${escapeHtml(change.label || change.field)}: </b>${before}<ins>${escapeHtml(formatValue(change.after))}</ins>${remote}</div>`;
  });
  return { html: lines.join(''), className: 'chg' };
}

const recordData = (record: RecordEntry) => ({ action: record.action, outcome: record.outcome });

/** Records a page holds: report.html the first ones, records/page-N.html the next (report/write.ts). */
export const RECORDS_PER_PAGE = 5_000;
/** The folder beside report.html that holds the record pages after the first. */
export const RECORD_PAGES_DIR = 'records';
export const recordPageFile = (number: number) => `page-${number}.html`;

/** One page of a run's records: number `number` (from 1) of `pages`, of `total` records. */
export interface RecordPage {
  number: number;
  pages: number;
  total: number;
  records: readonly RecordEntry[];
}

/**
 * Links between the record pages, as plain links so they work from file:// with JavaScript off.
 * `fromReport`: the links are made on report.html (the pages are in records/), else on a page.
 */
function pagerNav(page: RecordPage, fromReport: boolean, everyRecord: string): string {
  const first = (page.number - 1) * RECORDS_PER_PAGE + 1;
  const last = first + page.records.length - 1;
  const href = (number: number) =>
    number === 1 ? (fromReport ? '#changes' : '../report.html#changes') : `${fromReport ? `${RECORD_PAGES_DIR}/` : ''}${recordPageFile(number)}`;
  const link = (number: number, label: string, rel?: string) =>
    number === page.number || number < 1 || number > page.pages ? `<span class="off">${label}</span>` : `<a href="${href(number)}"${rel ? ` rel="${rel}"` : ''}>${label}</a>`;
  return `<nav class="pager" aria-label="Record pages">Records ${formatCount(first)}–${formatCount(last)} of ${formatCount(page.total)}, page ${page.number} of ${page.pages}: ${link(1, '« first')} ${link(page.number - 1, '‹ previous', 'prev')} ${link(page.number + 1, 'next ›', 'next')} ${link(page.pages, 'last »')} · every record: <a href="${fromReport ? './' : '../'}${escapeHtml(everyRecord)}">${escapeHtml(everyRecord)}</a></nav>`;
}

function changesSection(report: RunReport, page: RecordPage | undefined, fromReport = true): string {
  // The contract lists only non-noop records; filter anyway so a noop never crowds the table.
  const records = (page?.records ?? report.records).filter((record) => record.action !== 'noop');
  const table = renderTable({
    columns: [
      { label: 'client_id' },
      { label: 'action' },
      { label: 'reason' },
      { label: 'outcome' },
      { label: 'attempts', num: true },
      { label: 'status', num: true },
      { label: 'source row' },
      { label: 'changed fields: last applied → roster (remote)' },
    ],
    rows: records,
    keys: ['action', 'outcome'],
    data: recordData,
    elsewhere: `open ${report.recordsFile ?? 'report.json'}`,
    cells: (record) => [
      text(record.clientId + (record.pairedWith ? ` (paired with ${record.pairedWith})` : '')),
      text(record.action, `act ${record.action}`),
      text(record.reason),
      text(record.outcome, `out ${record.outcome}`),
      text(record.attempts),
      text(record.httpStatus),
      text(formatProvenance(record.provenance)),
      changesCell(record),
    ],
  });
  if (!page) return `<section id="changes"><h2>Changes <span class="n">(${formatCount(records.length)})</span></h2>${table}</section>`;
  const pager = pagerNav(page, fromReport, report.recordsFile ?? 'report.json');
  return `<section id="changes"><h2>Changes (${formatCount(page.total)}) · this page <span class="n">(${formatCount(records.length)})</span></h2>${pager}${table}${pager}</section>`;
}

function failuresSection(report: RunReport): string {
  const failed = failedRecords(report);
  const table = renderTable({
    columns: [{ label: 'client_id' }, { label: 'action' }, { label: 'status', num: true }, { label: 'attempts', num: true }, { label: 'error' }],
    rows: failed,
    keys: ['action', 'outcome'],
    data: recordData,
    elsewhere: 'open report.json',
    cells: (record) => [text(record.clientId), text(record.action, `act ${record.action}`), text(record.httpStatus), text(record.attempts), text(record.error)],
  });
  return `<section id="failures"><h2>Failures <span class="n">(${formatCount(failed.length)})</span></h2>${table}</section>`;
}

function rejectedSection(report: RunReport): string {
  const problems = report.rejectedRows.flatMap((row) => row.problems.map((problem) => ({ row, problem })));
  const csv =
    report.rejectedRows.length > 0
      ? `<p><a href="./${REJECTED_CSV}" download>${REJECTED_CSV}</a> lists every rejected row with its cells and problems: fix it in a spreadsheet and feed it back.</p>`
      : '';
  const omitted =
    report.rejectedRowsOmitted > 0
      ? `<p class="empty">${formatCount(report.rejectedRowsOmitted)} more rejected row(s) are not listed here; ${REJECTED_CSV} has every one.</p>`
      : '';
  const table = problemsTable(problems, 'problem');
  // The heading counts rows, as the report's header does; the table (and its filter counter, `.n`)
  // lists problems, of which a row may have several.
  const rows = Math.max(report.rejectedRows.length + report.rejectedRowsOmitted, report.input.rejected);
  return `<section id="rejected"><h2>Rejected rows (${formatCount(rows)}) · problems <span class="n">(${formatCount(problems.length)})</span></h2>${csv}${omitted}${table}</section>`;
}

/** The cells of rejected rows or warnings, a problem per line; rejected.csv holds them all. */
function problemsTable(problems: Array<{ row: RejectedRow; problem: RejectedRow['problems'][number] }>, kind: 'problem' | 'warning'): string {
  return renderTable({
    columns: [{ label: 'row' }, { label: 'client_id' }, { label: 'name' }, { label: 'column' }, { label: 'value' }, { label: kind }, { label: 'hint' }],
    rows: problems,
    elsewhere: `open ${REJECTED_CSV}`,
    cells: ({ row, problem }) => [
      text(formatProvenance(problem.provenance ?? row.provenance)),
      text(row.clientId),
      text(row.name),
      text(problem.column),
      text(problem.value),
      { html: `<code>${escapeHtml(problem.code)}</code> ${escapeHtml(problem.message)}` },
      text(problem.hint),
    ],
  });
}

/** Rows synced with warnings about their values (skipped values, names left as written, formula-like values). */
function warningsSection(report: RunReport): string {
  const rows = report.warnings ?? [];
  if (rows.length === 0) return '';
  const problems = rows.flatMap((row) => row.problems.map((problem) => ({ row, problem })));
  const omitted = report.warningsOmitted ? `<p class="empty">${formatCount(report.warningsOmitted)} more row(s) with warnings are not listed here.</p>` : '';
  const table = problemsTable(problems, 'warning');
  return `<section id="warnings"><h2>Warnings <span class="n">(${formatCount(problems.length)})</span></h2><p>These rows were synced; the values named here were skipped, or synced as written. <a href="./${REJECTED_CSV}" download>${REJECTED_CSV}</a> lists them beside the rejected rows.</p>${omitted}${table}</section>`;
}

/** Adoptions that replaced a value the service held: someone may have typed it in the UI on purpose. */
function overwrittenSection(report: RunReport): string {
  const rows = report.records.flatMap((record) => (record.overwritten ?? []).map((value) => ({ clientId: record.clientId, ...value })));
  if (rows.length === 0) return '';
  const show = (value: unknown) => (Array.isArray(value) ? value.join('; ') : value === null || value === undefined ? '' : String(value));
  const table = renderTable({
    columns: [{ label: 'client_id' }, { label: 'field' }, { label: 'value in the service (overwritten)' }, { label: 'value written' }],
    rows,
    cells: (row) => [text(row.clientId), text(row.label), text(show(row.before)), text(show(row.after))],
  });
  return `<section id="overwritten"><h2>Adoptions that overwrote values <span class="n">(${formatCount(rows.length)})</span></h2><p>These records existed in the group before this pipeline owned them; their managed fields held other values (perhaps typed in the service's UI), which the roster's replaced.</p>${table}</section>`;
}

/** Rows a `first`/`last` duplicate policy set aside: what they carried is in no record of the service. */
function discardedSection(report: RunReport): string {
  const rows = report.discardedRows ?? [];
  if (rows.length === 0) return '';
  const table = renderTable({
    columns: [{ label: 'row' }, { label: 'client_id' }, { label: 'kept row', num: true }, { label: 'not synced' }],
    rows,
    cells: (row) => [
      text(formatProvenance(row.provenance)),
      text(row.clientId),
      text(row.keptRow),
      text(Object.entries(row.notSynced).map(([column, value]) => `${column}: ${String(value)}`).join(' · ') || '(nothing the kept row lacks)'),
    ],
  });
  return `<section id="discarded"><h2>Discarded duplicate rows <span class="n">(${formatCount(rows.length)})</span></h2><p>Rows whose client_id another row also carries; <code>duplicate_client_ids</code> kept the other row, so the values below were not synced. Merge the rows in the roster if they are the same person.</p>${table}</section>`;
}

/** Rows the mapping's `skip_rows` dropped: collapsed, because they are by design, not a problem. */
function filteredSection(report: RunReport): string {
  const rows = report.filteredRows ?? [];
  if (report.input.filtered === 0 && rows.length === 0) return '';
  const omitted = report.filteredRowsOmitted ?? Math.max(0, report.input.filtered - rows.length);
  const table = renderTable({
    columns: [{ label: 'row' }, { label: 'client_id' }, { label: 'name' }, { label: 'reason' }],
    rows,
    cells: (row) => [text(formatProvenance(row.provenance)), text(row.clientId), text(row.name), text(row.reason)],
  });
  const more = omitted > 0 ? `<p class="empty">${formatCount(omitted)} more filtered row(s) are counted but not listed.</p>` : '';
  return `<details class="section" id="filtered"><summary>Rows skipped by filters <span class="n">(${formatCount(report.input.filtered)})</span></summary><p>Rows that match a <code>skip_rows</code> entry of the mapping are left out of the sync on purpose; they are not rejected.</p>${more}${table}</details>`;
}

/** Pairs of client_ids that are probably one person, with the evidence (`policy.duplicate_people`). */
function duplicatePeopleSection(report: RunReport): string {
  const pairs = report.duplicatePeople ?? [];
  if (pairs.length === 0) return '';
  const who = (person: (typeof pairs)[number]['a']) => `${person.clientId}${person.provenance ? ` (${formatProvenance(person.provenance)})` : ''}${person.owned ? ' (in the group)' : ''}`;
  const table = renderTable({
    columns: [{ label: 'client_id' }, { label: 'client_id' }, { label: 'tier' }, { label: 'evidence' }],
    rows: pairs,
    cells: (pair) => [text(who(pair.a)), text(who(pair.b)), text(pair.pendingRename ? `${pair.tier}, pending rename` : pair.tier), text(pair.evidence)],
  });
  const found = report.duplicatePeopleFound;
  const total = found ? found.listed + found.leftOut : pairs.length;
  const leftOut = found && found.leftOut > 0 ? `<p class="empty">${formatCount(found.leftOut)} weaker pair(s) are counted but not listed; found by tier: ${formatCount(found.found.orcid)} ORCID iD, ${formatCount(found.found.email)} email, ${formatCount(found.found.name)} name.</p>` : '';
  const pending = pairs.some((pair) => pair.pendingRename) ? ' A <em>pending rename</em> is an owned record gone from the roster whose new client_id is held back: it is kept, not deleted, until the rows are merged.' : '';
  return `<section id="duplicate-people"><h2>Probably the same person <span class="n">(${formatCount(total)})</span></h2><p>Rows of different client_ids with the same ORCID iD, the same email, or the same affiliation with the same, a very similar or an initialled name (strongest first). Merge each pair under one client_id; <code>policy.duplicate_people: reject</code> holds the new one back until then.${pending}</p>${leftOut}${table}</section>`;
}

/** Files layered over the source: which rows they replaced, and which of their rows are new. */
function layersSection(report: RunReport): string {
  const layers = report.layers;
  if (!layers) return '';
  const files = layers.files.map((file) => `<code>${escapeHtml(file.split(/[\\/]/).pop() ?? file)}</code>`).join(', ');
  const added = layers.added.length + layers.addedOmitted;
  const table = renderTable({
    columns: [{ label: 'row' }, { label: 'client_id' }],
    rows: layers.added,
    cells: (row) => [text(formatProvenance(row.provenance)), text(row.clientId)],
  });
  const more = layers.addedOmitted > 0 ? `<p class="empty">${formatCount(layers.addedOmitted)} more new row(s) are counted but not listed.</p>` : '';
  return `<section id="overlays"><h2>Overlays</h2><p>Read over the source, in this order: ${files}. Their rows replaced ${formatCount(layers.replaced)} row(s) of the files before them; ${formatCount(added)} of their rows have a client_id no earlier file has, and are new rows:</p>${more}${added > 0 ? table : ''}</section>`;
}

function orphansSection(report: RunReport): string {
  if (report.mode === 'mirror') {
    const text =
      report.orphans.length === 0
        ? '<p>The pipeline is in mirror mode: owned records gone from the roster are deleted, and are listed under Changes as deletes.</p>'
        : '<p>The pipeline is in mirror mode, yet these owned records gone from the roster were kept (for example, paired with a new client_id).</p>';
    if (report.orphans.length === 0) return `<section id="orphans"><h2>Orphans <span class="n">(0)</span></h2>${text}</section>`;
    return `<section id="orphans"><h2>Orphans <span class="n">(${formatCount(report.orphans.length)})</span></h2>${text}${orphanTable(report)}</section>`;
  }
  return `<section id="orphans"><h2>Orphans <span class="n">(${formatCount(report.orphans.length)})</span></h2><p>Owned records gone from the roster, kept because the pipeline is in upsert mode (<code>policy.mode: mirror</code> would delete them).</p>${orphanTable(report)}</section>`;
}

function orphanTable(report: RunReport): string {
  const names = report.orphanNames ?? {};
  return renderTable({
    columns: [{ label: 'client_id' }, { label: 'name (last applied)' }],
    rows: report.orphans,
    cells: (clientId) => [text(clientId), text(names[clientId] ?? '')],
  });
}

export interface RenderHtmlOptions {
  /** Path segments from the report folder to the pipeline's run-history page, when there is one. */
  indexHref?: readonly string[];
  /** The first page of records, when they take several pages (else the records the report lists). */
  page?: RecordPage;
}

const filtersBar = `<div class="filters" hidden>
<input data-filter="text" type="search" placeholder="Search: client_id, name, field, value, error…" aria-label="Search">
<select data-filter="action" aria-label="Action"><option value="">every action</option>${RECORD_ACTIONS.map((a) => `<option value="${a}">${a}</option>`)
  .join('')}</select>
<select data-filter="outcome" aria-label="Outcome"><option value="">every outcome</option>${OUTCOMES.map((o) => `<option value="${o}">${o}</option>`).join('')}</select>
</div>`;

/**
 * records/page-N.html: one page of a run's records beyond the first, with the same table, search
 * and filters as report.html (they search this page), and links to the others.
 */
export function renderRecordPage(report: RunReport, page: RecordPage, options: Pick<RenderHtmlOptions, 'indexHref'> = {}): string {
  const e = escapeHtml;
  const indexHref = options.indexHref ? relativeHref(['..', ...options.indexHref]) : undefined;
  const body = `<header>
<h1>rostersync · <code>${e(report.pipeline)}</code> · records, page ${page.number} of ${page.pages}</h1>
<nav>${indexHref ? `<a href="${indexHref}">All runs of this pipeline</a> · ` : ''}<a href="../report.html">This run's report</a> · run <code>${e(report.runId)}</code></nav>
</header>
<main>
${filtersBar}
${changesSection(report, page, false)}
</main>`;
  return pageShell({ title: e(`rostersync · ${report.pipeline} · records ${page.number}/${page.pages}`), body });
}

export function renderHtml(report: RunReport, options: RenderHtmlOptions = {}): string {
  const e = escapeHtml;
  const title = `rostersync · ${report.pipeline} · ${report.outcome}`;
  const body = `<header>
<h1>rostersync · <code>${e(report.pipeline)}</code> ${outcomeBadgeHtml(report.outcome, reportOutcomeWords(report))}${report.dryRun ? ' <span class="badge dry">dry run</span>' : ''} <span class="exit">exit ${report.exitCode}</span></h1>
${report.message ? `<p class="message">${e(report.message)}</p>` : ''}
<nav>${options.indexHref ? `<a href="${relativeHref(options.indexHref)}">All runs of this pipeline</a> · ` : ''}<a href="./report.json">report.json</a>${report.recordsFile ? ` · <a href="./${e(report.recordsFile)}">${e(report.recordsFile)}</a>` : ''}</nav>
</header>
<main>
<section id="summary"><h2>Summary</h2><div class="summary">${factsList(report)}<div>${countsTable(report)}${renderChangeChart(report)}</div></div></section>
${guardsBlock(report)}
${notesBlock(report)}
${filtersBar}
${changesSection(report, options.page)}
${failuresSection(report)}
${rejectedSection(report)}
${warningsSection(report)}
${overwrittenSection(report)}
${discardedSection(report)}
${filteredSection(report)}
${layersSection(report)}
${duplicatePeopleSection(report)}
${orphansSection(report)}
</main>`;
  return pageShell({ title: e(title), body });
}
