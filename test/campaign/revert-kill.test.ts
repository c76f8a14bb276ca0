/**
 * Revert kill campaign, on SQLite and on PostgreSQL: editors work in the service (the emulator's
 * UI routes), then a run of creates, updates and deletes is SIGKILLed at a seeded moment (or
 * finishes), then its revert is SIGKILLed at a seeded moment too, and the revert is run again, as
 * an operator would, until it finishes. Every trial must converge: the group equals what it held
 * before the reverted run, field for field (fields set in the UI included), and nothing outside
 * the run was touched (a record an editor added by hand stays as it is).
 *
 * Even seeds run with `policy.undo: exact` and edit any field, of any record; odd seeds run
 * with the default (undo from last-applied values) and edit only fields the mapping does not
 * manage, of records the run keeps: what that policy promises (docs/migrating.md, "Undo a run").
 * Rosters are small (6-12 people) so 40 trials per backend take about a minute each.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import type { RunReport } from '../../src/report/types.js';
import type { StateBackend } from '../../src/state/backend.js';
import { connectState } from '../../src/state/postgres/connect.js';
import { PostgresStateStore } from '../../src/state/postgres/postgres-store.js';
import { SqliteStateStore } from '../../src/state/sqlite/sqlite-store.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres-server.js';
import { withPassword } from '../support/state-backends.js';
import { ChildPool, type WarmChild } from './helpers/child.js';
import { campaignGroups, cli, makeProject, serviceEnv, type Project } from './helpers/project.js';
import { changePerson, FIELD, intBetween, randomPerson, rngFor, type Person, type Rng } from './helpers/roster.js';

const TRIALS = Number(process.env.REVERT_CAMPAIGN_TRIALS ?? 40);
const NOTES = '4f0b1e7c-5061-4293-8edf-4a5b6c7d8e95';
const COI = '7d1c6a52-6a3e-4c3b-9b8e-1f0e2d3c4b5a';
const COI_YES = '8d4b3c9f-0004-4d00-8000-000000000001';
const EXPERT = '5a1e0f6c-0001-4a00-8000-000000000003';

type Backend = 'sqlite' | 'postgres';
interface TrialLog {
  backend: Backend;
  seed: number;
  exact: boolean;
  runKill: string;
  revertKill: string;
  reruns: number;
  converged: boolean;
}
const logs: TrialLog[] = [];
const pool = new ChildPool();
let server: TestPostgres;

beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(async () => {
  await pool.close();
  await server?.stop();
  for (const backend of ['sqlite', 'postgres'] as const) {
    const mine = logs.filter((l) => l.backend === backend);
    console.info(
      `revert kill campaign (${backend}): ${mine.filter((l) => l.converged).length}/${mine.length} trials converged; ` +
        `reverted run killed mid-run in ${mine.filter((l) => l.runKill.startsWith('killed')).length}, revert killed in ${mine.filter((l) => l.revertKill.startsWith('killed')).length}; ` +
        `${mine.filter((l) => l.exact).length} with policy.undo: exact; ${mine.reduce((n, l) => n + l.reruns, 0)} reruns of the revert`,
    );
  }
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const writesSoFar = (emu: RunningEmulator) => emu.stats.snapshot().writes.total;
const groupOf = (emu: RunningEmulator) => campaignGroups(emu)[0]!;
const snapshot = (emu: RunningEmulator) => structuredClone(Object.fromEntries(groupOf(emu).records)) as Record<string, Record<string, unknown>>;

async function ui(emu: RunningEmulator, clientId: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${emu.url}/_emulator/ui/groups/${groupOf(emu).id}/records/${clientId}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status, await res.text()).toBe(200);
}

/** Starts `argv` in a warm child and SIGKILLs it after k more writes (+ a few ms), or lets it finish when k is past its writes. */
async function killedAt(emu: RunningEmulator, project: Project, env: Record<string, string>, argv: string[], rng: Rng, writes: number): Promise<string> {
  const child: WarmChild = pool.take();
  await child.ready;
  const base = writesSoFar(emu);
  const k = Math.floor(rng() * (writes + 2));
  const extraMs = Math.floor(rng() * 4);
  await child.run(argv, project.dir, env);
  let finished = false;
  void child.exited.then(() => (finished = true));
  if (k === 0) await Promise.race([sleep(extraMs * 30), child.exited]);
  else {
    while (!finished && writesSoFar(emu) - base < k) await sleep(1);
    await sleep(extraMs);
  }
  child.kill();
  const exit = await child.exited;
  return exit.signal === 'SIGKILL' ? `killed at write ${k}/${writes} + ${extraMs} ms` : `finished (exit ${exit.code})`;
}

function openStore(backend: Backend, project: Project, env: Record<string, string>): StateBackend {
  if (backend === 'sqlite') return SqliteStateStore.open(project.stateFile, 'pipeline');
  return withPassword(server, () => PostgresStateStore.open(connectState(env.ROSTERSYNC_STATE_URL!, { origin: 'test', fromEnvironment: true }), 'pipeline'));
}

