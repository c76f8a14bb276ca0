/**
 * report.html and the run-history indexes in a real headless Chromium, opened from
 * file:// exactly as an admin would open them: filters and search, the charts, local times,
 * hostile roster values, pages without JavaScript, and not one network request or console error.
 * One browser for the whole file; screenshots land in the test's temporary directory.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeCombinedIndex } from '../../src/report/history.js';
import type { KeepPolicy } from '../../src/report/retention.js';
import type { RunReport } from '../../src/report/types.js';
import { RECORDS_PER_PAGE } from '../../src/report/html.js';
import { writeReport } from '../../src/report/write.js';
import { inPage, launchBrowser, openPage, setFilter, shownRows, type BrowserHandle, type OpenedPage } from './browser.js';
import { CLOSE, EVIL, JS_URL, aChange, aRecord, aRejectedRow, aReport, hostileReport } from './builders.js';

let browser: BrowserHandle;
let dir: string;
const opened: OpenedPage[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rostersync-pages-'));
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (process.env.KEEP_REPORT_PAGES !== '1') await rm(dir, { recursive: true, force: true });
});

// Every page of every test: no console error, no CSP violation, no request but file://.
afterEach(async () => {
  for (const page of opened.splice(0)) {
    expect(page.errors).toEqual([]);
    expect(page.blocked).toEqual([]);
    await page.page.close();
  }
});

async function open(file: string, options: { javaScript?: boolean; timezone?: string } = {}): Promise<OpenedPage> {
  const page = await openPage(browser, file, options);
  opened.push(page);
  return page;
}

/** A run id as sync/run-id.ts makes them, `day` days after 2024-05-01 02:00 UTC. */
function runAt(day: number): { runId: string; startedAt: string; finishedAt: string } {
  const start = Date.UTC(2024, 4, 1 + day, 2, 0, 0);
  const stamp = new Date(start).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return { runId: `${stamp}-a${String(day).padStart(3, '0')}`, startedAt: new Date(start).toISOString(), finishedAt: new Date(start + 3250).toISOString() };
}

/** Writes a report as a run does (report folder inside the pipeline's root, history recorded); returns report.html. */
async function writeRun(root: string, report: RunReport, keep: KeepPolicy = { runs: 30 }): Promise<string> {
  const written = await writeReport(report, { dir: join(root, report.runId), env: {}, history: { root, keep, now: Date.parse(report.finishedAt) } });
  expect(written.warnings).toEqual([]);
  return written.files.html;
}

/** What hostile text would leave behind if it became markup: a flag, scripts, handlers, links, images. */
function inertProbe(page: OpenedPage) {
  return inPage<{ pwned: unknown; scripts: number; handlers: string[]; hrefs: string[]; images: number; svgs: number }>(
    page.page,
    `(() => ({
      pwned: window.__pwned === undefined ? null : window.__pwned,
      scripts: document.scripts.length,
      handlers: Array.from(document.querySelectorAll('*')).flatMap((el) => Array.from(el.attributes).filter((a) => a.name.startsWith('on')).map((a) => el.tagName + ' ' + a.name)),
      hrefs: Array.from(document.querySelectorAll('a[href]')).map((a) => a.href),
      images: document.images.length,
      svgs: document.querySelectorAll('svg').length,
    }))()`,
  );
}

const ids = async (page: OpenedPage, section: string) => (await shownRows(page.page, section)).map((row) => row[0]);
const counter = (page: OpenedPage, section: string) => inPage<string>(page.page, `document.querySelector('#${section} .n').textContent`);

