/**
 * end to end: the CLI in-process against the emulator over real
 * HTTP. One test per case of the issue, each with exact write counts, the values set "in the UI"
 * that must survive, and exit codes.
 */
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { RunReport } from '../../src/report/types.js';
import { SqliteStateStore } from '../../src/state/sqlite/sqlite-store.js';
import { planDigest, type PlanFile } from '../../src/sync/plan-file.js';
import { cli, DELETE, emulator, FULL, makeProject, PARTIAL, people, type Project, type RosterRow } from '../support/project.js';
import { existingGroupFixture, EXISTING_GROUP_ID, NOTES, COI, COI_YES, uiSet, uiGroup, writeCalls, recordsOf } from './helpers.js';
import { unmarked } from '../../src/personal-data/personal-text.js';

const GROUP_CREATE = 'POST /api/external/authors-group/create/';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator({ fixture: existingGroupFixture() });
});
afterEach(async () => {
  await emu.close();
});

async function reportOf(stdout: string): Promise<RunReport> {
  const path = /json\s+(\S+report\.json)/.exec(stdout)?.[1];
  expect(path, stdout).toBeDefined();
  return JSON.parse(await readFile(path!, 'utf8')) as RunReport;
}

/** Rewrites the `target:` of a test project's pipeline file. */
async function setTarget(project: Project, target: string): Promise<void> {
  const text = await readFile(project.pipeline, 'utf8');
  await writeFile(project.pipeline, text.replace(/target:\n {2}group: \{[^\n]*\}\n/, `target: ${target}\n`));
}

function groupNamed(name: string): number[] {
  return [...emu.world.orgs[0]!.groups.values()].filter((g) => g.name === name).map((g) => g.id);
}

