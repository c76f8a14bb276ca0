/** `rostersync state show|forget|import|set-group` against the emulator. */
import { chmodSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { API_KEY, cli, emulator, groupRecords, makeProject, people, writes } from '../support/project.js';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

describe('state commands', () => {
  it('shows the inventory, and forget makes the pipeline leave a record alone', async () => {
    const project = await makeProject(people(4));
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    const shown = await cli(emu, project.dir, ['state', 'show', project.pipeline, '--json']);
    expect(shown.code).toBe(0);
    const state = JSON.parse(shown.stdout) as { owned: number; groupId: number; records: { clientId: string }[]; runs: { outcome: string }[] };
    expect(state.owned).toBe(4);
    expect(state.records.map((r) => r.clientId).sort()).toEqual(['p1', 'p2', 'p3', 'p4']);
    expect(state.runs[0]!.outcome).toBe('success');

    expect((await cli(emu, project.dir, ['state', 'forget', project.pipeline, 'p4'])).code).toBe(0);
    await project.writeRoster(people(3));
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code, run.stderr).toBe(0);
    // Not owned any more: never deleted, although the roster dropped it.
    expect(Object.keys(groupRecords(emu))).toHaveLength(4);
    const missing = await cli(emu, project.dir, ['state', 'forget', project.pipeline, 'nobody']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('"nobody" is not in the inventory');
  });

  it('imports records that already exist in the group, so the next sync sends only differences', async () => {
    // Someone filled the group before rostersync: create it and two records directly.
    const res = await fetch(`${emu.url}/api/external/authors-group/create/`, {
      method: 'POST',
      headers: { 'X-ApiKey': API_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ group_name: 'Sync test group', owner_team: 'Editorial Office', editor_teams: [], viewer_teams: [] }),
    });
    const { authors_group_id: groupId } = (await res.json()) as { authors_group_id: number };
    for (const id of ['p1', 'p2']) {
      const put = await fetch(`${emu.url}/api/external/author-from-group/${groupId}/${id}/`, {
        method: 'POST',
        headers: { 'X-ApiKey': API_KEY, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: id === 'p1' ? 'Person 1' : 'Old Name', emails: [`person${id.slice(1)}@example.org`] }),
      });
      expect(put.status).toBe(200);
    }
    const project = await makeProject(people(3));
    expect((await cli(emu, project.dir, ['state', 'set-group', project.pipeline, String(groupId)])).code).toBe(0);
    const ids = join(project.dir, 'ids.txt');
    await writeFile(ids, '# adopted by hand\np1\np2\nunknown-id\n');
    const imported = await cli(emu, project.dir, ['state', 'import', project.pipeline, '--file', ids]);
    expect(imported.code).toBe(2);
    expect(imported.stdout).toContain('adopted 2 records');
    expect(imported.stdout).toContain('unknown-id');

    const before = writes(emu).byRoute;
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(run.code, run.stderr).toBe(0);
    const after = writes(emu).byRoute;
    const count = (calls: typeof before, route: string) => Object.values(calls[route] ?? {}).reduce((a, b) => a + b, 0);
    // p1 and p2 get partial updates of the fields that differ. p3 is not owned in a group this
    // pipeline did not create: create-if-absent reads it first (404), then sends the full POST.
    const partial = 'POST /api/external/author-from-group/:group_id/:client_id/partial/';
    expect(count(after, 'POST /api/external/author-from-group/:group_id/:client_id/') - count(before, 'POST /api/external/author-from-group/:group_id/:client_id/')).toBe(1);
    expect(count(after, partial) - count(before, partial)).toBe(2);
    expect((after[partial]?.['404'] ?? 0) - (before[partial]?.['404'] ?? 0)).toBe(0);
    expect(groupRecords(emu).p2!.name).toBe('Person 2');
  });

  it('state export --out makes an existing file owner-only before writing the emails into it', async () => {
    const project = await makeProject(people(2));
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    const out = join(project.dir, 'backup.jsonl');
    await writeFile(out, 'old', { mode: 0o644 });
    chmodSync(out, 0o644);
    const exported = await cli(emu, project.dir, ['state', 'export', project.pipeline, '--out', out]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
  });

  it('state import --jsonl goes into a state that has only planned (a dry run writes nothing to lose)', async () => {
    const source = await makeProject(people(2));
    expect((await cli(emu, source.dir, ['sync', source.pipeline, '--create-group'])).code).toBe(0);
    const out = join(source.dir, 'moved.jsonl');
    expect((await cli(emu, source.dir, ['state', 'export', source.pipeline, '--out', out])).code).toBe(0);
    const target = await makeProject(people(2));
    expect((await cli(emu, target.dir, ['plan', target.pipeline, '--create-group'])).code).toBe(0);
    const imported = await cli(emu, target.dir, ['state', 'import', target.pipeline, '--jsonl', out]);
    expect(imported.code, imported.stderr).toBe(0);
    const shown = JSON.parse((await cli(emu, target.dir, ['state', 'show', target.pipeline, '--json'])).stdout) as { owned: number };
    expect(shown.owned).toBe(2);
  });

  it('state rebind refuses a base URL a run would refuse, and changes nothing', async () => {
    const project = await makeProject(people(2));
    expect((await cli(emu, project.dir, ['sync', project.pipeline, '--create-group'])).code).toBe(0);
    for (const [url, why] of [
      ['http://service.example.org', 'refusing plain http:// to service.example.org'],
      ['https://user:secret@service.example.org', 'must not carry credentials'],
      ['not a url', 'is not a valid URL'],
    ] as const) {
      const refused = await cli(emu, project.dir, ['state', 'rebind', project.pipeline, '--base-url', url, '--release-owned']);
      expect(refused.code, url).toBe(1);
      expect(refused.stderr, url).toContain(why);
      expect(refused.stderr, url).not.toContain('secret');
    }
    const shown = JSON.parse((await cli(emu, project.dir, ['state', 'show', project.pipeline, '--json'])).stdout) as { service: string; owned: number };
    expect(shown).toMatchObject({ service: emu.url, owned: 2 });
  });
});
