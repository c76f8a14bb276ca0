/**
 * The same person under two client_ids at scale (`npm run bench -- --only=duplicates`): a roster of
 * 100,000 records of which 2 % repeat an earlier person under a new client_id (a third each: same
 * ORCID iD, same email, a one-letter typo in the name at the same affiliation). Each run times the
 * plan's per-record work on those records (canonical JSON and hash of each, src/plan/canonical.ts)
 * without the check and with it (each record also handed to the finder as it is mapped, as
 * src/sync/gather.ts does, then the pairs found: src/mapping/duplicate-people.ts), in alternating
 * order; the difference is the check's cost beyond the plan. Also: how many planted pairs it finds.
 * Seeded: the same roster every run.
 */
import { loadavg } from 'node:os';
import { DuplicatePeopleFinder } from '../src/mapping/duplicate-people.js';
import { canonicalJson, hashJson } from '../src/plan/canonical.js';
import { seededRandom } from '../src/seeded-random.js';
import { spread, type Spread } from './stats.js';

export interface DuplicatesResult {
  rows: number;
  planted: number;
  found: number;
  /** Planted pairs found, over planted. */
  recall: number;
  /** The plan's per-record work alone (canonical JSON + hash of every record). */
  withoutMs: Spread;
  /** The same work with the check: each record added to the finder, then the pairs found. */
  withMs: Spread;
  /** withMs - withoutMs, per run: the check's cost beyond the plan (target: under 1000 ms). */
  differenceMs: Spread;
  /** withMs / withoutMs, per run. */
  ratio: Spread;
  /** Blocks compared in part only (past their caps): 0 on this roster. */
  partialBlocks: number;
  /** The machine's 1-minute load average when the section ended (other work slows both sides alike). */
  loadAverage: number;
}

const FIRST = ['Anna', 'Bruno', 'Chiara', 'Dmitri', 'Elif', 'Femi', 'Gabriel', 'Hanna', 'Ibrahim', 'Julia', 'Kenji', 'Leila', 'Marco', 'Noor', 'Oskar', 'Priya', 'Quentin', 'Rosa', 'Sven', 'Tariq', 'Ursula', 'Viktor', 'Wei', 'Ximena', 'Yusuf', 'Zofia'];
const LAST = ['Adeyemi', 'Berg', 'Costa', 'Demir', 'Eriksen', 'Fischer', 'Garcia', 'Haddad', 'Iyer', 'Jensen', 'Khalil', 'Lindqvist', 'Moreau', 'Novak', 'Okafor', 'Petrov', 'Quispe', 'Rossi', 'Sato', 'Tanaka', 'Ueda', 'Volkov', 'Wagner', 'Xu', 'Yilmaz', 'Zhang'];

type Record = { clientId: string; fields: { [key: string]: string | string[] | null }; provenance: { file: string; row: number } };

function orcidOf(n: number): string {
  const digits = String(100_000_000_000_000 + n).slice(-15).split('').map(Number);
  let total = 0;
  for (const d of digits) total = (total + d) * 2;
  const check = (12 - (total % 11)) % 11;
  const all = `${digits.join('')}${check === 10 ? 'X' : check}`;
  return `${all.slice(0, 4)}-${all.slice(4, 8)}-${all.slice(8, 12)}-${all.slice(12)}`;
}

export function duplicateRoster(rows: number, seed = 7): { records: Record[]; planted: Array<[string, string]> } {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const duplicates = Math.round(rows * 0.02);
  const records: Record[] = [];
  for (let i = 0; i < rows - duplicates; i++) {
    const first = pick(FIRST);
    const last = `${pick(LAST)}${pick(LAST).toLowerCase()}`;
    records.push({
      clientId: `p${i}`,
      fields: {
        name: `${first} ${last}`,
        emails: [`${first}.${last}${i}@inst${i % 300}.example.org`.toLowerCase()],
        orcids: random() < 0.6 ? [orcidOf(i)] : [],
        affiliations: [`Institute ${i % 300}`],
      },
      provenance: { file: 'roster.csv', row: i + 2 },
    });
  }
  const planted: Array<[string, string]> = [];
  for (let d = 0; d < duplicates; d++) {
    const original = records[Math.floor(random() * (rows - duplicates))]!;
    const clientId = `d${d}`;
    const fields: Record['fields'] = { ...original.fields, emails: [`other${d}@elsewhere.example.org`], orcids: [] };
    if (d % 3 === 0 && (original.fields.orcids as string[]).length > 0) fields.orcids = original.fields.orcids as string[];
    else if (d % 3 === 1) fields.emails = original.fields.emails as string[];
    else {
      // One letter of the first name mistyped: the longest word (the family name) is untouched.
      const [first, last] = (original.fields.name as string).split(' ');
      fields.name = `${first!.slice(0, -1)}${first!.endsWith('x') ? 'y' : 'x'} ${last}`;
    }
    records.push({ clientId, fields, provenance: { file: 'roster.csv', row: rows - duplicates + d + 2 } });
    planted.push([original.clientId, clientId]);
  }
  return { records, planted };
}

export async function duplicatePeopleBenchmark(quick: boolean, log: (message: string) => void): Promise<DuplicatesResult> {
  const rows = 100_000;
  const runs = quick ? 3 : 7;
  const { records, planted } = duplicateRoster(rows);
  log(`duplicates: ${rows} rows, ${planted.length} planted, ${runs} runs`);
  const plan = (finder?: DuplicatePeopleFinder) => {
    const started = performance.now();
    let sink = 0;
    for (const record of records) {
      sink += hashJson(canonicalJson(record.fields)).length;
      finder?.add(record);
    }
    const pairs = finder?.inRoster() ?? [];
    if (sink === 0) throw new Error('unreachable: keeps the plan work from being optimised away');
    return { ms: performance.now() - started, pairs };
  };
  const without: number[] = [];
  const withCheck: number[] = [];
  let found = 0;
  let partialBlocks = 0;
  for (let run = 0; run < runs; run++) {
    const finder = new DuplicatePeopleFinder();
    const first = run % 2 === 0 ? plan() : plan(finder);
    const second = run % 2 === 0 ? plan(finder) : plan();
    const [base, checked] = run % 2 === 0 ? [first, second] : [second, first];
    const keys = new Set(checked!.pairs.map((pair) => `${pair.a.clientId} ${pair.b.clientId}`));
    found = planted.filter(([a, b]) => keys.has(`${a} ${b}`) || keys.has(`${b} ${a}`)).length;
    partialBlocks = finder.partialBlocks.length;
    without.push(base!.ms);
    withCheck.push(checked!.ms);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return {
    rows,
    planted: planted.length,
    found,
    recall: found / planted.length,
    withoutMs: spread(without),
    withMs: spread(withCheck),
    differenceMs: spread(withCheck.map((ms, i) => ms - without[i]!)),
    ratio: spread(withCheck.map((ms, i) => ms / without[i]!)),
    partialBlocks,
    loadAverage: Math.round(loadavg()[0]! * 10) / 10,
  };
}
