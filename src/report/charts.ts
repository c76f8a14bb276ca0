/**
 * Inline SVG charts for the report pages: drawn on the server, no script and no fetch, so they
 * show from file:// with JavaScript off. Every bar and point carries a `<title>` with its figure.
 */
import { escapeHtml } from './escape.js';
import { ACTIONS, ACTION_SYMBOL, OUTCOMES, actionTotal, countOf } from './format.js';
import type { CountedAction, RecordOutcome, RunReport } from './types.js';

export const OUTCOME_COLOR: Record<RecordOutcome, string> = {
  done: '#2e7d32',
  planned: '#1565c0',
  failed: '#c62828',
  skipped: '#9e9e9e',
};
const REJECTED_COLOR = '#6a1b9a';

/** `50,000`: digits grouped the same way whatever the machine's locale. */
export function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

const CHANGE_ACTIONS = ACTIONS.filter((action): action is Exclude<CountedAction, 'noop'> => action !== 'noop');

/**
 * One horizontal bar per change (create, update, delete: a segment per outcome) and one for
 * rejected rows. Bars are scaled to the largest of these, never to the unchanged records, which are
 * stated in words: 50,000 unchanged records must not shrink 3 updates to nothing.
 */
export function renderChangeChart(report: RunReport): string {
  const width = 720;
  const labelWidth = 100;
  const barArea = width - labelWidth - 80;
  const rowHeight = 30;
  const legendHeight = 26;
  const rejected = report.input.rejected;
  const rows: { label: string; segments: { count: number; color: string; title: string }[]; total: number }[] = [
    ...CHANGE_ACTIONS.map((action) => ({
      label: `${ACTION_SYMBOL[action]} ${action}`,
      segments: OUTCOMES.map((outcome) => ({
        count: countOf(report, action, outcome),
        color: OUTCOME_COLOR[outcome],
        title: `${action} ${outcome}: ${formatCount(countOf(report, action, outcome))}`,
      })),
      total: actionTotal(report, action),
    })),
    { label: '✕ rejected', segments: [{ count: rejected, color: REJECTED_COLOR, title: `rejected rows: ${formatCount(rejected)}` }], total: rejected },
  ];
  const max = Math.max(0, ...rows.map((row) => row.total));
  const unchanged = actionTotal(report, 'noop');
  const footer =
    max === 0
      ? `Nothing to change: ${formatCount(unchanged)} unchanged record(s).`
      : `${formatCount(unchanged)} unchanged record(s), not drawn: bars are scaled to the largest change (${formatCount(max)}).`;
  const height = legendHeight + rows.length * rowHeight + 26;

  const parts: string[] = [];
  OUTCOMES.forEach((outcome, index) => {
    const x = labelWidth + index * 100;
    parts.push(
      `<rect x="${x}" y="4" width="12" height="12" rx="2" fill="${OUTCOME_COLOR[outcome]}"/>`,
      `<text x="${x + 18}" y="14">${outcome}</text>`,
    );
  });
  rows.forEach((row, index) => {
    const y = legendHeight + index * rowHeight;
    parts.push(`<text x="0" y="${y + 15}">${row.label}</text>`);
    let x = labelWidth;
    for (const segment of row.segments) {
      if (segment.count === 0) continue;
      // A non-zero segment keeps a sliver of width: 1 failure next to 9,999 updates stays visible.
      const w = Math.max(3, (segment.count / max) * barArea);
      parts.push(
        `<rect class="bar" x="${x.toFixed(1)}" y="${y + 2}" width="${w.toFixed(1)}" height="18" rx="2" fill="${segment.color}"><title>${segment.title}</title></rect>`,
      );
      x += w;
    }
    parts.push(`<text x="${(x + 8).toFixed(1)}" y="${y + 16}" class="count${row.total === 0 ? ' muted' : ''}">${formatCount(row.total)}</text>`);
  });
  parts.push(`<text x="0" y="${height - 8}" class="muted unchanged">${footer}</text>`);
  return `<svg class="chart change-chart" data-max="${max}" data-bar-area="${barArea}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="Changes by action and outcome, rejected rows">${parts.join('')}</svg>`;
}

