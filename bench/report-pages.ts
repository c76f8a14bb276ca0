/**
 * report.html at the size of an initial import: every record is in the page so tables
 * read without JavaScript, the rows past the first 500 wait in a <template>. How big is the page,
 * how long does it take to render and to open in Chromium, and how long does a search take?
 *
 *   npx tsx bench/report-pages.ts [--records 50000] [--fields 6] [--runs 5] [--json]
 *
 * Baseline, measured in the same run on the same data: report.json (what the page replaced as its
 * data source) — its size, JSON.stringify time, and Chromium opening it as a file.
 * Each figure is the median of --runs (min–max); every page load is a fresh tab of one browser, each
 * bounded by a 60 s timeout.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderHtml } from '../src/report/html.js';
import type { RecordEntry } from '../src/report/types.js';
import { aReport } from '../test/report/builders.js';
import { inPage, launchBrowser } from '../test/report/browser.js';

const argv = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const index = argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(argv[index + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return value;
};
const RECORDS = option('records', 50_000);
const FIELDS = option('fields', 6);
const RUNS = Math.min(option('runs', 5), 25);
const LOAD_TIMEOUT_MS = 60_000;

function spread(values: number[]): { median: number; min: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const median = sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

function timed<T>(work: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = work();
  return { value, ms: performance.now() - started };
}

const fieldNames = ['name', 'emails', 'orcids', 'affiliations', 'level', 'areas', 'reviews', 'notes'];
const records: RecordEntry[] = Array.from({ length: RECORDS }, (_, i) => ({
  clientId: `R-${i}`,
  action: 'create',
  reason: 'new',
  provenance: { file: '/data/rosters/big.csv', row: i + 2 },
  changes: Array.from({ length: FIELDS }, (_, f) => ({ field: fieldNames[f % fieldNames.length]!, label: fieldNames[f % fieldNames.length]!, before: undefined, after: `value ${f} of person ${i}` })),
  outcome: 'done',
  httpStatus: 200,
  attempts: 1,
}));
const report = aReport({ records, noops: 0 });

const renders: number[] = [];
const stringifies: number[] = [];
let html = '';
let json = '';
for (let run = 0; run < RUNS; run++) {
  const jsonRun = timed(() => JSON.stringify(report, null, 2));
  const htmlRun = timed(() => renderHtml(report));
  stringifies.push(jsonRun.ms);
  renders.push(htmlRun.ms);
  json = jsonRun.value;
  html = htmlRun.value;
}

const dir = await mkdtemp(join(tmpdir(), 'rostersync-bench-pages-'));
const browser = await launchBrowser();
const loads: number[] = [];
const jsonLoads: number[] = [];
const searches: number[] = [];
try {
  await writeFile(join(dir, 'report.html'), html);
  await writeFile(join(dir, 'report.json'), json);
  for (let run = 0; run < RUNS; run++) {
    // Interleaved, so a busy machine slows both alike.
    for (const [file, into] of [
      ['report.json', jsonLoads],
      ['report.html', loads],
    ] as const) {
      const page = await browser.browser.newPage();
      const started = performance.now();
      await page.goto(pathToFileURL(join(dir, file)).href, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS });
      into.push(performance.now() - started);
      if (file === 'report.html') {
        // Search for the last record (it sits in the <template>), timed inside the page from the
        // input event to the table showing it; the page waits 150 ms after typing before it searches.
        const ms = await inPage<number>(
          page,
          `new Promise((resolve) => {
            const input = document.querySelector('[data-filter="text"]');
            const first = () => document.querySelector('#changes tbody tr td');
            const started = performance.now();
            input.value = 'person ${RECORDS - 1}';
            input.dispatchEvent(new Event('input'));
            const poll = () => (first() && first().textContent === 'R-${RECORDS - 1}' ? resolve(performance.now() - started) : setTimeout(poll, 5));
            poll();
          })`,
        );
        searches.push(ms);
      }
      await page.close();
    }
  }
} finally {
  await browser.close();
  await rm(dir, { recursive: true, force: true });
}

const result = {
  records: RECORDS,
  fieldsPerRecord: FIELDS,
  runs: RUNS,
  htmlMb: Number((Buffer.byteLength(html) / 1e6).toFixed(1)),
  jsonMb: Number((Buffer.byteLength(json) / 1e6).toFixed(1)),
  renderMs: spread(renders),
  stringifyMs: spread(stringifies),
  chromiumLoadHtmlMs: spread(loads),
  chromiumLoadJsonMs: spread(jsonLoads),
  searchMs: spread(searches),
};
if (argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} else {
  const fmt = (s: { median: number; min: number; max: number }) => `${s.median.toFixed(0)} ms (${s.min.toFixed(0)}–${s.max.toFixed(0)})`;
  process.stdout.write(
    [
      `report.html for ${RECORDS} created records × ${FIELDS} fields, median of ${RUNS}:`,
      `  size            ${result.htmlMb} MB   (report.json ${result.jsonMb} MB, ratio ${(result.htmlMb / result.jsonMb).toFixed(2)})`,
      `  render          ${fmt(result.renderMs)}   (JSON.stringify ${fmt(result.stringifyMs)})`,
      `  Chromium load   ${fmt(result.chromiumLoadHtmlMs)}   (report.json ${fmt(result.chromiumLoadJsonMs)}, ratio ${(result.chromiumLoadHtmlMs.median / result.chromiumLoadJsonMs.median).toFixed(2)})`,
      `  search, last    ${fmt(result.searchMs)}   (includes the page's 150 ms typing pause)`,
      '',
    ].join('\n'),
  );
}
