/**
 * The CSS and JavaScript of the report pages (report.html and the run-history indexes), kept out of
 * the renderers so each reads as markup. Both pages share one stylesheet and one script:
 * the script only enhances tables the server already rendered (filters, search, paging, local
 * times), so every table is readable with JavaScript off.
 *
 * `pageShell` wraps a body in the document both pages use. Its Content-Security-Policy allows
 * exactly this style and this script (by hash) and no fetch of any kind, so a roster value that
 * somehow became markup could neither run nor phone home, and the page stays self-contained when
 * opened from file:// with no network.
 */
import { createHash } from 'node:crypto';

export const PAGE_STYLE = `
:root{--fg:#1d2430;--muted:#5f6b7a;--line:#dfe3ea;--bg:#f6f7f9;--card:#fff;--done:#2e7d32;--planned:#1565c0;--failed:#c62828;--skipped:#8a8a8a;--create:#2e7d32;--update:#b26a00;--delete:#c62828;--reject:#6a1b9a}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
header{background:var(--card);border-bottom:1px solid var(--line);padding:18px 28px}
header h1{margin:0;font-size:20px;display:flex;gap:12px;align-items:center;flex-wrap:wrap}
header .message{margin:8px 0 0;color:var(--muted)}
header nav{margin-top:6px;font-size:13px}
main{padding:20px 28px;max-width:1400px}
section,details.section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 18px;margin:0 0 18px}
h2{font-size:16px;margin:0 0 10px}
h2 .n{color:var(--muted);font-weight:normal}
details.section>summary{cursor:pointer;font-weight:600;font-size:16px}
details.section[open]>summary{margin-bottom:10px}
code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;background:#eef1f5;border-radius:3px;padding:1px 4px}
a{color:var(--planned)}
.badge{display:inline-block;padding:3px 10px;border-radius:999px;font-size:13px;font-weight:600;color:#fff;text-transform:uppercase;letter-spacing:.03em;white-space:nowrap}
td .badge{font-size:11px;padding:2px 8px}
td.outcome{max-width:300px}td.outcome div{overflow-wrap:anywhere}
.badge.success{background:var(--done)}.badge.dry_run{background:var(--planned)}.badge.partial{background:#e08e00}.badge.warning{background:#b8860b}
.badge.refused{background:#d84315}.badge.failed{background:var(--failed)}.badge.interrupted{background:#616161}
.badge.dry{background:#fff;color:var(--planned);border:1px solid var(--planned)}
.exit{color:var(--muted);font-size:14px;font-weight:normal}
.summary{display:flex;gap:28px;flex-wrap:wrap;align-items:flex-start}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:0;max-width:720px}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
thead th{background:#f0f2f5;font-weight:600}
.scroll thead th{position:sticky;top:0;z-index:1}
.num{text-align:right;font-variant-numeric:tabular-nums}
table.counts{width:auto;min-width:420px}.zero{color:#b7bec8}.counts .total{font-weight:600}
.chart{display:block;margin-top:12px;max-width:100%;height:auto}
.chart text{font:12px system-ui,"DejaVu Sans",sans-serif;fill:var(--fg)}.chart .count{font-weight:600}.chart .muted{fill:var(--muted)}
.chart .grid{stroke:var(--line)}.chart .series{fill:none;stroke-width:2}
.guards{list-style:none;padding:0;margin:0}.guards li{padding:6px 10px;border-radius:5px;margin:4px 0}
.guards .tripped{background:#fdecea;border-left:4px solid var(--failed)}.guards .passed{background:#edf7ee;border-left:4px solid var(--done)}.guards .warning{background:#fff8e1;border-left:4px solid #f0b400}
.filters{position:sticky;top:0;z-index:2;display:flex;gap:10px;flex-wrap:wrap;align-items:center;background:var(--bg);padding:10px 0}
.filters input,.filters select{font:inherit;padding:5px 8px;border:1px solid var(--line);border-radius:5px;background:#fff}
.filters input{min-width:280px}
.filters[hidden]{display:none}
.scroll{max-height:70vh;overflow:auto;border:1px solid var(--line);border-radius:5px}
td.chg div{margin:1px 0}td.chg b{color:var(--muted);font-weight:normal}
td.chg s{background:#fdecea;text-decoration-color:#c6282866;padding:0 3px;border-radius:3px}
td.chg ins{background:#e6f4ea;text-decoration:none;padding:0 3px;border-radius:3px}
td.chg i{color:#6a1b9a;font-style:normal;padding-left:6px}
.act{font-weight:600;white-space:nowrap}.act.create{color:var(--create)}.act.update,.act.replace{color:var(--update)}.act.delete{color:var(--delete)}
.out{white-space:nowrap}.out.failed{color:var(--failed);font-weight:600}.out.done{color:var(--done)}.out.planned{color:var(--planned)}.out.skipped{color:var(--skipped)}
.more{margin:8px 0 0}.more button{font:inherit;padding:4px 10px;cursor:pointer}
.empty{color:var(--muted);font-style:italic}
.legend-key{display:inline-block;width:10px;height:10px;border-radius:2px;margin:0 4px 0 10px}
time{white-space:nowrap}
`;

