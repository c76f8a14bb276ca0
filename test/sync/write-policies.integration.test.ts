/**
 * `write: always | on_create | if_empty` on a mapped field (docs/mapping.md, "Fields that are only
 * seeded"), against the emulator: for each policy, a create, an update (the roster changed; an
 * editor changed or cleared the value in the service), `--refresh=all` and an adoption, with the
 * exact calls each makes and the values left in the service.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { API_KEY, cli, emulator, FULL, groupRecords, makeProject, PARTIAL, people, type RosterRow } from '../support/project.js';

const REVIEWS = '2d8f9c5a-3e4f-4071-8cbd-2e3f4a5b6c73';
const GET = 'GET /api/external/author-from-group/:group_id/:client_id/';
type Policy = 'always' | 'on_create' | 'if_empty';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

/** The sync tests' mapping, with `write:` on "Reviews completed". */
async function writeMapping(dir: string, policy: Policy): Promise<void> {
  await writeFile(
    join(dir, 'mapping.yaml'),
    [
      'client_id: { column: ID }',
      'fields:',
      '  name: { column: Full name }',
      '  emails: { column: Email, split: ";", transforms: [trim, lower] }',
      'custom_fields:',
      '  Expertise level: { column: Level }',
      `  Reviews completed: { column: Reviews, write: ${policy} }`,
      '',
    ].join('\n'),
  );
}

/** Calls per route since `since` (a snapshot of the emulator's counters). */
function callsSince(since: Record<string, Record<string, number>>): Record<string, number> {
  const now = emu.stats.snapshot().calls;
  const out: Record<string, number> = {};
  for (const route of [GET, PARTIAL, FULL]) {
    const total = (counts: Record<string, number> | undefined) => Object.values(counts ?? {}).reduce((a, b) => a + b, 0);
    const n = total(now[route]) - total(since[route]);
    if (n > 0) out[route === GET ? 'get' : route === PARTIAL ? 'partial' : 'full'] = n;
  }
  return out;
}

function snapshot(): Record<string, Record<string, number>> {
  return structuredClone(emu.stats.snapshot().calls);
}

