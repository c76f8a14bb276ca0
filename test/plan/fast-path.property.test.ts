/**
 * Property test of the plan fast path: for random custom-fields listings, mapping files and
 * CSV rosters, and random edits of all three after a real sync, a plan made with the fast path
 * (rows whose key the inventory knows are not mapped) is the plan made without it
 * (`fastPath: false`, every row mapped): the same items (client_id, action, reason, body, changes,
 * provenance), counts, guards, orphans and rejected and filtered rows. And after a real sync with
 * the fast path, the next plan writes nothing and takes the fast path for every valid row.
 *
 * Each case is seeded; the seed is in the test name and in every failure message, and
 * FAST_PATH_SEED=<seed> FAST_PATH_CASES=1 replays one (FAST_PATH_KEEP=1 keeps its project directory,
 * FAST_PATH_DEBUG=1 prints each case's counts and edits). Runs go through runSync against the
 * emulator over real HTTP on 127.0.0.1:0. The emulator knows a universe of custom fields (it
 * validates writes by api_id); the listing it serves is a view of that universe which the
 * mutations relabel, extend and shrink, as an administrator editing the fields in the UI would.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadFixture } from '../../src/emulator/fixture.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { loadPipeline } from '../../src/config/load.js';
import { createClient } from '../../src/client/client.js';
import { openState } from '../../src/state/open.js';
import { gatherPlanInput } from '../../src/sync/gather.js';
import { runRequestOf } from '../../src/sync/run-request.js';
import { RowKeyRepairs } from '../../src/plan/row-key-repairs.js';
import type { RowKeyRepair } from '../../src/plan/types.js';
import type { RunReport } from '../../src/report/types.js';
import { seededRandom } from '../../src/runtime/seeded-random.js';
import { runSync, type RunOptions, type RunResult } from '../../src/sync/run-sync.js';
import type { PlanFile } from '../../src/sync/plan-file.js';
import { DEMO_API_KEY } from '../support/cli.js';
import {
  columnsOf,
  LISTING_MUTATIONS,
  listingOf,
  MAPPING_MUTATIONS,
  mappingYaml,
  mutate,
  newWorld,
  picker,
  ROSTER_MUTATIONS,
  rosterCsv,
  type Mutation,
  type World,
} from '../support/fast-path-fixtures.js';

const CASES = Number(process.env.FAST_PATH_CASES ?? 24);
const FIRST_SEED = Number(process.env.FAST_PATH_SEED ?? 1);

type Outcome = { result: RunResult; plan?: PlanFile; rowKeys: RowKeyRepair[]; hits: number } | { error: string };

/**
 * What a plan's gathering did that its plan file does not carry: the rows it took by their stored
 * key (the fast path) and the row keys it gathered for apply to store. A plan run writes nothing,
 * so gathering again with the same options and state finds exactly that.
 */
async function gatheredBy(c: Case, options: RunOptions): Promise<{ hits: number; rowKeys: RowKeyRepair[] }> {
  const pipeline = loadPipeline(join(c.dir, 'pipeline.yaml'));
  const store = openState(pipeline, { stateDir: join(c.dir, 'state') });
  const rowKeys = new RowKeyRepairs();
  try {
    const client = createClient({ baseUrl: c.emu.url, apiKey: DEMO_API_KEY, rateLimit: { rps: 1000 } });
    const gathered = await gatherPlanInput({ pipeline, store, client, request: runRequestOf(options).plan, rowKeys });
    return { hits: gathered.roster.knownRows, rowKeys: [...rowKeys.read()].flat() };
  } finally {
    rowKeys.dispose();
    store.close();
  }
}

/** What must not depend on the fast path: the saved plan without the row keys it carries. */
function planView(file: PlanFile) {
  const { items, stateRepairs, rowKeySalt: _rowKeySalt, ...plan } = file.plan;
  return {
    ...plan,
    stateRepairs: stateRepairs.map(({ rowKey: _rowKey, ...repair }) => repair),
    items: items.map(({ desired, ...item }) => ({ ...item, ...(desired ? { desired: { fieldsJson: desired.fieldsJson, hash: desired.hash } } : {}) })),
    input: file.input,
    optionLabels: file.optionLabels,
    source: file.source,
  };
}