/** The next roster: some people changed, a few added, a few gone (the deletes within --allow-deletes). */
function nextRoster(rng: Rng, roster: Person[], nextId: () => number): { roster: Person[]; gone: Set<string>; writes: number } {
  const gone = new Set(roster.filter(() => rng() < 0.2).map((p) => p.id));
  let changed = 0;
  const kept = roster.filter((p) => !gone.has(p.id)).map((p) => (rng() < 0.4 ? (changed++, changePerson(rng, p)) : p));
  const added = Array.from({ length: intBetween(rng, 0, 3) }, () => randomPerson(rng, nextId()));
  return { roster: [...kept, ...added], gone, writes: gone.size + changed + added.length };
}

describe.each(['sqlite', 'postgres'] as const)('revert kill campaign on %s', (backend) => {
  it.each(Array.from({ length: TRIALS }, (_, i) => ({ seed: i + 1 })))('seed $seed', { timeout: 60_000 }, async ({ seed }) => {
    const rng = rngFor(seed + (backend === 'postgres' ? 1000 : 0));
    const exact = seed % 2 === 0;
    let id = 0;
    const nextId = () => ++id;
    const initial = Array.from({ length: intBetween(rng, 6, 12) }, () => randomPerson(rng, nextId()));
    const emu = await startEmulator({ latencyMs: intBetween(rng, 1, 3), seed });
    const project = await makeProject(initial, { concurrency: intBetween(rng, 1, 3) });
    const log: TrialLog = { backend, seed, exact, runKill: '', revertKill: '', reruns: 0, converged: false };
    try {
      const text = await readFile(project.pipeline, 'utf8');
      await writeFile(project.pipeline, text.replace('policy:\n', `policy:\n${exact ? '  undo: exact\n' : ''}  drift_sample: 0\n`));
      let env = serviceEnv(emu);
      if (backend === 'postgres') {
        env = { ...env, ROSTERSYNC_STATE_URL: await server.createDatabase('revert'), PGPASSWORD: server.password };
        expect((await cli(emu, project.dir, ['state', 'migrate', project.pipeline], env)).code).toBe(0);
      }
      const first = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group', '--json'], env);
      expect(first.code, first.stderr).toBe(0);
      const firstRun = (JSON.parse(first.stdout) as RunReport).runId;

      const next = nextRoster(rng, initial, nextId);
      // Editors' work: on any field of any record (exact), or on unmanaged fields of records the run keeps.
      for (const person of initial.filter(() => rng() < 0.5)) {
        if (!exact && next.gone.has(person.id)) continue;
        const managed = exact && rng() < 0.5;
        await ui(emu, person.id, managed ? { [FIELD.level]: EXPERT } : rng() < 0.5 ? { [NOTES]: `note ${seed}` } : { [COI]: COI_YES });
      }
      // A record outside any run, added by hand.
      await ui(emu, 'HAND-1', { name: 'Added by hand', [NOTES]: 'not the pipeline\'s' });
      const before = snapshot(emu);

      await project.writeRoster(next.roster);
      const allow = ['--allow-deletes', '100'];
      log.runKill = await killedAt(emu, project, env, ['sync', project.pipeline, ...allow], rng, next.writes);

      const store = openStore(backend, project, env);
      const reverted = store.recentRuns(1)[0]!;
      const journaled = reverted.id === firstRun ? 0 : store.runJournal(reverted.id).length;
      store.close();
      if (reverted.id === firstRun || journaled === 0) {
        // Killed before it wrote anything: the group is untouched, and a revert refuses to guess.
        expect(snapshot(emu), 'no write before the kill').toEqual(before);
        log.converged = true;
        return;
      }
      const revert = ['revert', project.pipeline, reverted.id, '--yes', ...allow];
      log.revertKill = await killedAt(emu, project, env, revert, rng, next.writes);
      for (let attempt = 1; attempt <= 3; attempt++) {
        const again = await cli(emu, project.dir, revert, env);
        log.reruns++;
        expect(again.code, `rerun ${attempt}: ${again.stderr}`).toBe(0);
        break;
      }
      expect(snapshot(emu), `seed ${seed} (${log.runKill}; revert ${log.revertKill})`).toEqual(before);
      log.converged = true;
    } finally {
      logs.push(log);
      await emu.close();
      await rm(project.dir, { recursive: true, force: true });
    }
  });

  it('killed most reverted runs and many reverts mid-run (the campaign is not vacuous)', () => {
    const mine = logs.filter((l) => l.backend === backend);
    expect(mine.filter((l) => l.runKill.startsWith('killed')).length).toBeGreaterThanOrEqual(Math.ceil(mine.length * 0.5));
    expect(mine.filter((l) => l.revertKill.startsWith('killed')).length).toBeGreaterThanOrEqual(Math.ceil(mine.length * 0.25));
  });
});
