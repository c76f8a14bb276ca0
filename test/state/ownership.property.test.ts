/**
 * Property test of ownership: over random sequences of roster edits, state loss, rebinding attempts,
 * edits "in the UI" and one- or two-pipeline setups on a group that already holds another team's
 * records, no record a pipeline does not own is deleted, and no unmanaged field changes.
 *
 * Each sequence is seeded (the seed is in the test name and every failure message), so a failure
 * replays exactly. Runs go through the CLI in-process against the emulator over real HTTP.
 */
import { mkdtemp, rm, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/runtime/seeded-random.js';
import { cli, emulator } from '../support/project.js';
import { COI, EXISTING_GROUP_ID, existingGroupFixture, NOTES, recordsOf, uiSet } from './helpers.js';

const MAPPING = fileURLToPath(new URL('../fixtures/sync/mapping.yaml', import.meta.url));
const UNMANAGED = [NOTES, COI, 'affiliations', 'articles'];
const SEQUENCES = 8;
const STEPS = 9;

interface Pipeline {
  name: string;
  file: string;
  roster: Map<string, string>;
  prefix: string;
}

/** The client_ids a pipeline's state owns, read as an auditor would (empty when the state is gone). */
function owned(dir: string, name: string): Set<string> {
  try {
    const db = new Database(join(dir, '.rostersync', `${name}.sqlite`), { readonly: true, fileMustExist: true });
    try {
      return new Set((db.prepare('SELECT client_id FROM records').all() as { client_id: string }[]).map((r) => r.client_id));
    } finally {
      db.close();
    }
  } catch {
    return new Set();
  }
}

describe('ownership property', () => {
  for (let seed = 1; seed <= SEQUENCES; seed++) {
    it(`seed ${seed}: nothing unowned is deleted, no unmanaged field changes`, { timeout: 120_000 }, async () => {
      const rng = seededRandom(seed * 7919);
      const pick = <T,>(items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
      const emu = await emulator({ fixture: existingGroupFixture() });
      const elsewhere = await emulator({ fixture: existingGroupFixture() });
      const dir = await mkdtemp(join(tmpdir(), 'rostersync-prop-'));
      try {
        await copyFile(MAPPING, join(dir, 'mapping.yaml'));
        const shared = rng() < 0.5;
        const pipelines: Pipeline[] = (shared ? ['a', 'b'] : ['a']).map((name) => ({ name, file: join(dir, `${name}.yaml`), roster: new Map(), prefix: `${name}-` }));
        for (const p of pipelines) {
          const share = shared ? `, share: { client_id_prefixes: ["${p.prefix}"] }` : '';
          await writeFile(p.file, `source: { file: ${p.name}.csv }\nmapping: mapping.yaml\ntarget: { group_id: ${EXISTING_GROUP_ID}${share} }\npolicy: { mode: mirror, max_rps: 1000 }\n`);
        }
        const writeRoster = (p: Pipeline) =>
          writeFile(join(dir, `${p.name}.csv`), ['ID,Full name,Email,ORCID,Level,Areas,Reviews', ...[...p.roster].map(([id, name]) => `${id},${name},${id}@example.org,,Senior,Genetics,3`)].join('\n') + '\n');
        // Ids a roster may hold: its own prefix, and (alone on the group) the other team's p1..p8 too.
        const pool = (p: Pipeline) => [...Array.from({ length: 8 }, (_, i) => `${p.prefix}${i + 1}`), ...(shared ? [] : Array.from({ length: 8 }, (_, i) => `p${i + 1}`))];
        for (const p of pipelines) {
          for (const id of pool(p)) if (rng() < 0.5) p.roster.set(id, `Person ${id}`);
          await writeRoster(p);
        }
        const groups = () => emu.world.orgs[0]!.groups.size;
        const groupCount = groups();
        const log: string[] = [];

        for (let step = 0; step < STEPS; step++) {
          const p = pick(pipelines);
          const before = recordsOf(emu, EXISTING_GROUP_ID);
          const ownedBefore = owned(dir, p.name);
          const kind = pick(['edit', 'edit', 'sync', 'sync', 'sync', 'lose-state', 'rebind', 'ui']);
          log.push(`${step}:${kind}:${p.name}`);
          if (kind === 'edit') {
            for (const id of pool(p)) {
              const roll = rng();
              if (roll < 0.2) p.roster.delete(id);
              else if (roll < 0.4) p.roster.set(id, `Person ${id}`);
              else if (roll < 0.5 && p.roster.has(id)) p.roster.set(id, `Renamed ${id}`);
            }
            await writeRoster(p);
          } else if (kind === 'sync') {
            const run = await cli(emu, dir, ['sync', p.file, '--allow-deletes', '100', '--allow-source-drop', '--allow-identity-changes', '100', '--allow-empty-source']);
            expect([0, 2], `${log.join(' ')}\n${run.stderr}`).toContain(run.code);
          } else if (kind === 'lose-state') {
            await rm(join(dir, '.rostersync', `${p.name}.sqlite`), { force: true });
            await rm(join(dir, '.rostersync', `${p.name}.sqlite-wal`), { force: true });
            await rm(join(dir, '.rostersync', `${p.name}.sqlite-shm`), { force: true });
          } else if (kind === 'rebind') {
            // Rebinding attempts without --release-owned: a run against another service, a set-group typo.
            const other = await cli(elsewhere, dir, ['sync', p.file, '--allow-deletes', '100']);
            const typo = await cli(emu, dir, ['state', 'set-group', p.file, '502']);
            if (ownedBefore.size > 0) {
              expect(other.code, log.join(' ')).toBe(1);
              expect(typo.code, log.join(' ')).toBe(1);
            }
            // Put back whatever an empty state accepted.
            await cli(emu, dir, ['state', 'rebind', p.file, '--base-url', emu.url, '--group-id', String(EXISTING_GROUP_ID), '--release-owned']);
            if (ownedBefore.size > 0) expect(elsewhere.stats.snapshot().writes.total, 'no write to another service while bound to this one').toBe(0);
          } else {
            const ids = Object.keys(before);
            if (ids.length > 0) await uiSet(emu, EXISTING_GROUP_ID, pick(ids), { [NOTES]: `ui edit ${step}` });
          }
          const after = recordsOf(emu, EXISTING_GROUP_ID);
          const expectedUi = kind === 'ui' ? after : before;
          for (const id of Object.keys(before)) {
            if (!(id in after)) expect(ownedBefore.has(id), `${log.join(' ')}: ${id} deleted by "${p.name}", which did not own it`).toBe(true);
            else for (const field of UNMANAGED) expect(after[id]![field], `${log.join(' ')}: ${id}.${field}`).toEqual(expectedUi[id]![field]);
          }
          expect(groups(), 'no group created').toBe(groupCount);
        }
      } finally {
        await emu.close();
        await elsewhere.close();
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