describe('report.html', () => {
  const records = [
    aRecord({ clientId: 'A-1', action: 'create', reason: 'new', changes: [aChange({ label: 'Subject areas', before: undefined, after: ['Optics'] })] }),
    aRecord({ clientId: 'A-2', action: 'update', outcome: 'failed', httpStatus: 503, attempts: 5, error: 'timeout' }),
    aRecord({ clientId: 'A-3', action: 'delete', reason: 'gone_from_roster', changes: [], attempts: 2 }),
  ];

  it('filters by action and outcome and searches every table', async () => {
    const html = await writeRun(
      join(dir, 'filters'),
      aReport({ ...runAt(0), records, rejectedRows: [aRejectedRow({ clientId: 'EXP-0099', name: 'Grace Hopper' })] }),
    );
    const page = await open(html);

    expect(await ids(page, 'changes')).toEqual(['A-1', 'A-2', 'A-3']);
    expect(await counter(page, 'changes')).toBe('(3)');
    // Attempts are shown for successes too, not only for failures.
    expect((await shownRows(page.page, 'changes')).map((row) => row[4])).toEqual(['1', '5', '2']);

    await setFilter(page.page, 'text', 'OPTICS');
    expect(await ids(page, 'changes')).toEqual(['A-1']);
    expect(await counter(page, 'changes')).toBe('(1 of 3)');
    expect(await ids(page, 'rejected')).toEqual(['No row matches the filter.']);

    await setFilter(page.page, 'text', 'grace');
    expect(await ids(page, 'changes')).toEqual(['No row matches the filter.']);
    expect((await shownRows(page.page, 'rejected'))[0]?.slice(0, 3)).toEqual(['experts.csv:7', 'EXP-0099', 'Grace Hopper']);

    await setFilter(page.page, 'text', '');
    await setFilter(page.page, 'action', 'delete');
    expect(await ids(page, 'changes')).toEqual(['A-3']);
    // Action and outcome filters leave tables without those columns alone.
    expect(await ids(page, 'rejected')).toEqual(['experts.csv:7']);

    await setFilter(page.page, 'action', '');
    await setFilter(page.page, 'outcome', 'failed');
    expect(await ids(page, 'changes')).toEqual(['A-2']);
    expect(await shownRows(page.page, 'failures')).toEqual([['A-2', 'update', '503', '5', 'timeout']]);

    await setFilter(page.page, 'outcome', 'skipped');
    expect(await ids(page, 'changes')).toEqual(['No row matches the filter.']);
  });

  it('pages through 1,234 records: 500 laid out, the rest searchable and a click away', async () => {
    const many = Array.from({ length: 1234 }, (_, i) => aRecord({ clientId: `R-${i}`, changes: [aChange({ before: `Old ${i}`, after: `New ${i}` })] }));
    const page = await open(await writeRun(join(dir, 'paging'), aReport({ ...runAt(0), records: many })));

    expect(await shownRows(page.page, 'changes')).toHaveLength(500);
    expect(await inPage<string>(page.page, `document.querySelector('#changes .more').textContent`)).toBe('Showing 500 of 1234. Show 734 more');

    await setFilter(page.page, 'text', 'new 1200');
    expect(await ids(page, 'changes')).toEqual(['R-1200']);

    await setFilter(page.page, 'text', '');
    await page.page.click('#changes .more button');
    expect(await shownRows(page.page, 'changes')).toHaveLength(1234);
    expect(await inPage<string>(page.page, `document.querySelector('#changes .more').textContent`)).toBe('');
  });

  it('pages through more records than one page holds: plain links from report.html to records/page-N.html and back, each page searchable', async () => {
    const total = 2 * RECORDS_PER_PAGE + 10;
    const many = Array.from({ length: total }, (_, i) => aRecord({ clientId: `P-${i}`, changes: [aChange({ before: `Old ${i}`, after: `New ${i}` })] }));
    const page = await open(await writeRun(join(dir, 'record-pages'), aReport({ ...runAt(0), records: many })));
    const pager = () => inPage<string>(page.page, `document.querySelector('#changes nav.pager').textContent`);
    const follow = async (label: string) => {
      const href = await inPage<string>(page.page, `Array.from(document.querySelectorAll('#changes nav.pager a')).find((a) => a.textContent === ${JSON.stringify(label)}).getAttribute('href')`);
      await Promise.all([page.page.waitForNavigation({ waitUntil: 'load' }), page.page.click(`#changes nav.pager a[href="${href}"]`)]);
    };

    expect(await pager()).toContain('Records 1–5,000 of 10,010, page 1 of 3');
    expect((await ids(page, 'changes')).slice(0, 2)).toEqual(['P-0', 'P-1']);
    expect(await shownRows(page.page, 'changes')).toHaveLength(500);

    await follow('next ›');
    expect(page.page.url()).toMatch(/\/records\/page-2\.html$/);
    expect(await pager()).toContain(`Records 5,001–10,000 of 10,010, page 2 of 3`);
    expect((await ids(page, 'changes'))[0]).toBe(`P-${RECORDS_PER_PAGE}`);
    // Search and filters work on the page's own records.
    await setFilter(page.page, 'text', 'new 9999');
    expect(await ids(page, 'changes')).toEqual(['P-9999']);

    await follow('last »');
    expect(await pager()).toContain('Records 10,001–10,010 of 10,010, page 3 of 3');
    expect(await ids(page, 'changes')).toEqual(Array.from({ length: 10 }, (_, i) => `P-${2 * RECORDS_PER_PAGE + i}`));

    await follow('« first');
    expect(page.page.url()).toMatch(/\/report\.html#changes$/);
    expect(await pager()).toContain('page 1 of 3');
    // Only the report folder's own files were read: no page loaded another's records.
    expect(page.requested.every((url) => url.startsWith('file://'))).toBe(true);
  });

  it('scales the chart to what changed: 3 updates fill the bar next to 50,000 unchanged records', async () => {
    const three = [aRecord(), aRecord(), aRecord()];
    const page = await open(await writeRun(join(dir, 'chart'), aReport({ ...runAt(0), records: three, noops: 50_000 })));

    const chart = await inPage<{ bars: { title: string; width: number; shown: number }[]; area: number; footer: string }>(
      page.page,
      `(() => {
        const svg = document.querySelector('svg.change-chart');
        return {
          area: Number(svg.getAttribute('data-bar-area')),
          footer: svg.querySelector('.unchanged').textContent,
          bars: Array.from(svg.querySelectorAll('rect.bar')).map((r) => ({ title: r.querySelector('title').textContent, width: Number(r.getAttribute('width')), shown: r.getBoundingClientRect().width })),
        };
      })()`,
    );
    expect(chart.bars.map((bar) => bar.title)).toEqual(['update done: 3']);
    expect(chart.bars[0]!.width).toBe(chart.area);
    // On screen, not just in the markup: hundreds of pixels, not a sliver.
    expect(chart.bars[0]!.shown).toBeGreaterThan(400);
    expect(chart.footer).toContain('50,000 unchanged record(s), not drawn');

    // Bars keep their proportions among changes: 1 create is a third of 3 updates.
    const mixed = await open(await writeRun(join(dir, 'chart-mixed'), aReport({ ...runAt(0), records: [...three, aRecord({ action: 'create' })], noops: 50_000 })));
    const widths = await inPage<Record<string, number>>(
      mixed.page,
      `Object.fromEntries(Array.from(document.querySelectorAll('svg.change-chart rect.bar')).map((r) => [r.querySelector('title').textContent, Number(r.getAttribute('width'))]))`,
    );
    expect(widths['create done: 1']! * 3).toBeCloseTo(widths['update done: 3']!, 0);
  });

  it('keeps hostile roster values as text: nothing runs, no injected element, attribute or javascript: link', async () => {
    const report = hostileReport();
    const page = await open(await writeRun(join(dir, 'hostile'), { ...report, ...runAt(0), rejectedRows: report.rejectedRows }));

    const probe = await inertProbe(page);
    expect(probe).toMatchObject({ pwned: null, scripts: 1, handlers: [], images: 0, svgs: 1 });
    for (const href of probe.hrefs) expect(new URL(href).protocol).toBe('file:');

    // The values are on the page, verbatim, as text.
    const changes = await shownRows(page.page, 'changes');
    expect(changes[0]?.[0]).toBe(`X-1${EVIL}`);
    expect(changes[0]?.[7]).toContain(JS_URL);
    expect((await shownRows(page.page, 'rejected'))[0]?.slice(1, 3)).toEqual([`R-1${CLOSE}`, '<svg onload="window.__pwned=5">']);
    expect(await inPage<string>(page.page, `document.querySelector('header h1 code').textContent`)).toBe(`demo${EVIL}`);
    await page.page.click('#filtered summary');
    expect(await shownRows(page.page, 'filtered')).toEqual([['x.csv:3', JS_URL, CLOSE, `Active equals "${EVIL}"`]]);

    // Searching for the payload finds it as text and still runs nothing.
    await setFilter(page.page, 'text', '<script>');
    expect(await ids(page, 'changes')).toEqual([`X-1${EVIL}`]);
    expect(await inPage<unknown>(page.page, 'window.__pwned === undefined')).toBe(true);

    // The run-history page shows the same hostile pipeline name and message as text.
    const index = await open(join(dir, 'hostile', 'index.html'));
    const indexProbe = await inertProbe(index);
    expect(indexProbe).toMatchObject({ pwned: null, scripts: 1, handlers: [], images: 0 });
    for (const href of indexProbe.hrefs) expect(new URL(href).protocol).toBe('file:');
    expect(await inPage<string>(index.page, `document.querySelector('header h1 code').textContent`)).toBe(`demo${EVIL}`);
    expect((await shownRows(index.page, 'runs'))[0]?.[1]).toContain(`stopped ${CLOSE}`);
  });

  it('shows times in the viewer’s time zone, with UTC on hover', async () => {
    const page = await open(await writeRun(join(dir, 'times'), aReport({ ...runAt(0), records })), { timezone: 'Asia/Tokyo' });
    const time = await inPage<{ text: string; title: string }>(page.page, `(() => { const t = document.querySelector('#summary time'); return { text: t.textContent, title: t.title }; })()`);
    // 02:00 UTC is 11:00 in Tokyo.
    expect(time.text).toMatch(/\b11:00:00\b/);
    expect(time.title).toBe('2024-05-01 02:00:00 UTC');
  });

  it('reads without JavaScript: every table is there, the filter bar (useless without script) is not', async () => {
    const page = await open(await writeRun(join(dir, 'no-js'), aReport({ ...runAt(0), records, orphans: ['O-1'], mode: 'upsert' })), { javaScript: false });
    expect(await ids(page, 'changes')).toEqual(['A-1', 'A-2', 'A-3']);
    expect(await ids(page, 'failures')).toEqual(['A-2']);
    expect(await ids(page, 'orphans')).toEqual(['O-1']);
    expect(await inPage<boolean>(page.page, `document.querySelector('.filters').getBoundingClientRect().height === 0`)).toBe(true);
    expect(await inPage<string>(page.page, `document.querySelector('#summary time').textContent`)).toBe('2024-05-01 02:00:00 UTC');
    expect(await inPage<boolean>(page.page, `!!document.querySelector('svg.change-chart rect.bar')`)).toBe(true);
  });

  it('renders a page that looks right: screenshot in the test’s directory', async () => {
    const report = aReport({
      ...runAt(0),
      records,
      noops: 50_000,
      rejectedRows: [aRejectedRow({ clientId: 'EXP-0099', name: 'Grace Hopper' })],
      filteredRows: [{ provenance: { file: '/data/rosters/experts.csv', row: 9 }, reason: 'skip_rows[0]: Active equals "No"', clientId: 'EXP-0100', name: 'Alan Turing' }],
      limiter: { requests: 120, retries: 3, rateLimited: 2, currentRate: 5, configuredRate: 10 },
    });
    report.input.filtered = 1;
    const page = await open(await writeRun(join(dir, 'look'), report));
    await page.page.click('#filtered summary');
    await inPage(page.page, 'window.scrollTo(0, 0)');
    const path = join(dir, 'report.png');
    await page.page.screenshot({ path, fullPage: true });
    const png = await readFile(path);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.length).toBeGreaterThan(20_000);
    expect(await inPage<string>(page.page, `document.querySelector('#summary').innerText`)).toContain(
      'the service answered 429 (too many requests) 2 times: the client slowed down and retried those calls',
    );
  });
});