/** The report without what differs between any two runs (ids, times, the limiter's counters). */
function reportView(report: RunReport) {
  const { runId: _runId, startedAt: _startedAt, finishedAt: _finishedAt, durationMs: _durationMs, limiter: _limiter, ...rest } = report;
  return rest;
}

function view(outcome: Outcome) {
  if ('error' in outcome) return { error: outcome.error };
  return { exitCode: outcome.result.exitCode, report: reportView(outcome.result.report), ...(outcome.plan ? { plan: planView(outcome.plan) } : {}) };
}

interface Case {
  seed: number;
  log: string[];
  emu: RunningEmulator;
  dir: string;
  world: World;
}

async function writeInputs(c: Case): Promise<void> {
  await writeFile(join(c.dir, 'roster.csv'), rosterCsv(columnsOf(c.world.universe), c.world.rows));
  await writeFile(join(c.dir, 'mapping.yaml'), mappingYaml(c.world.mapping, c.world.mappingComment));
  // The listing the service answers from now on (the emulator still accepts every universe api_id).
  c.emu.world.orgs[0]!.customFieldsListing = listingOf(c.world.listed);
}

async function run(c: Case, options: Partial<RunOptions> & { planFile?: string }): Promise<Outcome> {
  const { planFile, ...rest } = options;
  try {
    const runOptions: RunOptions = {
      pipelinePath: 'pipeline.yaml',
      cwd: c.dir,
      service: { baseUrl: c.emu.url, apiKey: DEMO_API_KEY },
      stateDir: join(c.dir, 'state'),
      reportDir: join(c.dir, 'reports'),
      createGroup: true,
      allowDeletes: 1_000_000,
      allowSourceDrop: true,
      allowEmptySource: true,
      allowIdentityChanges: 1_000_000,
      ...(planFile ? { savePlanTo: planFile, dryRun: true } : {}),
      ...rest,
    };
    const result = await runSync(runOptions);
    if (!planFile) return { result, rowKeys: [], hits: 0 };
    const { hits, rowKeys: gathered } = await gatheredBy(c, runOptions);
    const plan = JSON.parse(await readFile(join(c.dir, planFile), 'utf8')) as PlanFile;
    // The row keys apply would store: those gathered beside the plan, and those of state repairs.
    const repaired = plan.plan.stateRepairs.flatMap(({ clientId, rowKey, hash }) => (rowKey !== undefined ? [{ clientId, rowKey, hash }] : []));
    return { result, plan, rowKeys: [...gathered, ...repaired], hits };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** A real sync must get through (rejected rows exit 2); anything else is a broken scenario. */
async function realSync(c: Case, what: string): Promise<RunResult> {
  const outcome = await run(c, {});
  const where = `seed ${c.seed} (${c.log.join(' | ')}): ${what}`;
  if ('error' in outcome) expect.fail(`${where} threw: ${outcome.error}`);
  expect([0, 2], `${where}: ${outcome.result.report.message ?? ''}`).toContain(outcome.result.exitCode);
  return outcome.result;
}

function mutateSome(c: Case, kinds: readonly Mutation[], count: number): void {
  const rng = seededRandom(c.seed * 7919 + c.log.length);
  const { pick } = picker(rng);
  for (let n = 0; n < count; n++) c.log.push(mutate(rng, c.world, pick(kinds)));
}

/**
 * Mutations drawn more often: edits of cells the mapping reads, and listing edits that change
 * what a mapped option cell means. They are the ones a key missing a cell or the listing gets wrong.
 */
const ROSTER_DRAWS: readonly Mutation[] = [...ROSTER_MUTATIONS, 'edit-mapped', 'edit-mapped', 'edit-mapped', 'edit-cell'];
const LISTING_DRAWS: readonly Mutation[] = [...LISTING_MUTATIONS, 'relabel-option', 'relabel-option', 'toggle-option'];

/** One round of edits: the roster always, the listing often, the mapping sometimes. */
function editRound(c: Case, rng: () => number, label: string): void {
  const { chance, int } = picker(rng);
  c.log.push(`[${label}]`);
  mutateSome(c, ROSTER_DRAWS, 2 + int(5));
  if (chance(0.5)) mutateSome(c, LISTING_DRAWS, 1 + int(2));
  if (chance(0.3)) mutateSome(c, MAPPING_MUTATIONS, 1 + int(2));
}

async function plansAgree(c: Case, label: string): Promise<{ fast: Outcome; hits: number }> {
  // Odd seeds read the roster in a worker thread (as rosters of 8 MB or more are), even ones in process.
  const fast = await run(c, { planFile: `plan-fast-${label}.json`, ...(c.seed % 2 === 1 ? { workerReadMinBytes: 0 } : {}) });
  const hits = 'error' in fast ? 0 : fast.hits;
  const full = await run(c, { planFile: `plan-full-${label}.json`, fastPath: false });
  if (!('error' in full)) expect(full.hits, 'fastPath: false never takes a row by its key').toBe(0);
  const where = `seed ${c.seed} ${label} (${c.log.join(' | ')})`;
  expect(view(fast), `${where}: the fast path and the full path plan differently`).toEqual(view(full));
  if (!('error' in fast) && fast.plan) {
    // Row keys to store name only records the plan leaves unchanged.
    const written = new Set(fast.plan.plan.items.map((item) => item.clientId));
    for (const entry of fast.rowKeys) expect(written.has(entry.clientId), `${where}: row key stored for written ${entry.clientId}`).toBe(false);
  }
  return { fast, hits };
}

const stats = { cases: 0, compared: 0, hitRows: 0, casesWithHits: 0, finalHits: 0, finalValid: 0 };

describe('plan fast path property', () => {
  for (let seed = FIRST_SEED; seed < FIRST_SEED + CASES; seed++) {
    it(`seed ${seed}: the fast path plans exactly what the full path plans`, { timeout: 60_000 }, async () => {
      const rng = seededRandom(seed * 2_654_435_761);
      const world = newWorld(rng, seed);
      const { chance } = picker(rng);
      const fixture = loadFixture();
      const org = fixture.orgs[0]!;
      org.custom_fields.author_from_group = world.universe.map(({ column: _column, ...field }) => field);
      delete org.external_coi_field;
      org.groups = [];
      const emu = await startEmulator({ port: 0, fixture });
      const dir = await mkdtemp(join(tmpdir(), 'rostersync-fastpath-'));
      const c: Case = { seed, log: [], emu, dir, world };
      try {
        await writeFile(
          join(dir, 'pipeline.yaml'),
          [
            'source: { file: roster.csv }',
            'mapping: mapping.yaml',
            'target: { group: { name: Fast path group, owner_team: Editorial Office } }',
            `policy: { mode: ${chance(0.5) ? 'mirror' : 'upsert'}, update: ${chance(0.7) ? 'partial' : 'full'}, max_rps: 1000, concurrency: 4 }`,
            '',
          ].join('\n'),
        );
        await writeInputs(c);
        if (process.env.FAST_PATH_DEBUG) console.log(`seed ${seed}: duplicate_client_ids ${world.mapping.duplicate_client_ids}`);
        await realSync(c, 'first sync');
        // Half the cases sync once more after edits, so keys stored by updates and by the
        // unchanged rows' repairs are in the state as well as those of creates.
        if (chance(0.5)) {
          editRound(c, rng, 'round 1');
          await writeInputs(c);
          await realSync(c, 'second sync');
        }
        editRound(c, rng, 'round 2');
        await writeInputs(c);
        const { hits } = await plansAgree(c, 'edited');
        stats.compared++;
        stats.hitRows += hits;
        if (hits > 0) stats.casesWithHits++;

        // A real sync with the fast path, then nothing is left to write, and every valid row's
        // key is known.
        await realSync(c, 'sync after edits');
        const { fast, hits: finalHits } = await plansAgree(c, 'synced');
        const where = `seed ${seed} (${c.log.join(' | ')})`;
        if ('error' in fast) expect.fail(`${where}: plan after sync threw: ${fast.error}`);
        const { counts, input } = fast.result.report;
        const repaired = fast.rowKeys.length;
        const writes = (['create', 'update', 'delete'] as const).map((action) => Object.values(counts[action]).reduce((a, b) => a + (b ?? 0), 0));
        expect(writes, `${where}: create, update, delete planned right after a sync`).toEqual([0, 0, 0]);
        // Every valid row took the fast path, or was mapped and has its key stored by this plan. (A
        // record the last sync only repaired in the state, with no call, lost its key then.)
        expect(finalHits + repaired, `${where}: rows that took the fast path right after a sync (${finalHits}) and rows whose key this plan stores (${repaired}), against valid rows`).toBeGreaterThanOrEqual(input.valid);
        stats.finalHits += finalHits + repaired;
        stats.finalValid += input.valid;
        stats.cases++;
        if (process.env.FAST_PATH_DEBUG) {
          const codes: Record<string, number> = {};
          for (const row of fast.result.report.rejectedRows) for (const p of row.problems) codes[p.code] = (codes[p.code] ?? 0) + 1;
          console.log(seed, JSON.stringify(input), hits, finalHits, JSON.stringify(codes), c.log.join(' | '));
        }
      } finally {
        await emu.close();
        if (process.env.FAST_PATH_KEEP) console.log(`seed ${seed}: kept ${dir}`);
        else await rm(dir, { recursive: true, force: true });
      }
    });
  }

  // The bug seeds 10, 12, 13, 14 and 22 found, at its smallest: mapped records waited for their
  // batch while known rows were classified at once, so with `last` the earlier row won.
  it('duplicate_client_ids last: a known later row still wins over a mapped earlier row of the same client_id', async () => {
    const emu = await startEmulator({ port: 0 });
    const dir = await mkdtemp(join(tmpdir(), 'rostersync-fastpath-'));
    // No custom fields: the served listing is empty, which this mapping does not mind.
    const world: World = { universe: [], listed: [], mapping: { client_id: { column: 'ID' }, fields: { name: { column: 'Name' } }, custom_fields: {}, duplicate_client_ids: 'last' }, mappingComment: '', rows: [{ ID: 'p1', Name: 'Alice' }], people: 1 };
    const c: Case = { seed: 0, log: ['minimal'], emu, dir, world };
    try {
      await writeFile(join(dir, 'pipeline.yaml'), 'source: { file: roster.csv }\nmapping: mapping.yaml\ntarget: { group: { name: G, owner_team: Editorial Office } }\npolicy: { mode: mirror, max_rps: 1000 }\n');
      await writeInputs(c);
      await realSync(c, 'first sync');
      // p1's stored row is now the LAST of two rows with that id; the first is new.
      world.rows = [{ ID: 'p1', Name: 'Bob' }, { ID: 'p1', Name: 'Alice' }];
      await writeInputs(c);
      const { fast } = await plansAgree(c, 'minimal');
      if ('error' in fast) expect.fail(fast.error);
      expect(fast.result.report.records).toEqual([]);
    } finally {
      await emu.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('took the fast path in the cases (the property is not vacuous)', (ctx) => {
    const expected = CASES;
    // Run alone (-t), or after a case failed (its own failure says why), there is nothing to count.
    if (stats.cases < expected) ctx.skip(`only ${stats.cases} of ${expected} cases ran before this check`);
    expect(stats.finalValid, 'valid rows across cases').toBeGreaterThan(expected * 3);
    expect(stats.finalHits).toBeGreaterThanOrEqual(stats.finalValid);
    // Edited rosters without a new mapping or listing keep most rows' keys.
    expect(stats.casesWithHits, JSON.stringify(stats)).toBeGreaterThan(expected / 5);
  });
});
