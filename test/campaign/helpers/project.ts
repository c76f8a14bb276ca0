/**
 * A throw-away project (roster, mapping, pipeline) per trial, the CLI run in-process, and the
 * convergence check: the emulator's group against the roster, the state store against the emulator.
 */
import Database from 'better-sqlite3';
import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { RunningEmulator } from '../../../src/emulator/server.js';
import type { GroupState } from '../../../src/emulator/world.js';
import type { RunReport } from '../../../src/report/types.js';
import { expectedManaged, expectedRemote, rosterCsv, type Person } from './roster.js';

export const API_KEY = DEMO_API_KEY;
const MAPPING_FIXTURE = fileURLToPath(new URL('../../fixtures/sync/mapping.yaml', import.meta.url));
export const GROUP_NAME = 'Campaign group';

export interface Project {
  dir: string;
  pipeline: string;
  stateFile: string;
  writeRoster(people: readonly Person[]): Promise<void>;
}

export interface ProjectOptions {
  maxRps?: number;
  concurrency?: number;
  burst?: number;
}

export async function makeProject(people: readonly Person[], options: ProjectOptions = {}): Promise<Project> {
  const dir = await mkdtemp(join(tmpdir(), 'rostersync-campaign-'));
  const pipeline = join(dir, 'pipeline.yaml');
  const writeRoster = (list: readonly Person[]) => writeFile(join(dir, 'roster.csv'), rosterCsv(list));
  await writeRoster(people);
  await copyFile(MAPPING_FIXTURE, join(dir, 'mapping.yaml'));
  await writeFile(
    pipeline,
    [
      'source: { file: roster.csv }',
      'mapping: mapping.yaml',
      `target: { group: { name: ${GROUP_NAME}, owner_team: Editorial Office } }`,
      'policy:',
      '  mode: mirror',
      `  max_rps: ${options.maxRps ?? 1000}`,
      `  burst: ${options.burst ?? 10}`,
      `  concurrency: ${options.concurrency ?? 4}`,
      '  guards: { max_deletes: 50, max_delete_percent: 10, max_source_drop_percent: 50 }',
      '',
    ].join('\n'),
  );
  return { dir, pipeline, stateFile: join(dir, '.rostersync', 'pipeline.sqlite'), writeRoster };
}

import { cli } from '../../support/project.js';
import { DEMO_API_KEY } from '../../support/cli.js';

export { cli };
export type { CliRun } from '../../support/project.js';

export function serviceEnv(emulator: { url: string }): Record<string, string> {
  return { SERVICE_BASE_URL: emulator.url, SERVICE_API_KEY: API_KEY, NO_COLOR: '1' };
}

/** Runs the CLI in-process (the same code as bin/rostersync.js, without a process to start). */
export async function readReport(dir: string): Promise<RunReport> {
  return JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as RunReport;
}

/** Every group of the default org with the campaign's name (more than one would be a duplicate). */
export function campaignGroups(emulator: RunningEmulator): GroupState[] {
  const org = emulator.world.orgByApiKey(API_KEY)!;
  return [...org.groups.values()].filter((g) => g.name === GROUP_NAME);
}

export interface StateSnapshot {
  groupId: number | null;
  groupIntent: string | null;
  records: Map<string, Record<string, unknown>>;
  unfinished: { client_id: string; state: string }[];
  lock: unknown;
}

/** Reads the state database read-only, as an auditor would, without the store's code. */
export function readState(file: string): StateSnapshot {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const meta = (key: string) => (db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value ?? null;
    const groupId = meta('group_id');
    const records = new Map<string, Record<string, unknown>>();
    for (const row of db.prepare('SELECT client_id, fields_json FROM records').all() as { client_id: string; fields_json: string }[]) {
      records.set(row.client_id, JSON.parse(row.fields_json) as Record<string, unknown>);
    }
    const unfinished = db
      .prepare(`SELECT client_id, state FROM journal WHERE id IN (SELECT MAX(id) FROM journal GROUP BY client_id) AND state <> 'done'`)
      .all() as { client_id: string; state: string }[];
    return { groupId: groupId === null ? null : Number(groupId), groupIntent: meta('group_intent'), records, unfinished, lock: db.prepare('SELECT * FROM lock').get() ?? null };
  } finally {
    db.close();
  }
}

const sorted = (keys: Iterable<string>) => [...keys].sort();

