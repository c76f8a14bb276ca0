/**
 * Figures of the roster corpus (test/fixtures/roster-corpus/): per group, the cases read right,
 * refused with the right reason, refused for a wrong reason (or a good row rejected) and silently
 * wrong; the encoding detector's accuracy on the corpus's detection cases and on random rosters
 * mixed from its names. With --dist=<dir> another build (e.g. the previous release's dist/) is
 * judged on the same cases, for a before/after table.
 *
 *   npx tsx bench/roster-corpus.ts [--dist=<dir>] [--sweep]
 *
 * Each case runs in a process of its own (bench/roster-corpus-case.mjs), capped at 1 GB of heap
 * and 60 s: a build that dies on a hostile workbook loses that case, not the run.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import iconv from 'iconv-lite';
import { judge, loadCases, type CorpusCase, type Outcome, type ReadResult } from '../test/fixtures/roster-corpus/cases.js';
import { ROSTERS } from '../test/fixtures/roster-corpus/names.js';
import { detectLegacyEncoding, ACCEPT_NATS } from '../src/sources/encoding/detect.js';
import { encodingOfLabel, iconvCodec } from '../src/sources/encoding/labels.js';

const ROOT = resolve(import.meta.dirname, '..');
const argv = process.argv.slice(2);
const distArg = argv.find((arg) => arg.startsWith('--dist='))?.slice('--dist='.length);
const dist = resolve(distArg ?? resolve(ROOT, 'dist'));
if (distArg === undefined) execFileSync(process.execPath, [resolve(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'ignore' });

/** Whether the build's own pipeline schema accepts the case's source.csv options (older builds took fewer encoding labels). */
const { csvOptionsSchema } = (await import(pathToFileURL(resolve(dist, 'sources', 'options.js')).href)) as { csvOptionsSchema: { safeParse(input: unknown): { success: boolean } } };
function labelAccepted(entry: CorpusCase): boolean {
  return entry.options?.csv === undefined || csvOptionsSchema.safeParse(entry.options.csv).success;
}

function run(entry: CorpusCase): { outcome: Outcome; why?: string } {
  if (!labelAccepted(entry)) return { outcome: 'refused-wrong', why: 'the pipeline schema does not accept this encoding label' };
  const child = spawnSync(process.execPath, ['--max-old-space-size=1024', resolve(ROOT, 'bench', 'roster-corpus-case.mjs'), dist, entry.file, JSON.stringify(entry.options ?? {})], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const line = child.stdout?.trim().split('\n').pop() ?? '';
  if (child.status !== 0 || !line.startsWith('{')) {
    return { outcome: 'refused-wrong', why: `the process died (${child.signal ?? `exit ${child.status}`}) without a message` };
  }
  return judge(entry, JSON.parse(line) as ReadResult);
}

const cases = loadCases();
const groups = new Map<string, Record<Outcome, number>>();
const detection = { right: 0, refused: 0, wrong: 0 };
const notRight: string[] = [];
for (const entry of cases) {
  const { outcome, why } = run(entry);
  const counts = groups.get(entry.group) ?? { right: 0, 'refused-right': 0, 'refused-wrong': 0, 'silently-wrong': 0 };
  counts[outcome]++;
  groups.set(entry.group, counts);
  if (entry.detection !== undefined) {
    if (outcome === 'right') detection.right++;
    else if (outcome === 'silently-wrong') detection.wrong++;
    else detection.refused++;
  }
  const expected = entry.expect.refuse !== undefined ? 'refused-right' : 'right';
  if (outcome !== expected && !(outcome === 'refused-right' && entry.expect.orRefuseWith)) notRight.push(`  ${entry.id}: ${outcome}${why ? ` (${why.slice(0, 160)})` : ''}`);
}

const out: string[] = [`Roster corpus, ${cases.length} cases, build ${dist}`, '', '| group | cases | right | refused, right reason | refused, wrong reason | silently wrong |', '| --- | ---: | ---: | ---: | ---: | ---: |'];
for (const [group, counts] of [...groups].sort()) {
  const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
  out.push(`| ${group} | ${total} | ${counts.right} | ${counts['refused-right']} | ${counts['refused-wrong']} | ${counts['silently-wrong']} |`);
}
const detected = detection.right + detection.refused + detection.wrong;
out.push('', `Detection cases (no encoding declared, legacy encodings): ${detected}; read right ${detection.right}, refused ${detection.refused}, silently wrong ${detection.wrong}.`);
if (notRight.length > 0) out.push('', 'Cases not read right:', ...notRight);

if (argv.includes('--sweep')) {
  // Random rosters of 1 to 8 rows mixed from the corpus's names, per encoding: the detector alone.
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const sweep = { right: 0, refused: 0, wrong: 0 };
  for (const roster of ROSTERS) {
    for (const encoding of roster.encodings) {
      const codec = iconvCodec(encodingOfLabel(encoding) ?? encoding);
      const usable = roster.rows.filter((row) => iconv.decode(iconv.encode(row.join(','), codec), codec) === row.join(','));
      if (usable.length === 0) continue;
      for (let trial = 0; trial < 40; trial++) {
        const rows = Array.from({ length: 1 + Math.floor(random() * 8) }, () => usable[Math.floor(random() * usable.length)]!);
        const text = [['Name', 'Email', 'Affiliation'], ...rows].map((row) => row.join(',')).join('\r\n');
        const bytes = iconv.encode(text, codec);
        if (iconv.decode(bytes, codec) !== text) continue;
        const found = await detectLegacyEncoding(bytes);
        if (found.kind !== 'accepted') sweep.refused++;
        else if (iconv.decode(bytes, iconvCodec(found.reading.encoding)).normalize('NFC') === text.normalize('NFC')) sweep.right++;
        else sweep.wrong++;
      }
    }
  }
  const total = sweep.right + sweep.refused + sweep.wrong;
  out.push('', `Detector on ${total} random rosters (1-8 rows of the corpus's names, one legacy encoding each, accept margin ${ACCEPT_NATS} nats): right ${sweep.right} (${((100 * sweep.right) / total).toFixed(1)} %), refused ${sweep.refused} (${((100 * sweep.refused) / total).toFixed(1)} %), wrong ${sweep.wrong}.`);
}
process.stdout.write(`${out.join('\n')}\n`);
