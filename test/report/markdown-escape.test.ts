/**
 * Markdown reports (report.md and the $GITHUB_STEP_SUMMARY append, which is the same text)
 * escape roster values. Rendered with a real GFM renderer (marked): a client_id with backticks or raw
 * HTML stays inside its code span and nothing renders as a link, an image or markup.
 */
import { marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { code, mdText, renderMarkdown } from '../../src/report/markdown.js';
import { aChange, aGuard, aRecord, aReport, hostileReport } from './builders.js';

const html = (md: string): string => marked.parse(md, { gfm: true, async: false });

/** The HTML of every `<code>` element, decoded to text. */
function codeTexts(rendered: string): string[] {
  return [...rendered.matchAll(/<code>([\s\S]*?)<\/code>/g)].map((m) =>
    m[1]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&'),
  );
}

const HOSTILE_IDS = [
  'a`b',
  'a``<img src=x onerror=alert(1)>``b',
  '`leading and trailing`',
  '```',
  '``<script>alert(1)</script>',
  'x`](https://evil.example)`',
  '![pic](https://evil.example/p.png)',
  'https://evil.example/login',
  'www.evil.example',
  '<a href="https://evil.example">x</a>',
];

describe('a hostile client_id stays inside its code span', () => {
  it.each(HOSTILE_IDS)('%s', (clientId) => {
    const rendered = html(`| id |\n|---|\n| ${code(clientId)} |\n\n- ${code(clientId)} done\n`);
    expect(rendered).not.toMatch(/<(a|img|script)\b/i);
    const texts = codeTexts(rendered);
    expect(texts).toHaveLength(2);
    for (const text of texts) expect(text).toBe(clientId.replace(/\|/g, '¦'));
  });
});

describe('free text cannot become a link, an image, a heading or markup', () => {
  it.each([
    'see https://evil.example/x now',
    'www.evil.example is down',
    'write to someone@evil.example',
    '![img](https://evil.example/p.png)',
    '[click](javascript:alert(1))',
    '<img src=x onerror=alert(1)>',
    '# not a heading',
    '~~struck~~ and $x^2$',
  ])('%s', (text) => {
    const rendered = html(`- ${mdText(text)}\n\n| cell |\n|---|\n| ${mdText(text)} |\n`);
    expect(rendered).not.toMatch(/<(a|img|script|h\d|del|s)\b/i);
  });
});

describe('the whole report', () => {
  it('renders no link, image or script from hostile roster and service values', () => {
    const report = aReport({
      outcome: 'partial',
      exitCode: 2,
      records: HOSTILE_IDS.map((clientId, i) =>
        aRecord({
          clientId,
          outcome: i % 2 ? 'failed' : 'done',
          ...(i % 2 ? { httpStatus: 400, attempts: 1, error: `refused ${clientId} see https://evil.example` } : {}),
          changes: [aChange({ label: `Label ${clientId}` })],
        }),
      ),
      guards: [aGuard({ tripped: true, message: `limit ![x](https://evil.example/i.png)`, allowWith: '--allow-deletes 3' })],
      notes: ['note <img src=x>', 'https://evil.example'],
    });
    const rendered = html(renderMarkdown(report));
    expect(rendered).not.toMatch(/<(a|img|script)\b/i);
    const texts = codeTexts(rendered);
    for (const clientId of HOSTILE_IDS) {
      const shown = clientId.replace(/\|/g, '¦');
      // In the failures table as it is; in the changes list after the action symbol.
      expect(texts.some((text) => text === shown || text.endsWith(` ${shown}`)), clientId).toBe(true);
    }
    expect(html(renderMarkdown(hostileReport()))).not.toMatch(/<(a|img|script|svg|b)\b/i);
  });
});