describe('run-history index', () => {
  /** Four runs of one pipeline: success, dry run, failed, partial, newest last; retention keeps 3. */
  async function fourRuns(root: string, pipeline = 'demo'): Promise<void> {
    const outcomes: RunReport['outcome'][] = ['success', 'dry_run', 'failed', 'partial'];
    for (const [day, outcome] of outcomes.entries()) {
      const recs = Array.from({ length: day + 1 }, () => aRecord({ outcome: outcome === 'failed' ? 'failed' : 'done' }));
      await writeRun(root, aReport({ ...runAt(day), pipeline, outcome, dryRun: outcome === 'dry_run', records: recs, noops: 1000 * (day + 1) }), { runs: 3 });
    }
  }

  it('lists every run with its counts, real syncs apart from dry runs, filters by outcome, charts the trend and links to each kept report', async () => {
    const root = join(dir, 'history', 'demo');
    await fourRuns(root);
    const page = await open(join(root, 'index.html'));

    const rows = await shownRows(page.page, 'runs');
    expect(rows.map((row) => row[1]?.split(' ')[0])).toEqual(['stopped', 'failed', 'done']);
    // started, outcome, creates, updates, deletes, unchanged, failures, rejects, duration, where, report
    expect(rows[1]?.slice(2, 9)).toEqual(['0', '3', '0', '3,000', '3', '0', '3.3 s']);
    expect(rows[2]?.[10]).toBe(runAt(0).runId);
    expect((await shownRows(page.page, 'trials')).map((row) => row[10])).toEqual([runAt(1).runId]);

    await setFilter(page.page, 'outcome', 'failed');
    expect((await shownRows(page.page, 'runs')).map((row) => row[10])).toEqual([runAt(2).runId]);
    await setFilter(page.page, 'outcome', '');

    const trend = await inPage<{ lines: number; points: number; updates: string[] }>(
      page.page,
      `({ lines: document.querySelectorAll('svg.trend-chart polyline').length, points: document.querySelectorAll('svg.trend-chart circle').length,
          updates: Array.from(document.querySelectorAll('svg.trend-chart circle[data-series="updates"]')).map((c) => c.getAttribute('data-value')) })`,
    );
    // Real syncs only: the dry run (day 1) is not plotted.
    expect(trend).toEqual({ lines: 5, points: 15, updates: ['1', '3', '4'] });

    // The link opens the run's report from file://.
    await inPage(page.page, `document.querySelector('#trials').open = true`);
    await Promise.all([page.page.waitForNavigation(), page.page.click(`a[href$="${runAt(1).runId}/report.html"]`)]);
    expect(page.page.url()).toMatch(new RegExp(`^file://.*/${runAt(1).runId}/report\\.html$`));
    expect(await page.page.title()).toBe('rostersync · demo · dry_run');
    // …and the report links back.
    await Promise.all([page.page.waitForNavigation(), page.page.click('header nav a')]);
    expect(page.page.url()).toMatch(/\/demo\/index\.html$/);

    await page.page.screenshot({ path: join(dir, 'index.png'), fullPage: true });
  });

  it('at 1280 px, with plans, dry runs and real syncs mixed: the table fits, and the badge, trend and table are the real syncs', async () => {
    const root = join(dir, 'history-mixed', 'nightly');
    const long = 'the service refused 3 records: https://service.example.org/api/external/author-from-group/123456/some-very-long-client-id-without-any-space-at-all-0000000000000000/partial/ answered 422';
    const runs: Partial<RunReport>[] = [
      { outcome: 'success' },
      { outcome: 'dry_run', dryRun: true },
      { outcome: 'partial', exitCode: 2, message: long, records: [aRecord({ outcome: 'failed', error: 'boom' })] },
      { outcome: 'warning', input: { rowsRead: 100, valid: 97, rejected: 3, filtered: 0, duplicates: 0 } },
      { outcome: 'dry_run', dryRun: true },
      // The newest run of all is a plan that failed on a bad URL: it must not turn the page red.
      { outcome: 'failed', dryRun: true, exitCode: 5, message: 'cannot reach https://servce.example.org: ENOTFOUND' },
    ];
    for (const [day, overrides] of runs.entries()) await writeRun(root, aReport({ ...runAt(day), pipeline: 'nightly', noops: 123_456, ...overrides }), { runs: 30 });
    const page = await open(join(root, 'index.html'));

    expect(await inPage<string>(page.page, `document.querySelector('h1 .badge').textContent`)).toBe('done, 3 rows rejected');
    expect((await shownRows(page.page, 'runs')).map((row) => row[10])).toEqual([runAt(3).runId, runAt(2).runId, runAt(0).runId]);
    expect((await shownRows(page.page, 'trials')).map((row) => row[10])).toEqual([runAt(5).runId, runAt(4).runId, runAt(1).runId]);
    expect(await inPage<number>(page.page, `document.querySelectorAll('svg.trend-chart circle[data-series="updates"]').length`)).toBe(3);
    expect(await inPage<boolean>(page.page, `document.querySelector('#trials').open`)).toBe(false);

    // Nothing wider than the screen: no sideways scrolling, every column of the runs table in view.
    const width = await inPage<{ page: number; table: number }>(
      page.page,
      `({ page: document.documentElement.scrollWidth, table: Math.ceil(document.querySelector('#runs table').getBoundingClientRect().right) })`,
    );
    expect(width.page).toBeLessThanOrEqual(1280);
    expect(width.table).toBeLessThanOrEqual(1280);
    await page.page.screenshot({ path: join(dir, 'history-1280.png'), fullPage: true });
  });

  it('combines the histories of pipelines that ran together, filterable by pipeline', async () => {
    const reports = join(dir, 'combined');
    await fourRuns(join(reports, 'demo'), 'demo');
    await fourRuns(join(reports, 'board'), 'board');
    const file = await writeCombinedIndex({ roots: [join(reports, 'demo'), join(reports, 'board')] });
    expect(file).toBe(join(reports, 'index.html'));
    const page = await open(file);

    expect(await shownRows(page.page, 'runs')).toHaveLength(6);
    expect(await shownRows(page.page, 'trials')).toHaveLength(2);
    expect((await shownRows(page.page, 'latest')).map((row) => row.slice(0, 1))).toEqual([['demo'], ['board']]);
    await setFilter(page.page, 'pipeline', 'board');
    const board = await shownRows(page.page, 'runs');
    expect(board.map((row) => row[0])).toEqual(['board', 'board', 'board']);
    await setFilter(page.page, 'outcome', 'failed');
    expect(await shownRows(page.page, 'runs')).toHaveLength(1);
    expect(await inPage<number>(page.page, `document.querySelectorAll('svg.trend-chart').length`)).toBe(2);

    await Promise.all([page.page.waitForNavigation(), page.page.click('#latest a')]);
    expect(page.page.url()).toMatch(/\/combined\/demo\/index\.html$/);
  });
});