export interface TrendPoint {
  /** Shown in each point's tooltip, e.g. the run's start time and outcome. */
  label: string;
  /** Short text under the axis for the oldest and newest point, e.g. the run's date. */
  axis: string;
  values: Record<TrendSeries, number>;
}
export type TrendSeries = 'creates' | 'updates' | 'deletes' | 'failures' | 'rejects';

export const TREND_SERIES: readonly { key: TrendSeries; color: string }[] = [
  { key: 'creates', color: '#2e7d32' },
  { key: 'updates', color: '#b26a00' },
  { key: 'deletes', color: '#c62828' },
  { key: 'failures', color: '#000000' },
  { key: 'rejects', color: '#6a1b9a' },
];

/**
 * Lines of creates, updates, deletes, failures and rejects across runs, oldest on the left.
 * The y axis is logarithmic (log of 1 + count; ticks at 0, 1, 10, 100 …): the first import of 50,000 creates and a nightly
 * handful of updates share one chart and both stay readable.
 */
export function renderTrendChart(points: readonly TrendPoint[]): string {
  if (points.length === 0) return '<p class="empty">No runs yet.</p>';
  const width = 900;
  const left = 56;
  const right = 16;
  const top = 30;
  const plotHeight = 180;
  const height = top + plotHeight + 28;
  const max = Math.max(1, ...points.flatMap((point) => TREND_SERIES.map((series) => point.values[series.key])));
  const topLog = Math.log10(max + 1);
  const scaleY = (value: number) => top + plotHeight - (Math.log10(value + 1) / topLog) * plotHeight;
  const ticks = [0];
  for (let tick = 1; tick <= max; tick *= 10) ticks.push(tick);
  // The largest value gets its own tick, so the top of the chart is labelled.
  if (ticks[ticks.length - 1] !== max) ticks.push(max);
  const step = points.length > 1 ? (width - left - right) / (points.length - 1) : 0;
  const x = (index: number) => (points.length > 1 ? left + index * step : left + (width - left - right) / 2);

  const parts: string[] = [];
  TREND_SERIES.forEach((series, index) => {
    const lx = left + index * 110;
    parts.push(
      `<rect x="${lx}" y="4" width="12" height="12" rx="2" fill="${series.color}"/>`,
      `<text x="${lx + 18}" y="14">${series.key}</text>`,
    );
  });
  for (const value of ticks) {
    const y = scaleY(value);
    parts.push(
      `<line class="grid" x1="${left}" x2="${width - right}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}"/>`,
      `<text x="${left - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end" class="muted tick">${formatCount(value)}</text>`,
    );
  }
  TREND_SERIES.forEach((series, seriesIndex) => {
    // Series that share a value would hide each other: each is nudged a pixel or two off the others
    // (the tooltips give the exact figures).
    const nudge = (seriesIndex - 2) * 1.5;
    const y = (value: number) => (scaleY(value) + nudge).toFixed(1);
    const coords = points.map((point, index) => `${x(index).toFixed(1)},${y(point.values[series.key])}`);
    if (points.length > 1) {
      parts.push(`<polyline class="series" data-series="${series.key}" stroke="${series.color}" points="${coords.join(' ')}"/>`);
    }
    points.forEach((point, index) => {
      const value = point.values[series.key];
      parts.push(
        `<circle class="point" data-series="${series.key}" data-value="${value}" cx="${x(index).toFixed(1)}" cy="${y(value)}" r="${value > 0 ? 3.5 : 2}" fill="${series.color}"><title>${escapeHtml(point.label)}: ${formatCount(value)} ${series.key}</title></circle>`,
      );
    });
  });
  parts.push(
    `<text x="${left}" y="${height - 6}" class="muted">← ${escapeHtml(points[0]!.axis)}</text>`,
    `<text x="${width - right}" y="${height - 6}" text-anchor="end" class="muted">${escapeHtml(points[points.length - 1]!.axis)} →</text>`,
  );
  return `<svg class="chart trend-chart" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="Creates, updates, deletes, failures and rejects per run">${parts.join('')}</svg>`;
}
