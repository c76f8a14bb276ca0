/**
 * Reads one case of the roster corpus with a build's reader and prints what it gave, as one JSON
 * line: run in a process of its own, so a build that crashes on a hostile file (V8 out of memory)
 * costs that case only. Used by bench/roster-corpus.ts.
 *
 *   node bench/roster-corpus-case.mjs <dist dir> <case file> <options JSON>
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, file, options] = process.argv.slice(2);
const { openSource } = await import(pathToFileURL(resolve(dist, 'sources/index.js')).href);
const corpus = resolve(import.meta.dirname, '../test/fixtures/roster-corpus');
const result = { headers: [], rows: [], rejects: [], notes: [] };
try {
  const source = await openSource({ file, ...JSON.parse(options) }, { baseDir: corpus });
  result.headers = source.headers;
  result.notes = source.notes;
  for await (const item of source.items) {
    if (item.kind === 'row') result.rows.push({ row: item.row.provenance.row, values: item.row.values });
    else result.rejects.push({ row: item.error.provenance.row, message: item.error.message });
  }
} catch (error) {
  result.error = { message: error.message, ...(error.hint === undefined ? {} : { hint: error.hint }) };
}
process.stdout.write(`${JSON.stringify(result)}\n`);
