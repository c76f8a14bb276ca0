/**
 * `report.html`: one self-contained page for admins (issue 4, design § 8) — no external assets,
 * inline CSS, a little vanilla JS.
 *
 * The summary (header, chart, guards, notes) is rendered here with every interpolated string
 * escaped. The record tables are built in the browser from the report embedded as JSON in a
 * `<script type="application/json">` block, using `textContent` only, so a roster cell such as
 * `<script>` stays inert and 50k records do not make a 50k-row static page.
 */
import {
  ACTIONS,
  ACTION_SYMBOL,
  OUTCOMES,
  actionTotal,
  countOf,
  formatDuration,
  sentence,
  shortSha,
} from './format.js';
import type { RecordOutcome, RunReport } from './types.js';

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * JSON safe to embed in a `<script>` element: `<` (hence `</script>` and `<!--`), `>` and `&`
 * become unicode escapes, which JSON.parse reads back unchanged; U+2028/2029 likewise.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const OUTCOME_COLOR: Record<RecordOutcome, string> = {
  done: '#2e7d32',
  planned: '#1565c0',
  failed: '#c62828',
  skipped: '#9e9e9e',
};

/** Inline SVG: one stacked horizontal bar per action, one segment per outcome, counts labelled. */
export function renderChart(report: RunReport): string {
  const width = 720;
  const labelWidth = 90;
  const barArea = width - labelWidth - 90;
  const rowHeight = 34;
  const legendHeight = 28;
  const height = legendHeight + ACTIONS.length * rowHeight + 8;
  const max = Math.max(1, ...ACTIONS.map((action) => actionTotal(report, action)));
  // Non-zero segments get at least a few pixels so a handful of creates next to 50k noops still shows.
  const scale = (count: number) => (count === 0 ? 0 : Math.max(3, (count / max) * barArea));

  const parts: string[] = [];
  OUTCOMES.forEach((outcome, index) => {
    const x = labelWidth + index * 110;
    parts.push(
      `<rect x="${x}" y="6" width="12" height="12" rx="2" fill="${OUTCOME_COLOR[outcome]}"/>`,
      `<text x="${x + 18}" y="16" class="legend">${outcome}</text>`,
    );
  });
  ACTIONS.forEach((action, row) => {
    const y = legendHeight + row * rowHeight;
    parts.push(`<text x="0" y="${y + 17}" class="axis">${ACTION_SYMBOL[action]} ${action}</text>`);
    let x = labelWidth;
    for (const outcome of OUTCOMES) {
      const count = countOf(report, action, outcome);
      const w = scale(count);
      if (w === 0) continue;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y + 4}" width="${w.toFixed(1)}" height="20" rx="2" fill="${OUTCOME_COLOR[outcome]}"><title>${action} ${outcome}: ${count}</title></rect>`,
      );
      x += w;
    }
    parts.push(`<text x="${(x + 8).toFixed(1)}" y="${y + 18}" class="count">${actionTotal(report, action)}</text>`);
  });
  return `<svg class="chart" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="Records by action and outcome">${parts.join('')}</svg>`;
}