/**
 * Enhances the server-rendered tables. Plain ES2017, no dependencies, no markup parsing: rows are
 * moved, never rebuilt, so nothing from the data is ever interpreted as HTML.
 *
 * - `<time datetime>`: text becomes the viewer's local time; the title keeps UTC.
 * - `.filters [data-filter=KEY]`: a text input (`text`) or a select narrowing every
 *   `table[data-filterable]` whose `data-keys` lists KEY to rows whose `data-KEY` equals the value.
 *   The text filter applies to every filterable table.
 * - Rows past the first page sit in a `<template>` after the table (parsed, never laid out); they
 *   join the search and are shown a page at a time.
 */
export const PAGE_SCRIPT = `
(function () {
  'use strict';
  var times = document.querySelectorAll('time[datetime]');
  for (var i = 0; i < times.length; i++) {
    var when = new Date(times[i].getAttribute('datetime'));
    if (isNaN(when.getTime())) continue;
    times[i].textContent = when.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  }

  var filters = {};
  var tables = [];
  var sections = document.querySelectorAll('[data-filterable]');
  for (var s = 0; s < sections.length; s++) tables.push(filterable(sections[s]));

  function filterable(tableNode) {
    var page = Number(tableNode.getAttribute('data-page')) || 500;
    var keys = (tableNode.getAttribute('data-keys') || '').split(' ').filter(Boolean);
    var tbody = tableNode.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    var spare = tableNode.parentNode.querySelector('template.rows');
    if (spare) rows = rows.concat(Array.prototype.slice.call(spare.content.querySelectorAll('tr')));
    var haystacks = [];
    var section = tableNode.closest('section, details');
    var counter = section && section.querySelector('.n');
    var more = document.createElement('div');
    more.className = 'more';
    tableNode.parentNode.parentNode.insertBefore(more, tableNode.parentNode.nextSibling);
    var empty = document.createElement('tr');
    var emptyCell = document.createElement('td');
    emptyCell.className = 'empty';
    emptyCell.colSpan = tableNode.tHead ? tableNode.tHead.rows[0].cells.length : 1;
    emptyCell.textContent = 'No row matches the filter.';
    empty.appendChild(emptyCell);
    var limit = page;

    function haystack(index) {
      if (haystacks[index] === undefined) haystacks[index] = rows[index].textContent.toLowerCase();
      return haystacks[index];
    }
    function render() {
      var matches = [];
      for (var r = 0; r < rows.length; r++) {
        var row = rows[r];
        var ok = true;
        for (var k = 0; k < keys.length && ok; k++) {
          var wanted = filters[keys[k]];
          if (wanted && row.getAttribute('data-' + keys[k]) !== wanted) ok = false;
        }
        if (ok && filters.text && haystack(r).indexOf(filters.text) === -1) ok = false;
        if (ok) matches.push(row);
      }
      var fragment = document.createDocumentFragment();
      for (var m = 0; m < matches.length && m < limit; m++) fragment.appendChild(matches[m]);
      if (matches.length === 0) fragment.appendChild(empty);
      tbody.textContent = '';
      tbody.appendChild(fragment);
      if (counter) counter.textContent = '(' + (matches.length === rows.length ? rows.length : matches.length + ' of ' + rows.length) + ')';
      more.textContent = '';
      if (matches.length > limit) {
        more.appendChild(document.createTextNode('Showing ' + limit + ' of ' + matches.length + '. '));
        var button = document.createElement('button');
        button.type = 'button';
        button.textContent = 'Show ' + Math.min(page * 10, matches.length - limit) + ' more';
        button.addEventListener('click', function () { limit += page * 10; render(); });
        more.appendChild(button);
      }
    }
    return function () { limit = page; render(); };
  }

  function refresh() { for (var t = 0; t < tables.length; t++) tables[t](); }
  var controls = document.querySelectorAll('[data-filter]');
  var timer = null;
  for (var c = 0; c < controls.length; c++) {
    (function (control) {
      var key = control.getAttribute('data-filter');
      if (key === 'text') {
        control.addEventListener('input', function () {
          clearTimeout(timer);
          timer = setTimeout(function () { filters.text = control.value.trim().toLowerCase(); refresh(); }, 150);
        });
      } else {
        control.addEventListener('change', function () { filters[key] = control.value; refresh(); });
      }
    })(controls[c]);
  }
  var bars = document.querySelectorAll('.filters[hidden]');
  for (var b = 0; b < bars.length; b++) bars[b].hidden = false;
  refresh();
})();
`;

function sha256Source(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** Hashes are of the exact text between the tags, so compute them once from the constants. */
const POLICY = [
  "default-src 'none'",
  `style-src ${sha256Source(PAGE_STYLE)}`,
  `script-src ${sha256Source(PAGE_SCRIPT)}`,
  "img-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** The document around a page's body: charset, CSP, the shared style and, last, the shared script. */
export function pageShell(input: { title: string; body: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta http-equiv="Content-Security-Policy" content="${POLICY}">
<title>${input.title}</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
${input.body}
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}
