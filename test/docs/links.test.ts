/**
 * Every relative link of the pages people read (README.md, CONTRIBUTING.md, docs/*.md) leads
 * somewhere: the file or folder exists, and a `#fragment` names a heading of the page it points
 * to, slugged as GitHub slugs headings. Sections move between pages; a link left behind fails here,
 * naming the page, the line and the target.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { Lexer, type Token, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

const PAGES = ['README.md', 'CONTRIBUTING.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** A heading's text as GitHub reads it for the slug: code spans keep their text, links their label. */
function plainText(tokens: Token[]): string {
  return tokens
    .map((token) => {
      if (token.type === 'codespan') return token.raw.replace(/^`+|`+$/g, '');
      if ('tokens' in token && token.tokens) return plainText(token.tokens);
      return 'text' in token ? String(token.text) : token.raw;
    })
    .join('');
}

/** GitHub's heading slug: lower case, punctuation dropped (letters, digits, `_` and `-` stay), spaces to `-`. */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page: its headings' slugs, a repeated one with -1, -2, ... as GitHub numbers them. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  new Lexer().lex(markdown).forEach(function visit(token: Token): void {
    if (token.type === 'heading') {
      const base = slug(plainText((token as Tokens.Heading).tokens));
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      out.add(count === 0 ? base : `${base}-${count}`);
    }
  });
  return out;
}

interface Link {
  href: string;
  line: number;
}

/** The links of a page with their line, code spans and code blocks excluded (they are not links). */
export function links(markdown: string): Link[] {
  const out: Link[] = [];
  let offset = 0;
  const lexer = new Lexer();
  const tokens = lexer.lex(markdown);
  const lineAt = (index: number) => markdown.slice(0, index).split('\n').length;
  for (const block of tokens) {
    const start = markdown.indexOf(block.raw, offset);
    if (start >= 0) offset = start + block.raw.length;
    const walk = (token: Token) => {
      if (token.type === 'link' || token.type === 'image') {
        const at = markdown.indexOf(token.raw, Math.max(start, 0));
        out.push({ href: (token as Tokens.Link).href, line: lineAt(at >= 0 ? at : Math.max(start, 0)) });
      }
      if ('tokens' in token && token.tokens) token.tokens.forEach(walk);
      if (token.type === 'table') {
        const table = token as Tokens.Table;
        [...table.header, ...table.rows.flat()].forEach((cell) => cell.tokens.forEach(walk));
      }
      if (token.type === 'list') (token as Tokens.List).items.forEach(walk);
    };
    walk(block);
  }
  return out;
}

/** What is wrong with one link of `page` (a path from the root), or undefined. */
export function brokenLink(page: string, href: string, read: (file: string) => string | undefined): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) return undefined; // another site: not checked here
  const [path = '', fragment] = href.split('#', 2) as [string, string | undefined];
  const target = path === '' ? page : relative(ROOT, resolve(ROOT, dirname(page), decodeURIComponent(path)));
  if (target.startsWith('..')) return `${href} leads outside the repository`;
  if (!existsSync(join(ROOT, target))) return `${href}: no file ${target}`;
  if (fragment === undefined || fragment === '') return undefined;
  if (!target.endsWith('.md')) return `${href}: a #fragment on a file that is not a Markdown page`;
  const text = read(target);
  if (text === undefined) return `${href}: ${target} cannot be read`;
  if (!anchors(text).has(decodeURIComponent(fragment))) return `${href}: ${target} has no heading #${fragment}`;
  return undefined;
}

function readPage(file: string): string | undefined {
  try {
    return readFileSync(join(ROOT, file), 'utf8');
  } catch {
    return undefined;
  }
}

describe('the link checker', () => {
  it('slugs headings as GitHub does', () => {
    expect([...anchors('# Retries & rate limits\n## What `plan` prints\n### 5. Undo a run\n## Notes\n## Notes\n## State (SQLite, PostgreSQL)\n')]).toEqual([
      'retries--rate-limits',
      'what-plan-prints',
      '5-undo-a-run',
      'notes',
      'notes-1',
      'state-sqlite-postgresql',
    ]);
  });

  it('finds links in prose, lists and tables, not in code, with their lines', () => {
    const page = 'See [a](a.md).\n\n- [b](#b)\n\n| x | y |\n|---|---|\n| [c](docs/c.md#d) | `[e](e.md)` |\n\n```md\n[f](f.md)\n```\n';
    expect(links(page)).toEqual([
      { href: 'a.md', line: 1 },
      { href: '#b', line: 3 },
      { href: 'docs/c.md#d', line: 7 },
    ]);
  });

  it('names a missing file, a missing heading, and a page outside the repository', () => {
    const pages: Record<string, string> = { 'README.md': '# rostersync\n## Exit codes\n' };
    const read = (file: string) => pages[file];
    expect(brokenLink('docs/scaling.md', '../README.md#exit-codes', read)).toBeUndefined();
    expect(brokenLink('docs/scaling.md', '../README.md#undo-a-run', read)).toMatch(/README\.md has no heading #undo-a-run/);
    expect(brokenLink('docs/scaling.md', 'no-such-page.md', read)).toMatch(/no file docs\/no-such-page\.md/);
    expect(brokenLink('README.md', '../elsewhere/spec.md', read)).toMatch(/outside the repository/);
    expect(brokenLink('README.md', 'https://example.org/#x', read)).toBeUndefined();
  });
});

describe('every relative link and anchor resolves', () => {
  it.each(PAGES)('%s', (page) => {
    const text = readPage(page)!;
    const broken = links(text).flatMap(({ href, line }) => {
      const why = brokenLink(page, href, readPage);
      return why ? [`${page}:${line}: ${why}`] : [];
    });
    expect(broken).toEqual([]);
  });
});
