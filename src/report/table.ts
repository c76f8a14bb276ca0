/**
 * Server-rendered tables for the report pages: every row is in the HTML, so a table reads with
 * JavaScript off. The first page of rows is laid out; the rest wait in a `<template>` that the
 * page script (assets.ts) searches and pages through, so 50k rows do not make a 50k-row layout.
 */
import { escapeHtml } from './escape.js';

/** A cell: plain text (escaped here) or markup the caller built from escaped parts. */
export type Cell = { text: string; className?: string; title?: string } | { html: string; className?: string };

export interface TableSpec<Row> {
  columns: readonly { label: string; num?: boolean }[];
  rows: readonly Row[];
  /** Filter keys (`action`, `outcome`, `pipeline`) this table answers to; each row carries `data-KEY`. */
  keys?: readonly string[];
  /** The `data-KEY` values of a row, for the keys above. */
  data?: (row: Row) => Record<string, string>;
  cells: (row: Row) => Cell[];
  /** Rows laid out at first (and per page with JavaScript). */
  page?: number;
  /** Where the rest of the rows are without JavaScript, e.g. "open report.json". */
  elsewhere?: string;
}

export const TABLE_PAGE = 500;
/**
 * Rows a page holds at most: beyond that a page is too large for a browser (and, at a million,
 * for one string). The rest are in report.json.
 */
export const TABLE_MAX_ROWS = 20_000;

export function text(value: string | number | undefined, className?: string): Cell {
  return { text: value === undefined ? '' : String(value), ...(className ? { className } : {}) };
}

function cellHtml(cell: Cell, num: boolean | undefined): string {
  const className = [num ? 'num' : '', cell.className ?? ''].filter(Boolean).join(' ');
  const classAttr = className ? ` class="${escapeHtml(className)}"` : '';
  if ('html' in cell) return `<td${classAttr}>${cell.html}</td>`;
  const title = cell.title ? ` title="${escapeHtml(cell.title)}"` : '';
  return `<td${classAttr}${title}>${escapeHtml(cell.text)}</td>`;
}

export function renderTable<Row>(spec: TableSpec<Row>): string {
  if (spec.rows.length === 0) return '<p class="empty">None.</p>';
  const page = spec.page ?? TABLE_PAGE;
  const keys = spec.keys ?? [];
  const rowHtml = (row: Row): string => {
    const data = spec.data?.(row) ?? {};
    const attrs = keys.map((key) => ` data-${key}="${escapeHtml(data[key] ?? '')}"`).join('');
    const cells = spec.cells(row).map((cell, index) => cellHtml(cell, spec.columns[index]?.num));
    return `<tr${attrs}>${cells.join('')}</tr>`;
  };
  const head = spec.columns.map((c) => `<th${c.num ? ' class="num"' : ''}>${escapeHtml(c.label)}</th>`).join('');
  const rows = spec.rows.length > TABLE_MAX_ROWS ? spec.rows.slice(0, TABLE_MAX_ROWS) : spec.rows;
  const first = rows.slice(0, page).map(rowHtml).join('\n');
  const rest = rows.length > page ? `<template class="rows">${rows.slice(page).map(rowHtml).join('\n')}</template>` : '';
  const noscript =
    rows.length > page
      ? `<noscript><p class="empty">The first ${page} of ${rows.length} rows are shown. Turn on JavaScript to search and page through the rest${spec.elsewhere ? `, or ${escapeHtml(spec.elsewhere)}` : ''}.</p></noscript>`
      : '';
  const cut =
    spec.rows.length > rows.length
      ? `<p class="empty">This page holds the first ${rows.length} of ${spec.rows.length} rows${spec.elsewhere ? `; ${escapeHtml(spec.elsewhere)} for all of them` : ''}.</p>`
      : '';
  const note = `${noscript}${cut}`;
  return `<div class="scroll"><table data-filterable data-page="${page}" data-keys="${escapeHtml(keys.join(' '))}"><thead><tr>${head}</tr></thead><tbody>
${first}
</tbody></table>${rest}</div>${note}`;
}
