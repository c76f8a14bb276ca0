/**
 * Builders for tests that run whole syncs: a throw-away project directory (roster, mapping,
 * pipeline), the emulator (./emulator.ts), a way to run the CLI in-process against it, and readers
 * of what the emulator holds and was asked.
 */
import { copyFile, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENDPOINTS, routeKey } from '../../src/client/endpoints.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { DEMO_API_KEY, emulatorEnv, runCli, type CliRun } from './cli.js';

export const API_KEY = DEMO_API_KEY;
export type { CliRun };
const MAPPING_FIXTURE = fileURLToPath(new URL('../fixtures/sync/mapping.yaml', import.meta.url));

export interface RosterRow {
  id: string;
  name: string;
  email?: string;
  orcid?: string;
  level?: string;
  areas?: string;
  reviews?: string;
}

export function person(n: number, overrides: Partial<RosterRow> = {}): RosterRow {
  return { id: `p${n}`, name: `Person ${n}`, email: `person${n}@example.org`, level: ['Junior', 'Senior', 'Expert'][n % 3]!, areas: n % 2 ? 'Oncology; Genetics' : 'Statistics', reviews: String(n % 7), ...overrides };
}

export function people(count: number, start = 1): RosterRow[] {
  return Array.from({ length: count }, (_, i) => person(start + i));
}

const HEADER = 'ID,Full name,Email,ORCID,Level,Areas,Reviews';

function csvCell(value: string | undefined): string {
  const text = value ?? '';
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export interface Project {
  dir: string;
  pipeline: string;
  writeRoster(rows: RosterRow[]): Promise<void>;
}

export interface ProjectOptions {
  mode?: 'upsert' | 'mirror';
  update?: 'partial' | 'full';
  guards?: { max_deletes?: number; max_delete_percent?: number; max_source_drop_percent?: number };
  maxRps?: number;
  concurrency?: number;
  /**
   * `policy.drift_sample`; the pipeline's default (a few GETs each real sync) when left out. 0 turns
   * the whole drift check off, the rotating window too (`drift_cycle: 0`), for tests that count calls.
   */
  driftSample?: number;
}

export async function makeProject(rows: RosterRow[], options: ProjectOptions = {}): Promise<Project> {
  const dir = await mkdtemp(join(tmpdir(), 'rostersync-sync-'));
  const pipeline = join(dir, 'pipeline.yaml');
  const writeRoster = (list: RosterRow[]) =>
    writeFile(join(dir, 'roster.csv'), [HEADER, ...list.map((r) => [r.id, r.name, r.email, r.orcid, r.level, r.areas, r.reviews].map(csvCell).join(','))].join('\n') + '\n');
  await writeRoster(rows);
  await copyFile(MAPPING_FIXTURE, join(dir, 'mapping.yaml'));
  const guards = { max_deletes: 50, max_delete_percent: 10, max_source_drop_percent: 50, ...options.guards };
  await writeFile(
    pipeline,
    [
      'source: { file: roster.csv }',
      'mapping: mapping.yaml',
      'target:',
      '  group: { name: Sync test group, owner_team: Editorial Office }',
      'policy:',
      `  mode: ${options.mode ?? 'mirror'}`,
      `  update: ${options.update ?? 'partial'}`,
      `  max_rps: ${options.maxRps ?? 500}`,
      `  burst: 20`,
      `  concurrency: ${options.concurrency ?? 4}`,
      `  guards: { max_deletes: ${guards.max_deletes}, max_delete_percent: ${guards.max_delete_percent}, max_source_drop_percent: ${guards.max_source_drop_percent} }`,
      ...(options.driftSample !== undefined ? [`  drift_sample: ${options.driftSample}`] : []),
      ...(options.driftSample === 0 ? ['  drift_cycle: 0'] : []),
      '',
    ].join('\n'),
  );
  return { dir, pipeline, writeRoster };
}

/** Runs the CLI in-process against the emulator. */
export function cli(emulator: { url: string }, cwd: string, argv: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCli(argv, { cwd, env: emulatorEnv(emulator, env) });
}

export { emulator } from './emulator.js';

/** Records of the group the test pipeline created (the only group named "Sync test group"). */
export function groupRecords(running: RunningEmulator): Record<string, Record<string, unknown>> {
  for (const group of running.world.orgs[0]!.groups.values()) {
    if (group.name === 'Sync test group') return Object.fromEntries([...group.records.entries()].map(([id, rec]) => [id, rec as Record<string, unknown>]));
  }
  return {};
}

/** The emulator's route keys (`stats.calls`) of the three record writes. */
export const FULL = routeKey(ENDPOINTS.putAuthor);
export const PARTIAL = routeKey(ENDPOINTS.patchAuthor);
export const DELETE = routeKey(ENDPOINTS.deleteAuthor);

export function writes(running: RunningEmulator): { total: number; byRoute: Record<string, Record<string, number>> } {
  const stats = running.stats.snapshot();
  return { total: stats.writes.total, byRoute: stats.calls };
}
