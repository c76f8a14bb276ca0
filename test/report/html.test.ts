/**
 * report.html as markup: escaping, self-containment, the policy the page declares and the texts
 * that depend on the run. How the page behaves in a browser is in html.browser.test.ts.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PAGE_SCRIPT, PAGE_STYLE } from '../../src/report/assets.js';
import { renderTrendChart } from '../../src/report/charts.js';
import { escapeHtml, relativeHref, timeHtml } from '../../src/report/escape.js';
import { limiterSentence } from '../../src/report/format.js';
import { renderHtml } from '../../src/report/html.js';
import { CLOSE, EVIL, JS_URL, aGuard, aRecord, aRejectedRow, aReport, hostileReport } from './builders.js';

/**
 * The page's own tags with attribute values emptied: every `<`, `"` and `'` of data is escaped, so
 * each `<tag …>` is the page's markup and what is left are attribute names.
 */
function tags(html: string): string[] {
  return (html.match(/<[a-z][^>]*>/gi) ?? []).map((tag) => tag.replace(/"[^"]*"/g, '""'));
}

describe('renderHtml', () => {
  it('keeps hostile roster text inert: one script element (the page’s own), no injected tag or attribute', () => {
    const html = renderHtml(hostileReport());

    expect(html.match(/<script/gi)).toHaveLength(1);
    expect(html.match(/<\/script/gi)).toHaveLength(1);
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toContain('<!-- comment');
    // No tag the page wrote carries an event handler or a javascript: URL.
    for (const tag of tags(html)) {
      expect(tag).not.toMatch(/\son[a-z]+\s*=/i);
      expect(tag).not.toMatch(/javascript:/i);
    }
    const e = escapeHtml;
    expect(html).toContain(`rostersync · <code>demo${e(EVIL)}</code>`);
    expect(html).toContain(`stopped ${e(CLOSE)}`);
    expect(html).toContain(`To allow it: <code>--allow-deletes ${e(CLOSE)}</code>`);
    expect(html).toContain(`<td>X-1${e(EVIL)}</td>`);
    expect(html).toContain(`<ins>${e(JS_URL)}</ins>`);
  });

  it('references no external asset: links are relative, no src, url() or @import, no http(s) URL but the base URL shown as text', () => {
    const html = renderHtml(hostileReport(), { indexHref: ['..', 'index.html'] });
    for (const tag of tags(html)) expect(tag).not.toMatch(/\s(src|action|srcset|poster|data)\s*=/i);
    for (const [, href] of html.matchAll(/<a [^>]*href="([^"]*)"/g)) expect(href).toMatch(/^\.\/(\.\.\/)*[^:]*$/);
    expect(html).not.toMatch(/url\(|@import/i);
    expect(html.replaceAll('https://api.example', '')).not.toMatch(/https?:\/\//);
    expect(html).toContain('<a href="./../index.html">All runs of this pipeline</a>');
  });

  it('declares a Content-Security-Policy that allows exactly its own style and script, and no fetch', () => {
    const html = renderHtml(aReport());
    const policy = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1];
    const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
    expect(policy).toBeDefined();
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain(`script-src ${hash(PAGE_SCRIPT)}`);
    expect(policy).toContain(`style-src ${hash(PAGE_STYLE)}`);
    // The hashes are of what the page really holds.
    expect(/<script>([\s\S]*?)<\/script>/.exec(html)?.[1]).toBe(PAGE_SCRIPT);
    expect(/<style>([\s\S]*?)<\/style>/.exec(html)?.[1]).toBe(PAGE_STYLE);
  });

  it('renders every table on the server: rows are in the markup, the filter bar waits for the script', () => {
    const html = renderHtml(aReport({ records: [aRecord({ clientId: 'EXP-7', attempts: 3 })] }));
    expect(html).toMatch(/<section id="changes">.*<td>EXP-7<\/td>.*<td class="num">3<\/td>/s);
    expect(html).toContain('<div class="filters" hidden>');
  });

  it.each([
    ['upsert', ['O-1'], /kept because the pipeline is in upsert mode/],
    ['mirror', [], /mirror mode: owned records gone from the roster are deleted/],
  ] as const)('words the orphans for %s mode', (mode, orphans, expected) => {
    const html = renderHtml(aReport({ mode, orphans: [...orphans] }));
    const section = /<section id="orphans">.*?<\/section>/s.exec(html)?.[0] ?? '';
    expect(section).toMatch(expected);
    if (mode === 'mirror') expect(section).not.toContain('upsert mode');
  });

  it('links rejected.csv and shows client_id and name of rejected rows only when rows were rejected', () => {
    const rejected = renderHtml(aReport({ rejectedRows: [aRejectedRow({ clientId: 'EXP-0099', name: 'Grace Hopper' })] }));
    expect(rejected).toContain('<a href="./rejected.csv" download>rejected.csv</a>');
    expect(rejected).toMatch(/<td>experts\.csv:7<\/td><td>EXP-0099<\/td><td>Grace Hopper<\/td><td>ORCID<\/td>/);
    expect(renderHtml(aReport({ rejectedRows: [] }))).not.toContain('rejected.csv</a>');
  });

  it('counts rejected rows in the heading as the header does, and their problems apart', () => {
    const twoProblems = aRejectedRow();
    twoProblems.problems.push({ ...twoProblems.problems[0]!, column: 'Email', code: 'invalid_email', message: 'Not an email address.' });
    const html = renderHtml(aReport({ rejectedRows: [twoProblems, aRejectedRow({ provenance: { file: '/data/rosters/experts.csv', row: 9 } })], input: { rowsRead: 10, valid: 8, rejected: 2, filtered: 0, duplicates: 0 } }));
    expect(html).toContain('<h2>Rejected rows (2) · problems <span class="n">(3)</span></h2>');
  });

  it('shows the outcome badge and the tripped guard with the flag that allows it', () => {
    const html = renderHtml(
      aReport({
        outcome: 'refused',
        exitCode: 3,
        guards: [aGuard({ tripped: true, message: '60 deletes planned; the limit is 12.', allowWith: '--allow-deletes 60' })],
      }),
    );
    expect(html).toContain('<span class="badge refused">refused by a guard, nothing written</span>');
    expect(html).toContain('<span class="exit">exit 3</span>');
    expect(html).toContain('60 deletes planned; the limit is 12. To allow it: <code>--allow-deletes 60</code>');
  });

  it('writes times as UTC in the markup, for the script to localise', () => {
    expect(timeHtml('2024-05-01T02:00:00.000Z')).toBe('<time datetime="2024-05-01T02:00:00.000Z" title="2024-05-01 02:00:00 UTC">2024-05-01 02:00:00 UTC</time>');
    expect(timeHtml('not a time <b>')).toBe('not a time &lt;b&gt;');
  });
});

describe('escaping helpers', () => {
  it('escapeHtml escapes the five significant characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });

  it.each([
    [['javascript:alert(1)', 'report.html'], './javascript%3Aalert(1)/report.html'],
    [['..', 'a b', 'report.html'], './../a%20b/report.html'],
    [['"><img src=x>', 'report.html'], './%22%3E%3Cimg%20src%3Dx%3E/report.html'],
  ])('relativeHref(%j) is the path %s, never a scheme', (segments, expected) => {
    expect(relativeHref(segments)).toBe(expected);
  });
});

describe('limiterSentence', () => {
  const at = (limiter: Record<string, number>, durationMs = 10_000) =>
    limiterSentence({ durationMs, limiter: { requests: 0, retries: 0, rateLimited: 0, currentRate: 10, ...limiter } });

  it.each([
    [{ requests: 0 }, undefined],
    [
      { requests: 100, configuredRate: 10 },
      '100 requests in a run of 10.0 s, 10.0 per second on average (limit 10 per second); the service never answered 429 (too many requests); no call was retried.',
    ],
    [
      { requests: 120, rateLimited: 3, retries: 4, currentRate: 2.5, configuredRate: 10, pauses: 2, pausedMs: 4000 },
      '120 requests in a run of 10.0 s, 12.0 per second on average (limit 10 per second); the service answered 429 (too many requests) 3 times: the client slowed down, pausing 2 times (4.0 s in all) and retried those calls; 4 retries; its pace ended lowered to 2.5 per second.',
    ],
    [
      { requests: 1, rateLimited: 1, retries: 1 },
      '1 request in a run of 10.0 s, 0.1 per second on average; the service answered 429 (too many requests) 1 time: the client slowed down and retried those calls; 1 retry.',
    ],
  ])('%j → %s', (limiter, expected) => {
    expect(at(limiter)).toBe(expected);
  });
});

describe('charts and paging in the markup', () => {
  it('says there is nothing to change instead of drawing empty bars', () => {
    const html = renderHtml(aReport({ records: [], noops: 12 }));
    expect(html).toContain('Nothing to change: 12 unchanged record(s).');
    expect(html).not.toContain('class="bar"');
  });

  it('puts rows past the first page in a template, with a note for readers without JavaScript', () => {
    const records = Array.from({ length: 501 }, (_, i) => aRecord({ clientId: `P-${i}` }));
    const html = renderHtml(aReport({ records }));
    const changes = /<section id="changes">.*?<\/section>/s.exec(html)?.[0] ?? '';
    const [laidOut, spare] = changes.split('<template class="rows">');
    expect(laidOut?.match(/<tr data-action/g)).toHaveLength(500);
    expect(spare?.match(/<tr data-action/g)).toHaveLength(1);
    expect(spare).toContain('<td>P-500</td>');
    expect(changes).toContain('<noscript><p class="empty">The first 500 of 501 rows are shown. Turn on JavaScript to search and page through the rest, or open report.json.</p></noscript>');
  });

  it('draws one trend point per run and series, on a log scale labelled from 0', () => {
    const svg = renderTrendChart([
      { label: 'a', axis: 'first', values: { creates: 5000, updates: 3, deletes: 0, failures: 1, rejects: 0 } },
      { label: 'b <x>', axis: 'last', values: { creates: 0, updates: 2, deletes: 0, failures: 0, rejects: 4 } },
    ]);
    expect(svg.match(/<circle /g)).toHaveLength(10);
    expect(svg.match(/<polyline /g)).toHaveLength(5);
    expect([...svg.matchAll(/class="muted tick">([^<]+)</g)].map((m) => m[1])).toEqual(['0', '1', '10', '100', '1,000', '5,000']);
    expect(svg).toContain('<title>b &lt;x&gt;: 4 rejects</title>');
    expect(svg).toContain('>← first</text>');
    expect(svg).toContain('>last →</text>');
    // 3 updates stand clear of 0 next to 5,000 creates: a sixth of the height (log scale), not 0.06 % (linear).
    const y = (series: string, value: number) => Number(new RegExp(`data-series="${series}" data-value="${value}" cx="[^"]+" cy="([^"]+)"`).exec(svg)?.[1]);
    const height = y('deletes', 0) - y('creates', 5000);
    expect(y('deletes', 0) - y('updates', 3)).toBeGreaterThan(0.15 * height);
    expect(renderTrendChart([])).toBe('<p class="empty">No runs yet.</p>');
  });

  it('same person: the pairs found by tier, how many are left out, and a pending rename with both ids', () => {
    const html = renderHtml(
      aReport({
        duplicatePeople: [{ tier: 'email', a: { clientId: 'p100', provenance: { file: 'roster.csv', row: 2 } }, b: { clientId: 'p1', owned: true }, evidence: 'same email as the owned record p1', strength: 1, pendingRename: true }],
        duplicatePeopleFound: { found: { orcid: 0, email: 1, name: 1200 }, listed: 1, leftOut: 1200 },
      }),
    );
    expect(html).toContain('Probably the same person <span class="n">(1,201)</span>');
    expect(html).toContain('1,200 weaker pair(s) are counted but not listed; found by tier: 0 ORCID iD, 1 email, 1,200 name.');
    expect(html).toContain('<td>p100 (roster.csv:2)</td><td>p1 (in the group)</td><td>email, pending rename</td>');
  });
});