/**
 * The campaign's verdict on one converged project: exactly one group; its records are exactly
 * the roster's (none lost, none extra, every field as mapped); the inventory owns exactly those
 * records with the fields they have remotely; nothing left unfinished in the journal; no lock.
 */
export function expectConverged(emulator: RunningEmulator, project: Project, roster: readonly Person[], label: string): void {
  const groups = campaignGroups(emulator);
  expect(groups.map((g) => g.id), `${label}: one group named "${GROUP_NAME}"`).toHaveLength(1);
  const group = groups[0]!;
  const remote = Object.fromEntries(group.records);
  expect(sorted(Object.keys(remote)), `${label}: remote client_ids`).toEqual(sorted(roster.map((p) => p.id)));
  for (const person of roster) expect(remote[person.id], `${label}: remote ${person.id}`).toEqual(expectedRemote(person));

  const state = readState(project.stateFile);
  expect(state.groupId, `${label}: state group id`).toBe(group.id);
  expect(state.groupIntent, `${label}: no group creation left pending`).toBeNull();
  expect(sorted(state.records.keys()), `${label}: owned client_ids`).toEqual(sorted(Object.keys(remote)));
  for (const person of roster) expect(state.records.get(person.id), `${label}: owned ${person.id}`).toEqual(expectedManaged(person));
  expect(state.unfinished, `${label}: journal entries not done`).toEqual([]);
  expect(state.lock, `${label}: lock released`).toBeNull();
}

/** What recovering from a crash took. */
export interface RecoveryLog {
  reruns: number;
  /** Whether the operator had to settle an ambiguous group creation, and how. */
  setGroup: 'none' | 'recorded' | 'cleared';
}

/** The engine's refusal after a group creation whose outcome it never learned (a kill, an outage). */
export function needsSetGroup(stderr: string): boolean {
  return stderr.includes('never learned whether it was created') || /state set-group .* <id>/.test(stderr);
}

/**
 * What the hint tells the operator to do: look the group up by name (here in `/_emulator/state`'s
 * world) and record its id with `state set-group`, or clear the intent when it does not exist.
 */
export async function settleGroupCreation(emu: RunningEmulator, project: Project, log: RecoveryLog): Promise<void> {
  const groups = campaignGroups(emu);
  expect(groups.length, 'never two groups').toBeLessThanOrEqual(1);
  const args = groups[0] ? [String(groups[0].id)] : ['--clear'];
  log.setGroup = groups[0] ? 'recorded' : 'cleared';
  const set = await cli(emu, project.dir, ['state', 'set-group', project.pipeline, ...args]);
  expect(set.code, set.stderr).toBe(0);
}

/** Runs the sync until it succeeds, doing what the error message tells an operator to do. */
export async function recover(emu: RunningEmulator, project: Project, flags: string[], log: RecoveryLog): Promise<string> {
  for (let attempt = 1; attempt <= 4; attempt++) {
    const reportDir = join(project.dir, 'reports', `recover-${attempt}`);
    const GROUP_CREATE = 'POST /api/external/authors-group/create/';
    const before = { ...emu.stats.snapshot().writes, groups: emu.stats.count(GROUP_CREATE, 200) };
    const run = await cli(emu, project.dir, ['sync', project.pipeline, '--create-group', '--report-dir', reportDir, ...flags]);
    log.reruns++;
    if (run.code === 0) {
      // Not misreported: every record the report calls done was one successful write the service
      // saw (a delete answered 404 was already gone), and every write the service saw is reported.
      const after = { ...emu.stats.snapshot().writes, groups: emu.stats.count(GROUP_CREATE, 200) };
      const report = await readReport(reportDir);
      const done = report.records.filter((r) => r.action !== 'noop' && r.outcome === 'done');
      expect(after.succeeded - before.succeeded - (after.groups - before.groups), 'successful record writes vs records reported done').toBe(done.filter((r) => r.httpStatus !== 404).length);
      expect(report.records.filter((r) => r.outcome === 'failed')).toEqual([]);
      return reportDir;
    }
    if (needsSetGroup(run.stderr)) {
      await settleGroupCreation(emu, project, log);
      continue;
    }
    throw new Error(`rerun ${attempt} exited ${run.code}:\n${run.stderr}\n${run.stdout}`);
  }
  throw new Error('no successful run after 4 reruns');
}