function countsTable(report: RunReport): string {
  const head = OUTCOMES.map((outcome) => `<th class="num">${outcome}</th>`).join('');
  const rows = ACTIONS.map((action) => {
    const cells = OUTCOMES.map((outcome) => {
      const count = countOf(report, action, outcome);
      return `<td class="num${count === 0 ? ' zero' : ''}">${count}</td>`;
    }).join('');
    return `<tr><th>${ACTION_SYMBOL[action]} ${action}</th>${cells}<td class="num total">${actionTotal(report, action)}</td></tr>`;
  }).join('');
  return `<table class="counts"><thead><tr><th>action</th>${head}<th class="num">total</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function factsList(report: RunReport): string {
  const e = escapeHtml;
  const facts: [string, string][] = [
    ['Pipeline', `<code>${e(report.pipeline)}</code> from <code>${e(report.pipelineFile)}</code>`],
    [
      'Source',
      `<code>${e(report.source.file)}</code>${report.source.sheet ? ` sheet <code>${e(report.source.sheet)}</code>` : ''} (${e(report.source.format)}) · sha256 <code title="${e(report.source.sha256)}">${e(shortSha(report.source.sha256))}</code>`,
    ],
    [
      'Target',
      `${report.target.groupId === null ? 'group not created yet' : `group ${report.target.groupId}`}${report.target.groupName ? ` <q>${e(report.target.groupName)}</q>` : ''} at <code>${e(report.target.baseUrl)}</code>`,
    ],
    ['Mode', `${e(report.mode)}, ${e(report.update)} updates${report.dryRun ? ', <strong>dry run</strong>' : ''}`],
    ['Run', `<code>${e(report.runId)}</code> · ${e(report.startedAt)} → ${e(report.finishedAt)} · ${e(formatDuration(report.durationMs))}`],
    [
      'Input',
      `${report.input.rowsRead} rows read · ${report.input.valid} valid · ${report.input.rejected} rejected · ${report.input.filtered} filtered · ${report.input.duplicates} duplicates`,
    ],
  ];
  if (report.estimate) facts.push(['Estimate', e(report.estimate.text)]);
  if (report.limiter) {
    const { requests, retries, rateLimited, currentRate, ...rest } = report.limiter;
    const extra = Object.entries(rest).map(([key, value]) => ` · ${e(key)} ${value}`).join('');
    facts.push(['Rate limiter', `${requests} requests · ${retries} retries · ${rateLimited} rate-limited (429) · final rate ${currentRate}/s${extra}`]);
  }
  return `<dl class="facts">${facts.map(([term, detail]) => `<dt>${term}</dt><dd>${detail}</dd>`).join('')}</dl>`;
}

function guardsBlock(report: RunReport): string {
  if (report.guards.length === 0) return '';
  const items = report.guards
    .map((guard) => {
      const allow = guard.tripped && guard.allowWith ? ` To allow it: <code>${escapeHtml(guard.allowWith)}</code>` : '';
      return `<li class="${guard.tripped ? 'tripped' : 'passed'}"><strong>${guard.tripped ? 'tripped' : 'passed'}</strong> <code>${escapeHtml(guard.guard)}</code> — ${escapeHtml(sentence(guard.message))}${allow}</li>`;
    })
    .join('');
  return `<section><h2>Guards</h2><ul class="guards">${items}</ul></section>`;
}

function notesBlock(report: RunReport): string {
  if (report.notes.length === 0) return '';
  return `<section><h2>Notes</h2><ul>${report.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join('')}</ul></section>`;
}

const STYLE = `
:root{--fg:#1d2430;--muted:#5f6b7a;--line:#dfe3ea;--bg:#f6f7f9;--card:#fff;--done:#2e7d32;--planned:#1565c0;--failed:#c62828;--skipped:#8a8a8a}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{background:var(--card);border-bottom:1px solid var(--line);padding:18px 28px}
header h1{margin:0;font-size:20px;display:flex;gap:12px;align-items:center;flex-wrap:wrap}
header .message{margin:8px 0 0;color:var(--muted)}
main{padding:20px 28px;max-width:1400px}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 18px;margin:0 0 18px}
h2{font-size:16px;margin:0 0 10px}
h2 .n{color:var(--muted);font-weight:normal}
code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#eef1f5;border-radius:3px;padding:1px 4px}
.badge{display:inline-block;padding:3px 10px;border-radius:999px;font-size:13px;font-weight:600;color:#fff;text-transform:uppercase;letter-spacing:.03em}
.badge.success{background:var(--done)}.badge.dry_run{background:var(--planned)}.badge.partial{background:#e08e00}
.badge.refused{background:#d84315}.badge.failed{background:var(--failed)}.badge.interrupted{background:#616161}
.badge.dry{background:#fff;color:var(--planned);border:1px solid var(--planned)}
.exit{color:var(--muted);font-size:14px;font-weight:normal}
.summary{display:flex;gap:28px;flex-wrap:wrap;align-items:flex-start}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
thead th{position:sticky;top:0;background:#f0f2f5;font-weight:600;z-index:1}
.num{text-align:right;font-variant-numeric:tabular-nums}
table.counts{width:auto;min-width:420px}.counts .zero{color:#b7bec8}.counts .total{font-weight:600}
.chart{display:block;margin-top:12px;max-width:100%;height:auto}
.chart text{font:12px system-ui,sans-serif;fill:var(--fg)}.chart .count{font-weight:600}
.guards{list-style:none;padding:0;margin:0}.guards li{padding:6px 10px;border-radius:5px;margin:4px 0}
.guards .tripped{background:#fdecea;border-left:4px solid var(--failed)}.guards .passed{background:#edf7ee;border-left:4px solid var(--done)}
.filters{position:sticky;top:0;z-index:2;display:flex;gap:10px;flex-wrap:wrap;align-items:center;background:var(--bg);padding:10px 0}
.filters input,.filters select{font:inherit;padding:5px 8px;border:1px solid var(--line);border-radius:5px;background:#fff}
.filters input{min-width:280px}
.scroll{max-height:70vh;overflow:auto;border:1px solid var(--line);border-radius:5px}
.chg{margin:1px 0}.chg .f{color:var(--muted)}
.before{background:#fdecea;text-decoration:line-through;text-decoration-color:#c6282866;padding:0 3px;border-radius:3px}
.after{background:#e6f4ea;padding:0 3px;border-radius:3px}
.remote{color:#6a1b9a;padding-left:6px}
.act{font-weight:600;white-space:nowrap}.act.create{color:var(--done)}.act.update{color:#b26a00}.act.delete{color:var(--failed)}
.out{white-space:nowrap}.out.failed{color:var(--failed);font-weight:600}.out.done{color:var(--done)}.out.planned{color:var(--planned)}.out.skipped{color:var(--skipped)}
.more{margin:8px 0 0}.more button{font:inherit;padding:4px 10px;cursor:pointer}
.empty{color:var(--muted);font-style:italic}
`;

/**
 * Builds the record tables from the embedded report. Plain ES2017, no dependencies.
 * Every value goes through `textContent`; nothing from the data is parsed as HTML.
 */
const SCRIPT = `
(function () {
  'use strict';
  var report = JSON.parse(document.getElementById('report-data').textContent);
  var PAGE = 500;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function value(v) {
    if (v === undefined) return '\\u2014';
    if (v === null) return '\\u2205';
    if (Array.isArray(v)) return v.length ? v.join(', ') : '\\u2205';
    return String(v);
  }
  function where(p) {
    if (!p) return '';
    var base = String(p.file).split(/[\\\\/]/).pop();
    return base + (p.sheet ? '[' + p.sheet + ']' : '') + ':' + p.row;
  }
  function changesCell(record) {
    var td = el('td');
    record.changes.forEach(function (c) {
      var line = el('div', 'chg');
      line.appendChild(el('span', 'f', (c.label || c.field) + ': '));
      if (record.action !== 'create') { line.appendChild(el('span', 'before', value(c.before))); line.appendChild(document.createTextNode(' \\u2192 ')); }
      line.appendChild(el('span', 'after', value(c.after)));
      if ('remote' in c) line.appendChild(el('span', 'remote', 'remote: ' + value(c.remote)));
      line.title = 'roster: ' + value(c.after) + ' | last applied: ' + value(c.before) + ('remote' in c ? ' | remote: ' + value(c.remote) : '');
      td.appendChild(line);
    });
    return td;
  }

  var filters = { text: '', action: '', outcome: '' };
  var tables = [];

  // A table spec: rows, the text each row is searched by, whether the action/outcome filters apply, and a row builder.
  function table(id, rows, spec) {
    var section = document.getElementById(id);
    var state = { limit: PAGE };
    var scroll = el('div', 'scroll');
    var tableNode = el('table');
    var thead = el('thead');
    var headRow = el('tr');
    spec.columns.forEach(function (c) { headRow.appendChild(el('th', c.num ? 'num' : '', c.label)); });
    thead.appendChild(headRow);
    var tbody = el('tbody');
    tableNode.appendChild(thead);
    tableNode.appendChild(tbody);
    scroll.appendChild(tableNode);
    var more = el('div', 'more');
    var counter = section.querySelector('.n');
    section.appendChild(scroll);
    section.appendChild(more);
    var haystacks = rows.map(function (r) { return spec.search(r).join(' ').toLowerCase(); });

    function render() {
      var matches = [];
      for (var i = 0; i < rows.length; i++) {
        var r = rows[i];
        if (spec.filtered && filters.action && r.action !== filters.action) continue;
        if (spec.filtered && filters.outcome && r.outcome !== filters.outcome) continue;
        if (filters.text && haystacks[i].indexOf(filters.text) === -1) continue;
        matches.push(r);
      }
      tbody.textContent = '';
      matches.slice(0, state.limit).forEach(function (r) { tbody.appendChild(spec.row(r)); });
      if (matches.length === 0) {
        var tr = el('tr'); var td = el('td', 'empty', rows.length ? 'No row matches the filter.' : 'None.');
        td.colSpan = spec.columns.length; tr.appendChild(td); tbody.appendChild(tr);
      }
      counter.textContent = '(' + (matches.length === rows.length ? rows.length : matches.length + ' of ' + rows.length) + ')';
      more.textContent = '';
      if (matches.length > state.limit) {
        more.appendChild(document.createTextNode('Showing ' + state.limit + ' of ' + matches.length + '. '));
        var button = el('button', '', 'Show ' + Math.min(PAGE * 10, matches.length - state.limit) + ' more');
        button.addEventListener('click', function () { state.limit += PAGE * 10; render(); });
        more.appendChild(button);
      }
    }
    tables.push(function () { state.limit = PAGE; render(); });
    render();
  }

  function cells(tr, values, classes) {
    values.forEach(function (v, i) { tr.appendChild(el('td', classes && classes[i] || '', v)); });
    return tr;
  }

  // The contract lists only non-noop records; filter anyway so a noop never crowds the tables.
  var records = (report.records || []).filter(function (r) { return r.action !== 'noop'; });
  table('changes', records, {
    filtered: true,
    columns: [{ label: 'client_id' }, { label: 'action' }, { label: 'reason' }, { label: 'outcome' }, { label: 'source row' }, { label: 'changed fields: last applied \\u2192 roster (remote)' }],
    search: function (r) {
      var parts = [r.clientId, r.action, r.reason, r.outcome, where(r.provenance), r.pairedWith || ''];
      r.changes.forEach(function (c) { parts.push(c.label, c.field, value(c.before), value(c.after)); if ('remote' in c) parts.push(value(c.remote)); });
      return parts;
    },
    row: function (r) {
      var tr = cells(el('tr'), [r.clientId + (r.pairedWith ? ' (paired with ' + r.pairedWith + ')' : ''), r.action, r.reason, r.outcome, where(r.provenance)],
        ['', 'act ' + r.action, '', 'out ' + r.outcome, '']);
      tr.appendChild(changesCell(r));
      return tr;
    }
  });
  table('failures', records.filter(function (r) { return r.outcome === 'failed'; }), {
    filtered: true,
    columns: [{ label: 'client_id' }, { label: 'action' }, { label: 'status', num: true }, { label: 'attempts', num: true }, { label: 'error' }],
    search: function (r) { return [r.clientId, r.action, String(r.httpStatus || ''), r.error || '']; },
    row: function (r) {
      return cells(el('tr'), [r.clientId, r.action, r.httpStatus === undefined ? '' : r.httpStatus, r.attempts === undefined ? '' : r.attempts, r.error || ''],
        ['', 'act ' + r.action, 'num', 'num', '']);
    }
  });
  var problems = [];
  (report.rejectedRows || []).forEach(function (row) {
    row.problems.forEach(function (p) { problems.push({ where: where(p.provenance || row.provenance), p: p }); });
  });
  table('rejected', problems, {
    filtered: false,
    columns: [{ label: 'row' }, { label: 'column' }, { label: 'value' }, { label: 'problem' }, { label: 'hint' }],
    search: function (x) { return [x.where, x.p.column || '', x.p.value || '', x.p.code, x.p.message, x.p.hint || '']; },
    row: function (x) {
      var tr = cells(el('tr'), [x.where, x.p.column || '', x.p.value === undefined ? '' : x.p.value]);
      var td = el('td'); td.appendChild(el('code', '', x.p.code)); td.appendChild(document.createTextNode(' ' + x.p.message)); tr.appendChild(td);
      return cells(tr, [x.p.hint || '']);
    }
  });
  table('orphans', (report.orphans || []).map(function (id) { return { clientId: id }; }), {
    filtered: false,
    columns: [{ label: 'client_id' }],
    search: function (o) { return [o.clientId]; },
    row: function (o) { return cells(el('tr'), [o.clientId]); }
  });

  function refresh() { tables.forEach(function (t) { t(); }); }
  var timer = null;
  document.getElementById('f-text').addEventListener('input', function (event) {
    clearTimeout(timer);
    timer = setTimeout(function () { filters.text = event.target.value.trim().toLowerCase(); refresh(); }, 150);
  });
  document.getElementById('f-action').addEventListener('change', function (event) { filters.action = event.target.value; refresh(); });
  document.getElementById('f-outcome').addEventListener('change', function (event) { filters.outcome = event.target.value; refresh(); });
})();
`;

export function renderHtml(report: RunReport): string {
  const e = escapeHtml;
  const title = `rostersync · ${report.pipeline} · ${report.outcome}`;
  const omitted =
    report.rejectedRowsOmitted > 0
      ? `<p class="empty">${report.rejectedRowsOmitted} more rejected row(s) are not listed here; rejected.csv has every one.</p>`
      : '';
  const tableSection = (id: string, heading: string, extra = '') =>
    `<section id="${id}"><h2>${heading} <span class="n"></span></h2>${extra}<noscript><p class="empty">Enable JavaScript to see this table, or open report.json.</p></noscript></section>`;

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${e(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>rostersync · <code>${e(report.pipeline)}</code> <span class="badge ${e(report.outcome)}">${e(report.outcome.replace('_', ' '))}</span>${report.dryRun ? ' <span class="badge dry">dry run</span>' : ''} <span class="exit">exit ${report.exitCode}</span></h1>
${report.message ? `<p class="message">${e(report.message)}</p>` : ''}
</header>
<main>
<section><h2>Summary</h2><div class="summary">${factsList(report)}<div>${countsTable(report)}${renderChart(report)}</div></div></section>
${guardsBlock(report)}
${notesBlock(report)}
<div class="filters">
<input id="f-text" type="search" placeholder="Filter: client_id, field, value, error…" aria-label="Filter text">
<select id="f-action" aria-label="Action"><option value="">every action</option>${ACTIONS.filter((a) => a !== 'noop')
    .map((a) => `<option value="${a}">${a}</option>`)
    .join('')}</select>
<select id="f-outcome" aria-label="Outcome"><option value="">every outcome</option>${OUTCOMES.map((o) => `<option value="${o}">${o}</option>`).join('')}</select>
</div>
${tableSection('changes', 'Changes')}
${tableSection('failures', 'Failures')}
${tableSection('rejected', 'Rejected rows', omitted)}
${tableSection('orphans', 'Orphans', '<p>Owned records gone from the roster, kept because the pipeline is in upsert mode.</p>')}
</main>
<script type="application/json" id="report-data">${jsonForScript(report)}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