describe('state you can trust', () => {
  it('a lost state creates no second group and wipes no UI field: the run refuses until the group is pinned, then adopts every record', async () => {
    const project = await makeProject(people(25));
    const first = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(first.code, first.stderr).toBe(0);
    const [groupId] = groupNamed('Sync test group');
    const created = await reportOf(first.stdout);
    expect(created.notes.join('\n')).toContain(`created authors group "Sync test group" with id ${groupId}. Pin it in ${project.pipeline} (target: { group_id: ${groupId} })`);
    for (const id of ['p1', 'p2', 'p3']) await uiSet(emu, groupId!, id, { [NOTES]: `note on ${id}` });

    await rm(join(project.dir, '.rostersync'), { recursive: true });
    const before = writeCalls(emu);
    const refused = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('knows no group id: either this is the first run, or the state was lost');
    expect(refused.stderr).toContain(`rostersync state set-group ${project.pipeline} <id>`);
    expect(writeCalls(emu).total - before.total).toBe(0);
    expect(groupNamed('Sync test group')).toHaveLength(1);

    expect((await cli(emu, project.dir, ['state', 'set-group', project.pipeline, String(groupId)])).code).toBe(0);
    const recovered = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(recovered.code, recovered.stderr).toBe(0);
    const after = writeCalls(emu);
    expect(after.by(PARTIAL) - before.by(PARTIAL)).toBe(25);
    expect(after.by(FULL) - before.by(FULL)).toBe(0);
    expect(after.by(GROUP_CREATE)).toBe(1);
    const report = await reportOf(recovered.stdout);
    expect(report.records.filter((r) => r.adopted)).toHaveLength(25);
    expect(report.notes.join('\n')).toMatch(/adopted 25 records that already existed in the group/);
    const records = recordsOf(emu, groupId!);
    for (const id of ['p1', 'p2', 'p3']) expect(records[id]![NOTES]).toBe(`note on ${id}`);

    const again = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(again.code).toBe(0);
    expect(writeCalls(emu).total - after.total).toBe(0);
  });

  it('a first sync into an existing group adopts its records (managed fields only) and lists them; new ones cost one GET 404', async () => {
    // The fixture's group holds p1..p8 with a note and a conflict of interest set in the UI.
    const project = await makeProject(people(10));
    await setTarget(project, `{ group_id: ${EXISTING_GROUP_ID} }`);
    const dry = await cli(emu, project.dir, ['sync', project.pipeline, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(writeCalls(emu).total).toBe(0);

    const run = await cli(emu, project.dir, ['sync', project.pipeline]);
    expect(run.code, run.stderr).toBe(0);
    const calls = writeCalls(emu);
    expect(calls.by(PARTIAL, 200)).toBe(8);
    expect(calls.by(PARTIAL, 404)).toBe(0);
    expect(calls.by(FULL)).toBe(2);
    expect(calls.total).toBe(10);
    const report = await reportOf(run.stdout);
    expect(report.records.filter((r) => r.adopted).map((r) => r.clientId).sort()).toEqual(['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8']);
    const records = recordsOf(emu, EXISTING_GROUP_ID);
    for (let n = 1; n <= 8; n++) {
      expect(records[`p${n}`]).toMatchObject({ name: `Person ${n}`, [NOTES]: `set in the UI for p${n}`, [COI]: COI_YES });
    }
    expect(records.p9).toMatchObject({ name: 'Person 9' });
    expect(records.p9![NOTES]).toBeUndefined();
  });

  it('refuses a state bound to another service, names the rebind command, and rebinds only with --release-owned', async () => {
    const project = await makeProject(people(6));
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    const production = await emulator({ fixture: existingGroupFixture() });
    try {
      const refused = await cli(production, project.dir, ['sync', project.pipeline]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`is bound to service ${emu.url}`);
      expect(refused.stderr).toContain(`but this run targets service ${production.url}`);
      expect(refused.stderr).toContain(`rostersync state rebind ${project.pipeline} --base-url ${production.url} --release-owned`);
      expect(writeCalls(production).total).toBe(0);

      const prodGroup = await uiGroup(production, 'Production reviewers');
      const noFlag = await cli(emu, project.dir, ['state', 'rebind', project.pipeline, '--base-url', production.url, '--group-id', String(prodGroup)]);
      expect(noFlag.code).toBe(1);
      expect(noFlag.stderr).toContain('owns 6 records');
      expect(noFlag.stderr).toContain('--release-owned');
      const rebound = await cli(emu, project.dir, ['state', 'rebind', project.pipeline, '--base-url', production.url, '--group-id', String(prodGroup), '--release-owned']);
      expect(rebound.code, rebound.stderr).toBe(0);
      expect(rebound.stdout).toContain('6 owned records released');

      await uiSet(production, prodGroup, 'p2', { name: 'Person 2', [NOTES]: 'kept' });
      const run = await cli(production, project.dir, ['sync', project.pipeline]);
      expect(run.code, run.stderr).toBe(0);
      expect(writeCalls(production).by(FULL)).toBe(5);
      // p2 is adopted with one partial POST (its e-mail differs); the 5 new records are read first (404), then written whole.
      expect(writeCalls(production).by(PARTIAL)).toBe(1);
      expect(recordsOf(production, prodGroup).p2![NOTES]).toBe('kept');
      // The staging group was left alone: its 6 records are still there, untouched.
      expect(Object.keys(recordsOf(emu, groupNamed('Sync test group')[0]!))).toHaveLength(6);
    } finally {
      await production.close();
    }
  });

  it('state set-group with a typo does not move an inventory that owns records into another team\'s group', async () => {
    const project = await makeProject(people(10), { mode: 'mirror' });
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    const otherTeam = recordsOf(emu, EXISTING_GROUP_ID);
    const typo = await cli(emu, project.dir, ['state', 'set-group', project.pipeline, String(EXISTING_GROUP_ID)]);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('owns 10 records');
    expect(typo.stderr).toContain('Nothing was changed');
    const shown = JSON.parse((await cli(emu, project.dir, ['state', 'show', project.pipeline, '--json'])).stdout) as { groupId: number; owned: number };
    expect(shown).toMatchObject({ groupId: groupNamed('Sync test group')[0], owned: 10 });

    // Nor can the pipeline file point the state at that group.
    await setTarget(project, `{ group_id: ${EXISTING_GROUP_ID} }`);
    await project.writeRoster(people(3));
    const before = writeCalls(emu).total;
    const wrong = await cli(emu, project.dir, ['sync', project.pipeline, '--allow-deletes', '10']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/bound to service .*, group \d+, but this run targets service .*, group 601/);
    expect(writeCalls(emu).total).toBe(before);
    expect(recordsOf(emu, EXISTING_GROUP_ID)).toEqual(otherTeam);
  });

  it('two pipelines on one group: refused unless both declare disjoint prefixes; then neither writes nor deletes the other\'s records', async () => {
    const a = await makeProject([person('a-', 1), person('a-', 2), person('a-', 3)], { mode: 'mirror' });
    expect((await cli(emu, a.dir, ['sync', a.pipeline, '--create-group'])).code).toBe(0);
    const [groupId] = groupNamed('Sync test group');
    // Pipeline b lives beside a (same state directory) and targets a's group.
    const b = join(a.dir, 'b.yaml');
    const bRoster = (rows: RosterRow[]) => writeFile(join(a.dir, 'b.csv'), ['ID,Full name,Email,ORCID,Level,Areas,Reviews', ...rows.map((r) => `${r.id},${r.name},${r.email},,Junior,Statistics,1`)].join('\n') + '\n');
    const bPipeline = (share: string) =>
      writeFile(b, `source: { file: b.csv }\nmapping: mapping.yaml\ntarget: { group_id: ${groupId}${share} }\npolicy: { mode: mirror, max_rps: 500, guards: { max_deletes: 50, max_delete_percent: 100 } }\n`);
    await bRoster([person('b-', 1), person('b-', 2), person('a-', 1, 'Someone Else')]);
    await bPipeline('');
    const refused = await cli(emu, a.dir, ['sync', b]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('two pipelines on group');
    expect(refused.stderr).toContain('client_id_prefixes');
    expect(Object.keys(recordsOf(emu, groupId!)).sort()).toEqual(['a-1', 'a-2', 'a-3']);

    await bPipeline(', share: { client_id_prefixes: ["b-"] }');
    expect((await cli(emu, a.dir, ['sync', b])).code).toBe(1); // a declares nothing yet
    await setTarget(a, `{ group: { name: Sync test group, owner_team: Editorial Office }, share: { client_id_prefixes: ["a-"] } }`);
    // The registration of a pipeline's prefixes is made by its own next run.
    expect((await cli(emu, a.dir, ['sync', a.pipeline])).code).toBe(0);
    const shared = await cli(emu, a.dir, ['sync', b]);
    expect(shared.code, shared.stderr).toBe(0);
    expect((await reportOf(shared.stdout)).notes.join('\n')).toContain('a-1 (claimed by pipeline "pipeline")');
    let records = recordsOf(emu, groupId!);
    expect(Object.keys(records).sort()).toEqual(['a-1', 'a-2', 'a-3', 'b-1', 'b-2']);
    expect(records['a-1']!.name).toBe('Person a-1');

    // Mirror runs of each delete only their own gone records.
    await a.writeRoster([person('a-', 1)]);
    const aRun = await cli(emu, a.dir, ['sync', a.pipeline, '--allow-deletes', '2', '--allow-source-drop']);
    expect(aRun.code, aRun.stderr).toBe(0);
    await bRoster([person('b-', 1)]);
    const before = writeCalls(emu).by(DELETE);
    const bRun = await cli(emu, a.dir, ['sync', b, '--allow-source-drop']);
    expect(bRun.code, bRun.stderr).toBe(0);
    expect(writeCalls(emu).by(DELETE) - before).toBe(1);
    records = recordsOf(emu, groupId!);
    expect(Object.keys(records).sort()).toEqual(['a-1', 'b-1']);
  });

  it('a roster that turns owned records into other people trips the identity-change guard (exit 3, dry runs too) and names the flag', async () => {
    const project = await makeProject(people(40));
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    const [groupId] = groupNamed('Sync test group');
    await uiSet(emu, groupId!, 'p7', { [COI]: COI_YES });
    // Two corrections of a name with the same email are ordinary updates.
    const fixed = people(40).map((row, i) => (i < 2 ? { ...row, name: `${row.name} Jr` } : row));
    await project.writeRoster(fixed);
    expect((await cli(emu, project.dir, ['sync', project.pipeline])).code).toBe(0);

    const swapped = people(40).map((row, i) => ({ ...row, name: `Other Person ${i}`, email: `other${i}@elsewhere.org` }));
    await project.writeRoster(swapped);
    const before = writeCalls(emu).total;
    for (const flags of [['--dry-run'], []]) {
      const run = await cli(emu, project.dir, ['sync', project.pipeline, ...flags]);
      expect(run.code).toBe(3);
      expect(run.stdout + run.stderr).toContain('--allow-identity-changes 40');
      const report = await reportOf(run.stdout);
      const guard = report.guards.find((g) => g.guard === 'identity_changes');
      expect(guard).toMatchObject({ tripped: true, allowWith: '--allow-identity-changes 40' });
      expect(guard!.message).toContain('40 owned records would become other people');
      expect(unmarked(guard!.message)).toContain('p1: "Person 1 Jr" → "Other Person 0"');
    }
    expect(writeCalls(emu).total).toBe(before);
    expect(recordsOf(emu, groupId!).p7).toMatchObject({ name: 'Person 7', [COI]: COI_YES });
    const allowed = await cli(emu, project.dir, ['sync', project.pipeline, '--allow-identity-changes', '40']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(writeCalls(emu).by(PARTIAL)).toBe(2 + 40);
  });

  it('a saved plan edited outside rostersync is refused, and apply re-checks every action against the inventory', async () => {
    const project = await makeProject(people(8), { mode: 'mirror', guards: { max_delete_percent: 100 } });
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    await project.writeRoster(people(7));
    const planFile = join(project.dir, 'plan.json');
    expect((await cli(emu, project.dir, ['plan', project.pipeline, '--out', planFile])).code).toBe(0);
    const saved = JSON.parse(await readFile(planFile, 'utf8')) as PlanFile;
    expect(saved.plan.items.map((i) => `${i.action} ${i.clientId}`)).toEqual(['delete p8']);

    // An edit with a plain recomputed sha256, as anyone could: refused by the keyed digest.
    const evil = { ...saved, plan: { ...saved.plan, items: [...saved.plan.items, { clientId: 'p1', action: 'delete' as const, reason: 'gone_from_roster' as const, changes: [] }] } };
    const { createHash } = await import('node:crypto');
    const { digest: _d, ...body } = evil;
    await writeFile(planFile, JSON.stringify({ ...evil, digest: createHash('sha256').update(JSON.stringify(body)).digest('hex') }));
    const before = writeCalls(emu).total;
    const tampered = await cli(emu, project.dir, ['apply', planFile]);
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain('its signature does not match');

    // Even signed with the state's own secret, an action the inventory does not back is refused.
    const store = SqliteStateStore.open(join(project.dir, '.rostersync', 'pipeline.sqlite'), 'pipeline');
    const secret = store.planSecret();
    store.close();
    await writeFile(planFile, JSON.stringify({ ...evil, digest: planDigest(evil, secret) }));
    const signed = await cli(emu, project.dir, ['apply', planFile]);
    expect(signed.code).toBe(1);
    expect(signed.stderr).toContain('delete p1 is no longer planned');
    expect(writeCalls(emu).total).toBe(before);

    await writeFile(planFile, JSON.stringify(saved));
    const applied = await cli(emu, project.dir, ['apply', planFile]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(writeCalls(emu).by(DELETE)).toBe(1);
    expect(Object.keys(recordsOf(emu, groupNamed('Sync test group')[0]!))).toHaveLength(7);
  });

  it('keeps the state directory 0700 and its files 0600', async () => {
    const project = await makeProject(people(3));
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    const dir = join(project.dir, '.rostersync');
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    for (const file of ['pipeline.sqlite', '_shared.sqlite']) expect((await stat(join(dir, file))).mode & 0o777, file).toBe(0o600);
  });
});

function person(prefix: string, n: number, name = `Person ${prefix}${n}`): RosterRow {
  return { id: `${prefix}${n}`, name, email: `${prefix}${n}@example.org`, level: 'Junior', areas: 'Statistics', reviews: '1' };
}
