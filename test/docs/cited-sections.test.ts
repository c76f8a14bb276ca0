/**
 * The pages and sections that code cites exist. Messages, hints and comments in src/, bench/ and
 * scripts/ send a reader to `docs/<page>.md` or to a section by name (`docs/mapping.md, "Names"`,
 * `README, "Exit codes"`, `(README, Exit codes)`); when a section moves to another page, every
 * citation of it must move too, or the hint leads nowhere. A section is a heading of the page (its
 * whole text, the part before a colon, or the text after a number such as `5.`) or a bold label
 * (`**One clock**`) of a list.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const CODE_FOLDERS = ['src', 'bench', 'scripts'];

function codeFiles(): string[] {
  return CODE_FOLDERS.flatMap((folder) =>
    (readdirSync(join(ROOT, folder), { recursive: true }) as string[]).filter((file) => /\.(ts|mts|mjs|js)$/.test(file)).map((file) => `${folder}/${file}`),
  );
}

/** The names a reader may cite a section of a Markdown page by. */
export function sectionNames(markdown: string): Set<string> {
  const names = new Set<string>();
  for (const match of markdown.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const heading = match[1]!.replace(/`/g, '');
    names.add(heading);
    names.add(heading.replace(/^\d+[a-z]?\.\s+/, ''));
    if (heading.includes(':')) names.add(heading.slice(0, heading.indexOf(':')));
  }
  for (const match of markdown.matchAll(/\*\*([^*]+)\*\*/g)) names.add(match[1]!.replace(/`/g, '').replace(/[.:]$/, ''));
  return names;
}

export interface Citation {
  page: string;
  section?: string;
}

/** The pages and sections one line of code cites. */
export function citations(line: string): Citation[] {
  const out: Citation[] = [];
  for (const match of line.matchAll(/\b(docs\/[\w.-]+\.md|README(?:\.md)?)(?:'s)?,? \(?"([^"]+)"/g)) out.push({ page: match[1]!.startsWith('README') ? 'README.md' : match[1]!, section: match[2]! });
  for (const match of line.matchAll(/\(README(?:\.md)?, ([A-Z][\w ]*)\)/g)) out.push({ page: 'README.md', section: match[1]! });
  for (const match of line.matchAll(/\bdocs\/[\w.-]+\.md\b/g)) out.push({ page: match[0] });
  return out;
}

describe('citations of docs pages and sections in code', () => {
  it('finds the forms code uses', () => {
    expect(citations(`hint: 'See docs/state-and-recovery.md, "When the group was deleted".'`)).toEqual([
      { page: 'docs/state-and-recovery.md', section: 'When the group was deleted' },
      { page: 'docs/state-and-recovery.md' },
    ]);
    expect(citations(' * Exit codes of the CLI (README.md, "Exit codes") and the README\'s "Exit codes" table (README, Exit codes).')).toEqual([
      { page: 'README.md', section: 'Exit codes' },
      { page: 'README.md', section: 'Exit codes' },
      { page: 'README.md', section: 'Exit codes' },
    ]);
    expect(citations(' * quote it (docs/migrating.md ("Undo a run")).')).toEqual([{ page: 'docs/migrating.md', section: 'Undo a run' }, { page: 'docs/migrating.md' }]);
  });

  it('knows a section by its heading, the part before a colon, the text after its number, or a bold label', () => {
    const names = sectionNames('# Page\n## 5. Undo a run\n### Quirks: a less convenient service\n## What `plan` prints\n- **One clock** (pace-times.ts): ...\n');
    for (const name of ['Undo a run', '5. Undo a run', 'Quirks', 'What plan prints', 'One clock']) expect(names.has(name), name).toBe(true);
    expect(names.has('When the group was deleted')).toBe(false);
  });

  it('every cited page exists and holds the cited section', () => {
    const pages = new Map<string, Set<string> | undefined>();
    const sectionsOf = (page: string) => {
      if (!pages.has(page)) pages.set(page, existsSync(join(ROOT, page)) ? sectionNames(readFileSync(join(ROOT, page), 'utf8')) : undefined);
      return pages.get(page);
    };
    const broken: string[] = [];
    for (const file of codeFiles()) {
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .forEach((line, index) => {
          for (const { page, section } of citations(line)) {
            const sections = sectionsOf(page);
            if (sections === undefined) broken.push(`${file}:${index + 1}: no page ${page}`);
            else if (section !== undefined && !sections.has(section)) broken.push(`${file}:${index + 1}: ${page} has no section "${section}"`);
          }
        });
    }
    expect(broken).toEqual([]);
  });
});
