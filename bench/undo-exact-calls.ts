/**
 * `npx tsx bench/undo-exact-calls.ts [--records N] [--trials N]`: the calls `policy.undo: exact`
 * adds to a nightly run, against the emulator in-process over real HTTP on 127.0.0.1.
 *
 * A group of N records (10,000 by default) is synced once; then a nightly roster with 3 % of the
 * records changed (2 % updated, 0.5 % new, 0.5 % gone, in mirror mode) is synced, and the service
 * calls of that nightly run are counted at the emulator. The same twice per trial: with the
 * default policy (the baseline, measured in the same trial) and with `policy.undo: exact`. The
 * figure is the calls added and their ratio to the baseline, and the estimate's count beside the
 * calls made. Median of the trials (calls are deterministic; the trials show it). Writes
 * bench/undo-exact-calls.json; docs/migrating.md ("Undo a run") quotes it.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startEmulator } from '../src/emulator/server.js';
import type { RunReport } from '../src/report/types.js';
import { cli, makeProject, people, person, type RosterRow } from '../test/support/project.js';

const { values } = parseArgs({ options: { records: { type: 'string', default: '10000' }, trials: { type: 'string', default: '3' } } });
const RECORDS = Number(values.records);
const TRIALS = Number(values.trials);

/** The nightly roster: every 50th record updated, every 200th (offset) gone, 0.5 % new ones. */
function nightly(): RosterRow[] {
  const rows: RosterRow[] = [];
  for (let n = 1; n <= RECORDS; n++) {
    if (n % 200 === 7) continue;
    rows.push(n % 50 === 3 ? person(n, { name: `Person ${n} (renamed)` }) : person(n));
  }
  for (let n = 1; n <= RECORDS / 200; n++) rows.push(person(RECORDS + n));
  return rows;
}

async function nightlyCalls(policy: 'last_applied' | 'exact'): Promise<{ calls: number; estimated: number; counts: RunReport['counts'] }> {
  const emu = await startEmulator({ port: 0 });
  const project = await makeProject(people(RECORDS), { maxRps: 100_000, concurrency: 16, guards: { max_deletes: RECORDS, max_delete_percent: 100 } });
  try {
    if (policy === 'exact') await writeFile(project.pipeline, (await readFile(project.pipeline, 'utf8')).replace('policy:\n', 'policy:\n  undo: exact\n'));
    const first = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    if (first.code !== 0) throw new Error(`first sync: ${first.stderr}`);
    await project.writeRoster(nightly());
    const before = emu.stats.snapshot().calls;
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--json']);
    if (run.code !== 0) throw new Error(`nightly sync: ${run.stderr}`);
    const after = emu.stats.snapshot().calls;
    const total = (calls: Record<string, Record<string, number>>) => Object.values(calls).reduce((sum, byStatus) => sum + Object.values(byStatus).reduce((a, b) => a + b, 0), 0);
    const report = JSON.parse(run.stdout) as RunReport;
    return { calls: total(after) - total(before), estimated: report.estimate?.calls ?? 0, counts: report.counts };
  } finally {
    await emu.close();
    await rm(project.dir, { recursive: true, force: true });
  }
}

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
const trials: { baseline: number; exact: number; estimatedBaseline: number; estimatedExact: number }[] = [];
let counts: RunReport['counts'] | undefined;
for (let trial = 1; trial <= TRIALS; trial++) {
  const baseline = await nightlyCalls('last_applied');
  const exact = await nightlyCalls('exact');
  counts = exact.counts;
  trials.push({ baseline: baseline.calls, exact: exact.calls, estimatedBaseline: baseline.estimated, estimatedExact: exact.estimated });
  console.info(`trial ${trial}: nightly run ${baseline.calls} calls (estimate ${baseline.estimated}), with policy.undo: exact ${exact.calls} (estimate ${exact.estimated})`);
}
const baseline = median(trials.map((t) => t.baseline));
const exact = median(trials.map((t) => t.exact));
const result = { records: RECORDS, trials: TRIALS, counts, baselineCalls: baseline, exactCalls: exact, added: exact - baseline, ratio: Number((exact / baseline).toFixed(3)), perTrial: trials, command: `npx tsx bench/undo-exact-calls.ts --records ${RECORDS} --trials ${TRIALS}` };
console.info(`policy.undo: exact on a ${RECORDS}-record nightly run with 3 % changes: +${result.added} calls (${baseline} → ${exact}, ×${result.ratio}), median of ${TRIALS}`);
await writeFile(resolve(import.meta.dirname, 'undo-exact-calls.json'), `${JSON.stringify(result, null, 2)}\n`);
