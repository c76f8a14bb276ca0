import { describe, expect, it } from 'vitest';
import { escapeHtml, jsonForScript, renderHtml } from '../../src/report/html.js';
import type { RunReport } from '../../src/report/types.js';
import { aChange, aGuard, aRecord, aRejectedRow, aReport } from './builders.js';
import { runPageScript, tableRows } from './fake-dom.js';

const EVIL = '<script>alert(1)</script>';
const CLOSE = '</script><img src=x onerror=alert(2)>';

/** A report whose every free-text field (from the roster, the service or the operator) is hostile. */
function hostileReport(): RunReport {
  return aReport({
    pipeline: `demo${EVIL}`,
    pipelineFile: `pipelines/${CLOSE}.yaml`,
    source: { file: `/data/${EVIL}.csv`, sha256: 'c'.repeat(64), format: 'csv', sheet: CLOSE },
    target: { baseUrl: 'https://api.example', groupId: 7, groupName: `Board ${EVIL}` },
    message: `stopped ${CLOSE}`,
    outcome: 'partial',
    exitCode: 2,
    records: [
      aRecord({
        clientId: `X-1${EVIL}`,
        provenance: { file: 'C:\\rosters\\<img onerror=alert(3)>.xlsx', sheet: 'Experts', row: 12 },
        changes: [aChange({ before: CLOSE, after: EVIL, remote: '<!-- comment' })],
      }),
      aRecord({ clientId: `X-2${CLOSE}`, outcome: 'failed', httpStatus: 500, attempts: 5, error: `boom ${EVIL}` }),
    ],
    guards: [aGuard({ tripped: true, message: `limit ${EVIL}`, allowWith: `--allow-deletes ${CLOSE}` })],
    orphans: [`O-1${EVIL}`],
    rejectedRows: [aRejectedRow({ values: { Name: EVIL } })],
    notes: [`note ${CLOSE}`],
  });
}

function embeddedData(html: string): unknown {
  const blob = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)?.[1];
  if (blob === undefined) throw new Error('no data block');
  return JSON.parse(blob);
}

