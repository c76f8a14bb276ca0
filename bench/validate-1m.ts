/**
 * Streaming proof: a generated 1M-row CSV must validate with peak RSS under 300 MB.
 *
 *   npx tsx bench/validate-1m.ts [--rows 1000000] [--regenerate]
 *
 * Generates (seeded, realistic values, ~0.1% bad rows and a few duplicate ids) into bench/data/
 * (git-ignored), then runs `rostersync validate` on it in a child process that reports its own
 * `process.resourceUsage().maxRSS` when done. Prints rows/s and the peak RSS.
 */
import { execFile } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { loadFixture } from '../src/emulator/fixture.js';
import { orcidCheckDigit } from '../src/mapping/transforms.js';
import { seededRandom } from '../src/runtime/seeded-random.js';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const DATA = join(ROOT, 'bench/data');
const LIMIT_MB = 300;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}


const FIRST = ['Amara', 'Bjørn', 'Chiara', 'Daniel', 'Elif', 'Farid', 'Grete', 'Hiroshi', 'Ines', 'Jonas', 'Kavya', 'Lucía', 'Mateo', 'Nadia', 'Oskar', 'Priya'];
const LAST = ['Okafor', 'Lindqvist', 'Bianchi', 'Hartmann', 'Yılmaz', 'Haddad', 'Sørensen', 'Tanaka', 'Moreau', 'Becker', 'Iyer', 'Fernández'];
const INSTITUTIONS = ['"Karolinska Institutet, Stockholm, Sweden"', '"University of Bologna, Italy"', '"Institut Pasteur, Paris, France"', 'University of Tokyo', '"McGill University, Montreal, Canada"'];
const AREAS = ['Oncology', 'Cardiology', 'Neurology', 'Immunology', 'Genetics', 'Epidemiology', 'Machine Learning', 'Statistics'];
const LEVELS = ['Junior', 'Senior', 'Expert'];
const AVAILABILITY = ['Available', 'Busy', 'On leave'];

async function generate(path: string, rows: number): Promise<void> {
  const random = seededRandom(1_000_003);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const out = createWriteStream(path);
  const write = async (text: string): Promise<void> => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write('Reviewer ID,First name,Last name,Email,ORCID,Affiliation,Expertise level,Subject areas,Reviews completed,Last review,Availability,Active\n');
  let chunk = '';
  for (let i = 0; i < rows; i++) {
    const first = pick(FIRST);
    const last = pick(LAST);
    // Inside the first block ORCID issues (the transform refuses others), from the same two draws.
    const draw = Math.floor(random() * 3) * 10_000_000 + Math.floor(random() * 1e7);
    const base = String(15_000_000 + Math.floor((draw * 2) / 3)).padStart(15, '0');
    let orcid = `${base}${orcidCheckDigit(base)}`;
    orcid = `${orcid.slice(0, 4)}-${orcid.slice(4, 8)}-${orcid.slice(8, 12)}-${orcid.slice(12)}`;
    if (i % 1000 === 7) orcid = `${orcid.slice(0, 18)}${orcid[18] === '0' ? '1' : '0'}`; // ~0.1% bad check digits
    const id = i % 250_000 === 11 ? `R${i - 1}` : `R${i}`; // a few duplicate ids
    const date = `20${String(15 + Math.floor(random() * 10))}-${String(1 + Math.floor(random() * 12)).padStart(2, '0')}-${String(1 + Math.floor(random() * 28)).padStart(2, '0')}`;
    const local = `${first}.${last}`.normalize('NFD').replace(/[^A-Za-z.]/g, '').toLowerCase();
    chunk +=
      `${id},${first},${last},${local}${i}@example.org,${random() < 0.8 ? orcid : ''},` +
      `${pick(INSTITUTIONS)},${pick(LEVELS)},${pick(AREAS)}; ${pick(AREAS)},${Math.floor(random() * 60)},${date},${pick(AVAILABILITY)},${random() < 0.03 ? 'No' : 'Yes'}\n`;
    if (chunk.length > 1 << 20) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
  out.end();
  await once(out, 'finish');
}

/** Child mode: run validate in-process, then report counts and this process's peak RSS. */
async function child(pipeline: string, fields: string): Promise<void> {
  const { main } = await import('../src/cli/main.js');
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        append(chunk.toString());
        done();
      },
    });
  const started = performance.now();
  const exitCode = await main(['validate', pipeline, '--fields-file', fields, '--json'], {
    stdout: sink((s) => (stdout += s)),
    stderr: sink((s) => (stderr += s)),
    env: {},
    cwd: ROOT,
  });
  const seconds = (performance.now() - started) / 1000;
  const counts = stdout ? (JSON.parse(stdout) as { counts: unknown }).counts : null;
  process.stdout.write(
    `${JSON.stringify({ exitCode, seconds, counts, maxRssKb: process.resourceUsage().maxRSS, stderr: stderr.slice(0, 500) })}\n`,
  );
}

async function parent(): Promise<void> {
  const rows = Number(arg('--rows') ?? 1_000_000);
  mkdirSync(DATA, { recursive: true });
  const csv = join(DATA, `reviewers-${rows}.csv`);
  if (!existsSync(csv) || process.argv.includes('--regenerate')) {
    const t = performance.now();
    await generate(csv, rows);
    process.stdout.write(`generated ${csv} in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  }
  const fields = join(DATA, 'fields.json');
  writeFileSync(fields, JSON.stringify(loadFixture().orgs[0]!.custom_fields));
  const pipeline = join(DATA, `validate-${rows}.yaml`);
  writeFileSync(
    pipeline,
    `source: { file: reviewers-${rows}.csv }\nmapping: ../../mappings/reviewers.yaml\ntarget: { group_id: 1 }\n`,
  );

  const output = await new Promise<string>((resolvePromise, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', pipeline, fields],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024, timeout: 15 * 60_000 },
      (error, stdout) => (error ? reject(error) : resolvePromise(stdout)),
    );
  });
  const result = JSON.parse(output.trim().split('\n').pop()!) as {
    exitCode: number;
    seconds: number;
    counts: { rowsRead: number };
    maxRssKb: number;
    stderr: string;
  };
  const peakMb = result.maxRssKb / 1024;
  process.stdout.write(
    `validate: exit ${result.exitCode}, ${JSON.stringify(result.counts)}\n` +
      `time ${result.seconds.toFixed(1)} s (${Math.round(result.counts.rowsRead / result.seconds).toLocaleString('en')} rows/s)\n` +
      `peak RSS ${peakMb.toFixed(0)} MB (limit ${LIMIT_MB} MB): ${peakMb < LIMIT_MB ? 'OK' : 'OVER'}\n`,
  );
  if (result.stderr) process.stdout.write(`stderr: ${result.stderr}\n`);
  if (peakMb >= LIMIT_MB) process.exitCode = 1;
}

if (process.argv.includes('--child')) {
  const i = process.argv.indexOf('--child');
  await child(process.argv[i + 1]!, process.argv[i + 2]!);
} else {
  await parent();
}
