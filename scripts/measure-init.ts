/**
 * The share of columns `rostersync init --yes` maps as a person would: runs init on every roster
 * of test/support/init-columns.ts (the samples and rosters built from public data) with the
 * emulator's custom fields, and compares each column with the hand-written mapping. Deterministic
 * (no timing): one run is the figure.
 *
 *   npx tsx scripts/measure-init.ts
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { main } from '../src/cli/main.js';
import { loadFixture } from '../src/emulator/fixture.js';
import { openSource } from '../src/sources/index.js';
import { columnView, INIT_CASES } from '../test/support/init-columns.js';
import { outputSink } from '../test/support/cli.js';

const ROOT = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'rostersync-measure-init-'));
const fields = join(dir, 'fields.json');
writeFileSync(fields, JSON.stringify(loadFixture().orgs[0]!.custom_fields));

let total = 0;
let right = 0;
try {
  for (const c of INIT_CASES) {
    const mapping = join(dir, `${c.name}.mapping.yaml`);
    const sheet = 'sheet' in c ? ['--sheet', c.sheet] : [];
    const out = outputSink();
    const encoding = 'encoding' in c ? ['--encoding', c.encoding] : [];
    const code = await main(['init', c.roster, ...sheet, ...encoding, '--fields-file', fields, '--yes', '--pipeline', join(dir, `${c.name}.pipeline.yaml`), '--mapping', mapping], {
      stdout: out.stream,
      stderr: out.stream,
      env: {},
      cwd: ROOT,
    });
    if (code !== 0) throw new Error(`init ${c.roster} exited ${code}:\n${out.text()}`);
    const isXlsx = c.roster.endsWith('.xlsx');
    const headerRow = c.name === 'legacy-export' ? 2 : 1;
    const source = await openSource(isXlsx ? { file: c.roster, xlsx: { sheet: 'sheet' in c ? c.sheet : 1, header_row: headerRow } } : { file: c.roster, csv: { encoding: 'encoding' in c ? c.encoding : 'auto', delimiter: 'auto', header_row: headerRow } }, { baseDir: ROOT });
    const actual = columnView(mapping, source.headers);
    const expected = columnView(join(ROOT, c.expected), source.headers);
    const misses = source.headers.filter((h) => actual[h] !== expected[h]);
    total += source.headers.length;
    right += source.headers.length - misses.length;
    console.log(`${c.name.padEnd(18)} ${source.headers.length - misses.length}/${source.headers.length}${misses.map((h) => `\n    ${h}: init "${actual[h]}", person "${expected[h]}"`).join('')}`);
  }
  console.log(`\ncolumns mapped as a person would: ${right}/${total} (${((100 * right) / total).toFixed(1)} %)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
