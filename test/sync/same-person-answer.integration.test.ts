/**
 * One answer about the same person under two client_ids: `validate`, `plan`, `sync --dry-run` and
 * `sync` report the same pairs and hold back the same rows for the same roster, state and policy
 * (src/plan/duplicate-people.ts). Run over the labelled corpus (a first run, then a second run over the
 * inventory with rows re-keyed and duplicates of owned people added), and over an overlay after a
 * migration's `state import` (the inventory then holds the service's values, without the ORCID iD
 * the roster gives).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { generateCorpus, type CorpusRow } from '../fixtures/duplicate-people/corpus.js';
import { cli, emulator, groupRecords } from '../support/project.js';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

const MAPPING = `client_id: { column: ID }
fields:
  name: { column: Full name }
  emails: { column: Email, split: ";", transforms: [trim, lower] }
  orcids: { column: ORCID, transforms: [orcid] }
  affiliations: { column: Affiliation }
`;

const csv = (rows: readonly CorpusRow[]) =>
  ['ID,Full name,Email,ORCID,Affiliation', ...rows.map((row) => [row.clientId, row.name, row.email, row.orcid, row.affiliation].map((cell) => (/[",\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell)).join(','))].join('\n') + '\n';

async function project(rows: readonly CorpusRow[], overlays: string[] = []): Promise<{ dir: string; pipeline: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'rostersync-same-person-'));
  await writeFile(join(dir, 'roster.csv'), csv(rows));
  await writeFile(join(dir, 'mapping.yaml'), MAPPING);
  const pipeline = join(dir, 'pipeline.yaml');
  const source = overlays.length > 0 ? `source: { file: roster.csv, overlays: [${overlays.join(', ')}] }` : 'source: { file: roster.csv }';
  await writeFile(
    pipeline,
    [source, 'mapping: mapping.yaml', 'target:', '  group: { name: Sync test group, owner_team: Editorial Office }', 'policy:', '  mode: mirror', '  duplicate_people: reject', '  max_rps: 500', '  rejects: { max_percent: 100 }', '  guards: { max_deletes: 1000, max_delete_percent: 100, max_source_drop_percent: 100 }', ''].join('\n'),
  );
  return { dir, pipeline };
}

interface Answer {
  code: number;
  pairs: string[];
  found: unknown;
  rejected: string[];
}

type Report = { duplicatePeople?: Array<{ tier: string; a: { clientId: string }; b: { clientId: string }; pendingRename?: boolean }>; duplicatePeopleFound?: unknown };
const pairsOf = (report: Report) => (report.duplicatePeople ?? []).map((pair) => `${pair.tier} ${pair.a.clientId} ${pair.b.clientId}${pair.pendingRename ? ' pending' : ''}`);

/** The four commands, in an order where none changes what the next one sees but the last. */
async function fourAnswers(dir: string, pipeline: string, first: boolean): Promise<Record<'validate' | 'plan' | 'dry-run' | 'sync', Answer>> {
  const create = first ? ['--create-group'] : [];
  const validate = await cli(emu, dir, ['validate', pipeline, '--json']);
  const v = JSON.parse(validate.stdout) as Report & { rejected: Array<{ problems: Array<{ code: string; value?: unknown }> }> };
  const answers: Partial<Record<'validate' | 'plan' | 'dry-run' | 'sync', Answer>> = {
    validate: {
      code: validate.code,
      pairs: pairsOf(v),
      found: v.duplicatePeopleFound,
      rejected: v.rejected.flatMap((row) => row.problems.filter((problem) => problem.code === 'duplicate_person').map((problem) => String(problem.value))).sort(),
    },
  };
  for (const [name, argv] of [
    ['plan', ['plan', pipeline, '--json', ...create]],
    ['dry-run', ['sync', pipeline, '--dry-run', '--json', ...create]],
    ['sync', ['sync', pipeline, '--json', ...create]],
  ] as const) {
    const run = await cli(emu, dir, [...argv]);
    const report = JSON.parse(run.stdout) as Report & { rejectedRows: Array<{ clientId?: string; problems: Array<{ code: string }> }> };
    answers[name] = {
      code: run.code,
      pairs: pairsOf(report),
      found: report.duplicatePeopleFound,
      rejected: report.rejectedRows.filter((row) => row.problems.some((problem) => problem.code === 'duplicate_person')).map((row) => row.clientId!).sort(),
    };
  }
  return answers as Record<'validate' | 'plan' | 'dry-run' | 'sync', Answer>;
}

