/**
 * The revert's promise, over random histories: seeded sequences of roster changes, editors' work in
 * the service (the emulator's UI routes: fields managed or not, records added by hand, records
 * deleted) and runs, then `revert last`. It either restores every record the last run that wrote
 * wrote exactly as it was before that run (touching no other record), or refuses, naming them, the
 * records it cannot restore (edited since), and writes nothing; told to leave those
 * (`--skip-record`), it restores every other record exactly and leaves the named ones as they are.
 * Never anything else.
 *
 * With `policy.undo: exact` (the policy for runs that must be undoable exactly). Replay one
 * sequence with REVERT_PROPERTY_SEED=<seed>.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { RunReport } from '../../src/report/types.js';
import { seededRandom } from '../../src/runtime/seeded-random.js';
import { cli, emulator, makeProject, person, type Project, type RosterRow } from '../support/project.js';

const SEQUENCES = Number(process.env.REVERT_PROPERTY_SEQUENCES ?? 30);
const ONLY = process.env.REVERT_PROPERTY_SEED;
const NOTES = '4f0b1e7c-5061-4293-8edf-4a5b6c7d8e95';
const COI = '7d1c6a52-6a3e-4c3b-9b8e-1f0e2d3c4b5a';
const COI_YES = '8d4b3c9f-0004-4d00-8000-000000000001';
const LEVEL = '0b6f7a3e-1c2d-4e5f-8a9b-0c1d2e3f4a51';
const EXPERT = '5a1e0f6c-0001-4a00-8000-000000000003';

const tally = { sequences: 0, exact: 0, refusals: 0, refusedRecords: 0 };
afterAll(() => {
  console.info(`revert property: ${tally.sequences} sequences, ${tally.exact} restored exactly, ${tally.refusals} refused naming ${tally.refusedRecords} records (then restored exactly but for those)`);
});

type Records = Record<string, Record<string, unknown>>;
type Rng = () => number;
const pick = <T>(rng: Rng, list: readonly T[]): T => list[Math.floor(rng() * list.length)]!;

function groupOf(emu: RunningEmulator) {
  return [...emu.world.orgs[0]!.groups.values()].find((g) => g.name === 'Sync test group')!;
}
const snapshot = (emu: RunningEmulator): Records => structuredClone(Object.fromEntries(groupOf(emu).records)) as Records;

/** One editor's action in the service's UI. */
async function uiAction(emu: RunningEmulator, rng: Rng, hand: () => string): Promise<void> {
  const group = groupOf(emu);
  const ids = [...group.records.keys()];
  const roll = rng();
  if (roll < 0.12) {
    await fetch(`${emu.url}/_emulator/ui/groups/${group.id}/records/${hand()}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Added by hand', [NOTES]: 'by hand' }) });
    return;
  }
  if (ids.length === 0) return;
  const id = pick(rng, ids);
  if (roll < 0.22) {
    await fetch(`${emu.url}/_emulator/ui/groups/${group.id}/records/${id}`, { method: 'DELETE' });
    return;
  }
  const body = pick(rng, [{ [NOTES]: `note ${Math.floor(rng() * 100)}` }, { [COI]: COI_YES }, { [NOTES]: null }, { [LEVEL]: EXPERT }, { name: `Edited ${id}` }, { emails: ['edited@example.org'] }]);
  const res = await fetch(`${emu.url}/_emulator/ui/groups/${group.id}/records/${id}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
}

function changeRoster(rng: Rng, roster: RosterRow[], nextN: () => number): RosterRow[] {
  const kept = roster.filter(() => rng() > 0.15);
  const changed = kept.map((row) => (rng() < 0.3 ? { ...row, ...pick(rng, [{ name: `${row.name} v${Math.floor(rng() * 9)}` }, { level: pick(rng, ['Junior', 'Senior', 'Expert']) }, { reviews: String(Math.floor(rng() * 20)) }, { email: `changed${Math.floor(rng() * 99)}@example.org` }]) } : row));
  const added = Array.from({ length: Math.floor(rng() * 3) }, () => person(nextN()));
  return [...changed, ...added];
}

/** Client_ids a refused revert names ("<id>: why"). */
function named(stderr: string): string[] {
  return [...stderr.matchAll(/(?:^|; |: )([pH][0-9-]+): (?:changed|deleted|exists|written|no longer|pipeline|the run did not)/g)].map((m) => m[1]!);
}

async function sequence(seed: number): Promise<void> {
  const rng = seededRandom(seed * 104729 + 7);
  let n = 0;
  const nextN = () => ++n;
  let handN = 0;
  const hand = () => `H-${++handN}`;
  let roster = Array.from({ length: 4 + Math.floor(rng() * 4) }, () => person(nextN()));
  const emu = await emulator({ seed });
  let project: Project | undefined;
  try {
    project = await makeProject(roster, { driftSample: 0, concurrency: 2, guards: { max_deletes: 1000, max_delete_percent: 100, max_source_drop_percent: 100 } });
    await writeFile(project.pipeline, (await readFile(project.pipeline, 'utf8')).replace('policy:\n', 'policy:\n  undo: exact\n'));
    const run = (argv: string[]) => cli(emu, project!.dir, argv);
    const first = await run(['sync', project.pipeline, '--create-group']);
    expect(first.code, first.stderr).toBe(0);

    // Before the last run that wrote, and the records it wrote: what `revert last` must restore.
    let beforeLastWrite: Records | undefined;
    let written = new Set<string>();
    const writtenBy = (report: RunReport) => new Set(report.records.filter((r) => r.action !== 'noop' && r.outcome === 'done').map((r) => r.clientId));
    const steps = 3 + Math.floor(rng() * 4);
    for (let step = 0; step < steps; step++) {
      const roll = rng();
      if (roll < 0.35) roster = changeRoster(rng, roster, nextN);
      else if (roll < 0.7) await uiAction(emu, rng, hand);
      else {
        await project.writeRoster(roster);
        const before = snapshot(emu);
        const synced = await run(['sync', project.pipeline, '--json', '--allow-deletes', '1000']);
        expect(synced.code, synced.stderr).toBe(0);
        const report = JSON.parse(synced.stdout) as RunReport;
        if (writtenBy(report).size > 0) {
          beforeLastWrite = before;
          written = writtenBy(report);
        }
      }
    }
    if (beforeLastWrite === undefined) {
      // Make sure there is a run to revert: one more change of the roster, synced.
      roster = changeRoster(rng, roster, nextN);
      roster.push(person(nextN()));
      await project.writeRoster(roster);
      beforeLastWrite = snapshot(emu);
      const synced = await run(['sync', project.pipeline, '--json', '--allow-deletes', '1000']);
      expect(synced.code, synced.stderr).toBe(0);
      written = writtenBy(JSON.parse(synced.stdout) as RunReport);
    }
    // Editors may keep working after the run too.
    if (rng() < 0.5) await uiAction(emu, rng, hand);

    const atRevert = snapshot(emu);
    // The run's records as they were before it; every other record as it is now (a revert touches nothing else).
    const restored = (keepAsNow: ReadonlySet<string>): Records => {
      const expected: Records = {};
      for (const id of new Set([...Object.keys(beforeLastWrite!), ...Object.keys(atRevert)])) {
        const value = written.has(id) && !keepAsNow.has(id) ? beforeLastWrite![id] : atRevert[id];
        if (value !== undefined) expected[id] = value;
      }
      return expected;
    };
    const reverted = await run(['revert', project.pipeline, 'last', '--yes', '--allow-deletes', '1000']);
    tally.sequences++;
    if (reverted.code === 0) {
      expect(snapshot(emu), `seed ${seed}: restored exactly`).toEqual(restored(new Set()));
      tally.exact++;
      return;
    }
    expect(reverted.code, `seed ${seed}: ${reverted.stderr}`).toBe(3);
    const refused = named(reverted.stderr);
    expect(refused.length, `seed ${seed}: the refusal names records: ${reverted.stderr}`).toBeGreaterThan(0);
    expect(snapshot(emu), `seed ${seed}: a refused revert writes nothing`).toEqual(atRevert);
    tally.refusals++;
    tally.refusedRecords += refused.length;

    const rest = await run(['revert', project.pipeline, 'last', '--yes', '--allow-deletes', '1000', ...refused.flatMap((id) => ['--skip-record', id])]);
    expect(rest.code, `seed ${seed}: ${rest.stderr}`).toBe(0);
    expect(snapshot(emu), `seed ${seed}: every record restored but the refused ones, left as they were`).toEqual(restored(new Set(refused)));
  } finally {
    await emu.close();
    if (project) await rm(project.dir, { recursive: true, force: true });
  }
}

describe('revert last over random histories (policy.undo: exact)', () => {
  const seeds = ONLY ? [Number(ONLY)] : Array.from({ length: SEQUENCES }, (_, i) => i + 1);
  it.each(seeds)('sequence %i', { timeout: 60_000 }, async (seed) => {
    await sequence(seed);
  });
});