async function edit(groupId: number, clientId: string, value: number | null): Promise<void> {
  const res = await fetch(`${emu.url}/api/external/author-from-group/${groupId}/${clientId}/partial/`, {
    method: 'POST',
    headers: { 'X-ApiKey': API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify({ [REVIEWS]: value }),
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
}

const reviews = () => Object.fromEntries(Object.entries(groupRecords(emu)).map(([id, record]) => [id, record[REVIEWS] ?? null]));
const groupIdOf = () => [...emu.world.orgs[0]!.groups.values()].find((g) => g.name === 'Sync test group')!.id;

/** p1..p5 with 1..5 reviews. */
const roster = (): RosterRow[] => people(5).map((row, i) => ({ ...row, reviews: String(i + 1) }));

describe.each<{ policy: Policy; update: { calls: Record<string, number>; reviews: Record<string, number | null> }; refresh: { calls: Record<string, number>; reviews: Record<string, number | null> } }>([
  {
    policy: 'always',
    // The roster's values win everywhere.
    update: { calls: { partial: 3 }, reviews: { p1: 10, p2: 20, p3: 30, p4: 4, p5: 5 } },
    refresh: { calls: { get: 5, partial: 2 }, reviews: { p1: 10, p2: 20, p3: 30, p4: 4, p5: 5 } },
  },
  {
    policy: 'on_create',
    // Set once, at creation: the editor's 99 and the cleared cell stay, and so does p2's first value.
    update: { calls: { partial: 1 }, reviews: { p1: 99, p2: 2, p3: null, p4: 4, p5: 5 } },
    refresh: { calls: { get: 5 }, reviews: { p1: 99, p2: 2, p3: null, p4: 50, p5: null } },
  },
  {
    policy: 'if_empty',
    // Set where the service holds nothing: only p3, cleared by the editor, takes the roster's value.
    update: { calls: { get: 3, partial: 2 }, reviews: { p1: 99, p2: 2, p3: 30, p4: 4, p5: 5 } },
    refresh: { calls: { get: 5, partial: 1 }, reviews: { p1: 99, p2: 2, p3: 30, p4: 50, p5: 5 } },
  },
])('write: $policy', ({ policy, update, refresh }) => {
  it('create, update, --refresh=all: exact calls and the values that survive', async () => {
    // The drift check's sample reads are counted apart (test/sync/drift.integration.test.ts): off here, so the
    // calls below are the write policy's own.
    const project = await makeProject(roster(), { mode: 'upsert', driftSample: 0 });
    await writeMapping(project.dir, policy);

    // Create: every field, whatever the policy (the service holds nothing yet).
    let since = snapshot();
    const created = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(created.code, created.stderr).toBe(0);
    expect(callsSince(since)).toEqual({ full: 5 });
    expect(reviews()).toEqual({ p1: 1, p2: 2, p3: 3, p4: 4, p5: 5 });

    // An editor changes p1 and clears p3 in the service; the roster changes p1, p2 and p3 (and
    // p1's level, always written: p1 is updated whatever the policy).
    const groupId = groupIdOf();
    await edit(groupId, 'p1', 99);
    await edit(groupId, 'p3', null);
    await project.writeRoster(roster().map((row, i) => (i < 3 ? { ...row, reviews: String((i + 1) * 10), ...(i === 0 ? { level: 'Expert' } : {}) } : row)));
    const plan = await cli(emu, project.dir, ['plan', project.pipeline]);
    expect(plan.code, plan.stderr).toBe(0);
    if (policy === 'on_create') {
      expect(plan.stdout).toMatch(/= Reviews completed \(kept, write: on_create; the roster has 10\)/);
      expect(plan.stdout).toContain('Plan: 0 to create, 1 to update');
    }
    // The service held a value at the last sync: kept (unless an editor cleared it), not shown as a change.
    if (policy === 'if_empty') {
      expect(plan.stdout).toMatch(/= Reviews completed = 1 \(kept where the service still holds a value, write: if_empty; the roster has 10\)/);
      expect(plan.stdout).not.toMatch(/~ Reviews completed = 1 -> 10/);
    }
    since = snapshot();
    const updated = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(callsSince(since)).toEqual(update.calls);
    expect(reviews()).toEqual(update.reviews);

    // Nothing changed since: no call at all, whatever was kept.
    since = snapshot();
    expect((await cli(emu, project.dir, ['sync', project.pipeline])).code).toBe(0);
    expect(callsSince(since)).toEqual({});

    // --refresh=all reads every record: the editor's 50 on p4 and the cleared p5.
    await edit(groupId, 'p4', 50);
    await edit(groupId, 'p5', null);
    since = snapshot();
    const refreshed = await cli(emu, project.dir, ['sync', project.pipeline, '--refresh=all']);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(callsSince(since)).toEqual(refresh.calls);
    expect(reviews()).toEqual(refresh.reviews);
  });

  it('adoption of records already in the group', async () => {
    // A group the pipeline did not create, holding p1 (42 reviews, set by an editor) and p2 (none).
    const res = await fetch(`${emu.url}/api/external/authors-group/create/`, {
      method: 'POST',
      headers: { 'X-ApiKey': API_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ group_name: 'Sync test group', owner_team: 'Editorial Office', editor_teams: [], viewer_teams: [] }),
    });
    expect(res.status, await res.text()).toBeLessThan(300);
    const groupId = groupIdOf();
    for (const [clientId, value] of [['p1', 42], ['p2', null]] as const) {
      const put = await fetch(`${emu.url}/api/external/author-from-group/${groupId}/${clientId}/`, {
        method: 'POST',
        headers: { 'X-ApiKey': API_KEY, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: `Typed by hand ${clientId}`, ...(value === null ? {} : { [REVIEWS]: value }) }),
      });
      expect(put.status).toBe(200);
      await put.arrayBuffer();
    }
    const project = await makeProject(roster().slice(0, 3), { mode: 'upsert' });
    await writeMapping(project.dir, policy);
    const pipeline = (await import('node:fs/promises')).readFile(project.pipeline, 'utf8');
    await writeFile(project.pipeline, (await pipeline).replace(/ {2}group: \{[^}]*\}/, `  group_id: ${groupId}`));

    const since = snapshot();
    const synced = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(synced.code, synced.stdout + synced.stderr).toBe(0);
    const records = groupRecords(emu);
    // Managed fields are written either way; the name shows the adoption happened.
    expect(records.p1?.name).toBe('Person 1');
    // Create-if-absent reads first, and the seeded fields use that same read (one GET per record,
    // whatever the policy): p1 and p2 are adopted with a partial POST, p3's GET answers 404 and
    // it is created with a full POST.
    expect(callsSince(since)).toEqual({ get: 3, partial: 2, full: 1 });
    if (policy === 'always') {
      expect(reviews()).toEqual({ p1: 1, p2: 2, p3: 3 });
    } else {
      // p1 keeps the editor's 42, p2 (empty) takes the roster's value, p3 is created.
      expect(reviews()).toEqual({ p1: 42, p2: 2, p3: 3 });
    }
  });
});

describe('write policies and full updates', () => {
  it('refuses policy.update: full with a seeded field, naming it', async () => {
    const project = await makeProject(roster(), { mode: 'upsert', update: 'full' });
    await writeMapping(project.dir, 'on_create');
    const result = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Reviews completed');
    expect(result.stderr).toContain('policy.update: partial');
    expect(emu.stats.snapshot().writes.total).toBe(0);
  });
});