function expectOneAnswer(answers: Record<string, Answer>): Answer {
  const { validate } = answers;
  for (const [name, answer] of Object.entries(answers)) expect({ name, ...answer }).toEqual({ name, ...validate! });
  return validate!;
}

describe('validate, plan, sync --dry-run and sync give one answer', () => {
  it('over the labelled corpus: a first run, then a second over the inventory with re-keyed rows and new duplicates of owned people', async () => {
    const corpus = generateCorpus(1500, 3);
    const { dir, pipeline } = await project(corpus.rows);
    const first = expectOneAnswer(await fourAnswers(dir, pipeline, true));
    expect(first.pairs.length).toBeGreaterThan(20);
    expect(first.rejected.length).toBeGreaterThan(20);
    expect(first.code).toBe(0);

    // The second run: 20 people re-keyed (a new id, the same row), 20 new rows repeating an owned
    // person's email or ORCID iD under a new id (the first ten of a person whose row is gone), 10
    // rows gone.
    const owned = corpus.rows.filter((row) => !first.rejected.includes(row.clientId));
    const rekeyed = owned.slice(0, 20).map((row) => ({ ...row, clientId: `RK-${row.clientId}` }));
    const repeats = owned.slice(20, 40).map((row, i) => ({ ...row, clientId: `NEW-${i}`, name: `Someone ${i}`, ...(i % 2 === 0 || row.orcid === '' ? { orcid: '' } : { email: `someone${i}@elsewhere.example.org` }) }));
    const next = [...rekeyed, ...owned.slice(30, owned.length - 10), ...repeats];
    await writeFile(join(dir, 'roster.csv'), csv(next));
    const second = expectOneAnswer(await fourAnswers(dir, pipeline, false));
    for (const row of rekeyed) expect(second.pairs, row.clientId).toContainEqual(expect.stringMatching(new RegExp(`^\\w+ ${row.clientId} ${row.clientId.slice(3)} pending$`)));
    expect(second.rejected).toEqual(expect.arrayContaining([...rekeyed.map((row) => row.clientId), ...repeats.filter((_, i) => i >= 10).map((row) => row.clientId)]));
    // Never a deletion from a suspicion: every re-keyed person is still in the group.
    const group = groupRecords(emu);
    for (const row of rekeyed) expect(group[row.clientId.slice(3)], row.clientId).toBeDefined();
  });

  it('over an overlay after state import: a new overlay row carrying an owned person’s ORCID iD is held back by every command', async () => {
    const rows: CorpusRow[] = [1, 2, 3].map((n) => ({ clientId: `EM-000${n}`, person: n, name: `Person ${n}`, email: `person${n}@u${n}.example.org`, orcid: '', affiliation: `Institute ${n}` }));
    // The group as it was before rostersync: the records without an ORCID iD.
    const before = await project(rows);
    expect((await cli(emu, before.dir, ['sync', before.pipeline, '--create-group'])).code).toBe(0);
    // The migration (docs/migrating.md): a new pipeline adopts the records with state import.
    const orcid = '0000-0002-1825-0097';
    const { dir, pipeline } = await project(
      rows.map((row, i) => (i === 0 ? { ...row, orcid } : row)),
      ['overlay.csv'],
    );
    await writeFile(join(dir, 'overlay.csv'), csv([{ clientId: 'EM-0100', person: 100, name: 'Someone Else', email: 'else@elsewhere.example.org', orcid, affiliation: 'Elsewhere' }]));
    await writeFile(join(dir, 'ids.txt'), rows.map((row) => row.clientId).join('\n'));
    const groupId = [...emu.world.orgs[0]!.groups.entries()].find(([, group]) => group.name === 'Sync test group')![0];
    expect((await cli(emu, dir, ['state', 'set-group', pipeline, String(groupId)])).code).toBe(0);
    const imported = await cli(emu, dir, ['state', 'import', pipeline, '--file', 'ids.txt']);
    expect(imported.code, imported.stderr).toBe(0);
    const answer = expectOneAnswer(await fourAnswers(dir, pipeline, false));
    expect(answer).toMatchObject({ code: 0, pairs: ['orcid EM-0001 EM-0100'], rejected: ['EM-0100'] });
    expect(Object.keys(groupRecords(emu)).sort()).toEqual(['EM-0001', 'EM-0002', 'EM-0003']);
  });
});
