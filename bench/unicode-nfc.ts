/**
 * What Unicode NFC costs the mapping (docs/mapping.md, "Unicode"): the same generated rows mapped
 * in one process with `unicode: nfc` (the default) and with `unicode: as_written`, alternately, so
 * both see the same machine. Prints the median time per 100k rows of each and their ratio.
 *
 *   npx tsx bench/unicode-nfc.ts [--rows 100000] [--runs 5] [--nfd]
 *
 * `--nfd` writes every generated cell decomposed (NFD), the worst case: every text cell with an
 * accent is then recomposed. Names come from bench/generate.ts (about one in four carries an
 * accent or a letter such as ø). 127.0.0.1 only (the emulator gives the custom-fields listing).
 */
import { performance } from 'node:perf_hooks';
import { parse } from 'yaml';
import { createClient } from '../src/client/client.js';
import { startEmulator } from '../src/emulator/server.js';
import { compileMapping } from '../src/mapping/compile.js';
import { mappingFileSchema } from '../src/mapping/schema.js';
import type { SourceRow } from '../src/sources/types.js';
import { HEADERS, MAPPING_YAML, makeRows } from './generate.js';
import { spread } from './stats.js';

const API_KEY = 'demo-key-0123456789';
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const rowsWanted = arg('--rows', 100_000);
const runs = arg('--runs', 5);
const nfd = process.argv.includes('--nfd');

const emulator = await startEmulator({ port: 0, host: '127.0.0.1' });
const listing = await createClient({ baseUrl: emulator.url, apiKey: API_KEY }).listCustomFields();
await emulator.close();

const base = mappingFileSchema.parse(parse(MAPPING_YAML));
const compiled = {
  nfc: compileMapping({ ...base, unicode: 'nfc' }, listing, { mappingFile: 'bench' }),
  as_written: compileMapping({ ...base, unicode: 'as_written' }, listing, { mappingFile: 'bench' }),
};
const form = (text: string): string => (nfd ? text.normalize('NFD') : text);
const rows: SourceRow[] = [];
for (const r of makeRows({ rows: rowsWanted, format: 'csv' })) {
  const cells = [r.id, r.name, r.email, r.orcid, r.level, r.areas, String(r.reviews), r.lastReview.toISOString().slice(0, 10)];
  rows.push({ values: Object.fromEntries(HEADERS.map((h, i) => [h, form(cells[i]!)])), provenance: { file: 'bench.csv', row: rows.length + 2 } });
}

function time(mapping: (typeof compiled)['nfc']): number {
  const started = performance.now();
  let records = 0;
  for (const row of rows) if (mapping.mapRow(row).kind === 'record') records++;
  if (records < rows.length * 0.9) throw new Error(`only ${records} of ${rows.length} rows mapped to records`);
  return performance.now() - started;
}

time(compiled.nfc); // warm-up of both paths
time(compiled.as_written);
const nfcMs: number[] = [];
const writtenMs: number[] = [];
for (let run = 0; run < runs; run++) {
  // Alternate the order, so neither variant always runs second.
  if (run % 2 === 0) {
    nfcMs.push(time(compiled.nfc));
    writtenMs.push(time(compiled.as_written));
  } else {
    writtenMs.push(time(compiled.as_written));
    nfcMs.push(time(compiled.nfc));
  }
}
const per100k = (ms: number): number => (ms * 100_000) / rows.length;
const fmt = (s: ReturnType<typeof spread>, digits = 0): string => `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)}, n=${s.n})`;
console.log(`${rows.length} rows${nfd ? ', every cell NFD' : ''}, ${runs} runs each`);
console.log(`unicode: as_written  ${fmt(spread(writtenMs.map(per100k)))} ms per 100k rows`);
console.log(`unicode: nfc         ${fmt(spread(nfcMs.map(per100k)))} ms per 100k rows`);
console.log(`nfc / as_written     ${fmt(spread(nfcMs.map((ms, i) => ms / writtenMs[i]!)), 3)}`);
