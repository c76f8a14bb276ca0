// Whether dist/ was built before the latest change to src/, in a checkout (the published package
// ships no src/). A run on such a build would silently be the older code: the bin says so first.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Files of src/ looked at, at most: a checkout holds a few hundred; the check stays a few ms. */
const MAX_FILES = 2000;

/**
 * @param {URL} root the package's root directory
 * @returns {string | undefined} the note to print, when dist/ is older than src/
 */
export function staleBuildNote(root) {
  const dir = fileURLToPath(root);
  const main = join(dir, 'dist', 'cli', 'main.js');
  const src = join(dir, 'src');
  if (!existsSync(main) || !existsSync(src)) return undefined;
  const built = statSync(main).mtimeMs;
  let newest = { file: '', at: 0 };
  let seen = 0;
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || ++seen > MAX_FILES) continue;
    const path = join(entry.parentPath, entry.name);
    const at = statSync(path).mtimeMs;
    if (at > newest.at) newest = { file: path, at };
  }
  if (newest.at <= built) return undefined;
  return `note: dist/ was built before the latest change to src/ (${newest.file.slice(dir.length)}); this run uses the older build. Run \`npm run build\` to rebuild it (a minute or two), or bin/rostersync-dev.js to run the sources.\n`;
}
