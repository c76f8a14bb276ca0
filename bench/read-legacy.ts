/**
 * What whole-file encoding detection costs: a 100,000-row Windows-1252 roster (Western names and
 * affiliations) read through openSource undeclared (`encoding: auto`: the detector weighs every
 * non-ASCII word, reading the file once more) and declared (`encoding: windows-1252`), in
 * alternating order, n runs. Prints each median (min–max) and the ratio undeclared / declared per
 * run. With --baseline=<dist dir>, another build's declared read is timed in the same runs.
 *
 *   npx tsx bench/read-legacy.ts [--rows=100000] [--runs=5] [--baseline=<dist dir>]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import iconv from 'iconv-lite';
import { seededRandom } from '../src/runtime/seeded-random.js';
import { spread, type Spread } from './stats.js';

const argv = process.argv.slice(2);
const arg = (name: string): string | undefined => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const rows = Number(arg('rows') ?? 100_000);
const runs = Math.min(Number(arg('runs') ?? 5), 20);
const baseline = arg('baseline');

type Open = (config: Record<string, unknown>, options: { baseDir: string }) => Promise<{ items: AsyncIterable<unknown> }>;
const load = async (dir: string): Promise<Open> => ((await import(pathToFileURL(resolve(dir, 'sources', 'index.js')).href)) as { openSource: Open }).openSource;
const mine = (await import('../src/sources/index.js')).openSource as unknown as Open;
const theirs = baseline === undefined ? undefined : await load(baseline);

const GIVEN = ['José', 'François', 'Jürgen', 'Søren', 'Zoë', 'Agnès', 'Björn', 'Iñaki', 'Hélène', 'Ana', 'Peter', 'Maël', 'Dörte', 'Ângela'];
const FAMILY = ['García', 'Lefèvre', 'Groß', 'Kjærgaard', 'Müller', 'Pérez', 'Åström', 'Gonçalves', 'Smith', 'Høgh', 'Núñez', 'Dupré'];
const PLACES = ['Universidad de Salamanca', 'Université de Strasbourg', 'Universität Tübingen', 'Københavns Universitet', 'Universität zu Köln', 'Göteborgs universitet'];
const next = seededRandom(7);
const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
const lines = ['Name,Email,Affiliation'];
for (let i = 0; i < rows; i++) lines.push(`${pick(GIVEN)} ${pick(FAMILY)},p${i}@example.org,${pick(PLACES)}`);
const dir = mkdtempSync(join(tmpdir(), 'rostersync-read-legacy-'));
writeFileSync(join(dir, 'roster.csv'), iconv.encode(`${lines.join('\r\n')}\r\n`, 'windows-1252'));

async function time(open: Open, csv: Record<string, unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  const source = await open({ file: 'roster.csv', csv }, { baseDir: dir });
  let count = 0;
  for await (const _ of source.items) count++;
  if (count !== rows) throw new Error(`read ${count} rows, not ${rows}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const auto: number[] = [];
const declared: number[] = [];
const other: number[] = [];
try {
  for (let run = 0; run < runs; run++) {
    // Alternate the order, so neither read always comes first.
    const order = run % 2 === 0 ? ['auto', 'declared'] : ['declared', 'auto'];
    for (const which of order) (which === 'auto' ? auto : declared).push(await time(mine, which === 'auto' ? {} : { encoding: 'windows-1252' }));
    if (theirs) other.push(await time(theirs, { encoding: 'windows-1252' }));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const show = (s: Spread, unit = ' ms'): string => `${s.median.toFixed(unit ? 0 : 2)}${unit} (${s.min.toFixed(unit ? 0 : 2)}–${s.max.toFixed(unit ? 0 : 2)}, n=${s.n})`;
const out = [
  `${rows} rows, Windows-1252, ${runs} runs`,
  `undeclared (detected): ${show(spread(auto))}`,
  `declared: ${show(spread(declared))}`,
  `undeclared / declared: ${show(spread(auto.map((t, i) => t / declared[i]!)), '')}`,
];
if (theirs) out.push(`baseline build, declared: ${show(spread(other))}`, `declared / baseline declared: ${show(spread(declared.map((t, i) => t / other[i]!)), '')}`);
process.stdout.write(`${out.join('\n')}\n`);
