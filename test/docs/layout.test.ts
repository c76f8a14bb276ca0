/**
 * The Layout table of docs/development.md names every folder under src/, and only folders that
 * exist: a folder added, moved or renamed without its line there fails here, naming it. The first
 * cell of each row is the folder, relative to src/, in backticks with a trailing slash.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const PAGE = 'docs/development.md';

/** Every folder under src/, as `name/` relative to src/, sorted. */
function sourceFolders(): string[] {
  const src = join(ROOT, 'src');
  return (readdirSync(src, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${relative(src, join(entry.parentPath, entry.name)).split('\\').join('/')}/`)
    .sort();
}

/** The folders of the table under `## Layout`: the first cell of each row, `` `name/` ``. */
export function layoutFolders(markdown: string): string[] {
  const start = markdown.search(/^## Layout\s*$/m);
  if (start < 0) return [];
  const next = markdown.slice(start + 1).search(/^## /m);
  const section = next < 0 ? markdown.slice(start) : markdown.slice(start, start + 1 + next);
  return [...section.matchAll(/^\|\s*`([^`]+\/)`\s*\|/gm)].map((match) => match[1]!).sort();
}

describe(`the Layout table of ${PAGE}`, () => {
  it('reads the folders of a Layout table, and only of that section', () => {
    const page = '# x\n## Layout\n\n| folder | concern |\n|---|---|\n| `plan/` | pure |\n| `state/sqlite/` | a backend |\n\n## Tests\n\n| `test/` | not src |\n';
    expect(layoutFolders(page)).toEqual(['plan/', 'state/sqlite/']);
  });

  it('lists every folder under src/, and no folder that is gone', () => {
    const listed = layoutFolders(readFileSync(join(ROOT, PAGE), 'utf8'));
    const folders = sourceFolders();
    expect({ missing: folders.filter((folder) => !listed.includes(folder)), gone: listed.filter((folder) => !folders.includes(folder)) }).toEqual({ missing: [], gone: [] });
  });
});
