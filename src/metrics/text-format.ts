/**
 * The Prometheus text exposition format (0.0.4), as node_exporter's textfile collector reads it:
 * `# HELP` and `# TYPE` once per family, every sample of a family together, no timestamps (the
 * collector refuses them), label values escaped (`\\`, `\"`, `\n`).
 *
 * `readSamples` reads back only what `renderFamilies` writes (the previous metrics file, to keep
 * other pipelines' series and the values carried from run to run); a line it cannot read is
 * counted, not guessed at.
 */
import type { MetricFamily, Sample } from './series.js';

export function renderFamilies(families: readonly MetricFamily[], samples: readonly Sample[]): string {
  const lines: string[] = [];
  for (const family of families) {
    const own = samples.filter((s) => s.name === family.name);
    if (own.length === 0) continue;
    lines.push(`# HELP ${family.name} ${family.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
    // In the 0.0.4 format a counter's family is named as its samples are, `_total` included.
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const sample of own) lines.push(`${sample.name}${renderLabels(sample.labels)} ${renderValue(sample.value)}`);
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

function renderLabels(labels: Record<string, string>): string {
  const pairs = Object.entries(labels).map(([key, value]) => `${key}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return pairs.length > 0 ? `{${pairs.join(',')}}` : '';
}

function renderValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  // Rates and durations to the millisecond's precision; counts stay whole.
  return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(6)));
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)\s*$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

/** The samples of a metrics file rostersync wrote, and how many lines could not be read. */
export function readSamples(text: string): { samples: Sample[]; unreadable: number } {
  const samples: Sample[] = [];
  let unreadable = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    const labels = match ? readLabels(match[2] ?? '') : undefined;
    const value = match ? Number(match[3] === '+Inf' ? Infinity : match[3] === '-Inf' ? -Infinity : match[3]) : NaN;
    if (!match || !labels || (Number.isNaN(value) && match[3] !== 'NaN')) {
      unreadable++;
      continue;
    }
    samples.push({ name: match[1]!, labels, value });
  }
  return { samples, unreadable };
}

function readLabels(text: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    if (!match) return undefined;
    labels[match[1]!] = match[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    if (match[3] === '') break;
  }
  return labels;
}