describe('renderHtml', () => {
  it('keeps hostile roster text inert: only the page’s own two script elements exist', () => {
    const report = hostileReport();
    const html = renderHtml(report);

    expect(html.match(/<script/gi)).toHaveLength(2);
    expect(html.match(/<\/script/gi)).toHaveLength(2);
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toContain('<!-- comment');
    expect(html).toContain(`rostersync · <code>demo&lt;script&gt;alert(1)&lt;/script&gt;</code>`);
    expect(html).toContain('stopped &lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;');
    expect(html).toContain('To allow it: <code>--allow-deletes &lt;/script&gt;');
    // The embedded data is the report itself, escaped only as JSON unicode escapes.
    expect(embeddedData(html)).toEqual(report);
  });

  it('references no external asset: no src, href, url() or @import, no http(s) URL but the base URL shown as text', () => {
    const html = renderHtml(hostileReport());
    const outsideData = html.replace(/<script type="application\/json"[\s\S]*?<\/script>/, '');
    // Every `<` of data is escaped, so any `<tag …>` here is the page's own markup.
    expect(outsideData).not.toMatch(/<[a-z][^>]*\s(src|href|action|srcset)\s*=/i);
    expect(outsideData).not.toMatch(/url\(|@import/i);
    expect(outsideData.replaceAll('https://api.example', '')).not.toMatch(/https?:\/\//);
  });

  it.each([
    ['<', '\\u003c'],
    ['>', '\\u003e'],
    ['&', '\\u0026'],
    ['\u2028', '\\u2028'],
  ])('jsonForScript escapes %j as %s and parses back', (char, escaped) => {
    const json = jsonForScript({ v: `a${char}b` });
    expect(json).toBe(`{"v":"a${escaped}b"}`);
    expect(JSON.parse(json)).toEqual({ v: `a${char}b` });
  });

  it('escapeHtml escapes the five significant characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });

  it('shows the outcome badge, the tripped guard and a chart of counts by action × outcome', () => {
    const html = renderHtml(
      aReport({
        outcome: 'refused',
        exitCode: 3,
        records: [aRecord({ action: 'delete', outcome: 'skipped', changes: [] }), aRecord({ action: 'create', outcome: 'planned' })],
        guards: [aGuard({ tripped: true, message: '60 deletes planned; the limit is 12.', allowWith: '--allow-deletes 60' })],
        noops: 57,
      }),
    );
    expect(html).toContain('<span class="badge refused">refused</span>');
    expect(html).toContain('<span class="exit">exit 3</span>');
    expect(html).toContain('60 deletes planned; the limit is 12. To allow it: <code>--allow-deletes 60</code>');
    expect(html).toMatch(/<svg class="chart"[^>]*>.*<title>delete skipped: 1<\/title>.*<title>noop done: 57<\/title>.*<\/svg>/s);
  });
});

describe('report.html script (run against a minimal DOM)', () => {
  it('builds the changes, failures, rejected and orphans tables as text', () => {
    const page = runPageScript(renderHtml(hostileReport()));

    const changes = tableRows(page.byId('changes'));
    expect(changes).toHaveLength(2);
    expect(changes[0]).toEqual([
      `X-1${EVIL}`,
      'update',
      'changed',
      'done',
      '<img onerror=alert(3)>.xlsx[Experts]:12',
      `Name: ${CLOSE} → ${EVIL}remote: <!-- comment`,
    ]);
    expect(tableRows(page.byId('failures'))).toEqual([[`X-2${CLOSE}`, 'update', '500', '5', `boom ${EVIL}`]]);
    expect(tableRows(page.byId('rejected'))).toEqual([
      ['experts.csv:7', 'ORCID', '0000-0002-1825-009X', 'invalid_orcid ORCID checksum does not match.', 'Copy the ORCID from orcid.org.'],
    ]);
    expect(tableRows(page.byId('orphans'))).toEqual([[`O-1${EVIL}`]]);
    expect(page.byId('changes').querySelector('.n')?.textContent).toBe('(2)');
  });

  it('filters by text, action and outcome', () => {
    const records = [
      aRecord({ clientId: 'A-1', action: 'create', reason: 'new', changes: [aChange({ label: 'Subject areas', before: undefined, after: ['Optics'] })] }),
      aRecord({ clientId: 'A-2', action: 'update', outcome: 'failed', error: 'timeout' }),
      aRecord({ clientId: 'A-3', action: 'delete', reason: 'gone_from_roster', changes: [] }),
    ];
    const page = runPageScript(renderHtml(aReport({ records })));
    const ids = () => tableRows(page.byId('changes')).map((row) => row[0]);
    const set = (id: string, value: string, type: string) => {
      const input = page.byId(id);
      input.value = value;
      input.dispatch(type);
    };

    expect(ids()).toEqual(['A-1', 'A-2', 'A-3']);
    set('f-text', 'OPTICS', 'input');
    expect(ids()).toEqual(['A-1']);
    expect(page.byId('changes').querySelector('.n')?.textContent).toBe('(1 of 3)');
    set('f-text', '', 'input');
    set('f-action', 'delete', 'change');
    expect(ids()).toEqual(['A-3']);
    set('f-action', '', 'change');
    set('f-outcome', 'failed', 'change');
    expect(ids()).toEqual(['A-2']);
    expect(tableRows(page.byId('failures'))).toHaveLength(1);
    set('f-outcome', 'skipped', 'change');
    expect(tableRows(page.byId('changes'))).toEqual([['No row matches the filter.']]);
  });

  it('stays usable with 50k records: one JSON blob, 500 rows rendered and a button for more', () => {
    const records = Array.from({ length: 50_000 }, (_, i) => ({
      clientId: `R-${i}`,
      action: 'update' as const,
      reason: 'changed',
      provenance: { file: 'big.csv', row: i + 2 },
      changes: [{ field: 'name', label: 'Name', before: `Old ${i}`, after: `New ${i}` }],
      outcome: 'done' as const,
    }));
    const started = Date.now();
    const html = renderHtml(aReport({ records, noops: 0 }));
    const page = runPageScript(html);
    const section = page.byId('changes');

    expect(tableRows(section)).toHaveLength(500);
    expect(section.querySelector('.more')?.textContent).toBe('Showing 500 of 50000. Show 5000 more');
    expect(html.length).toBeLessThan(20_000_000);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
