/**
 * Report directory not writable. The run's writes are done; it still says what it wrote,
 * on the console and in a report in a fallback place it names, and exits with the run's own code.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { API_KEY, cli, emulator, groupRecords, makeProject, people } from '../support/project.js';
import { readFile, writeFile } from 'node:fs/promises';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

it('a report directory that cannot be written: writes stay, the console says what was done and where the report went', async () => {
  const project = await makeProject(people(4));
  const res = await fetch(`${emu.url}/api/external/authors-group/create/`, {
    method: 'POST',
    headers: { 'X-ApiKey': API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify({ group_name: 'Sync test group', owner_team: 'Editorial Office', editor_teams: [], viewer_teams: [] }),
  });
  const { authors_group_id: id } = (await res.json()) as { authors_group_id: number };
  await writeFile(project.pipeline, (await readFile(project.pipeline, 'utf8')).replace(/^ {2}group: \{.*\}$/m, `  group_id: ${id}`));

  // roster.csv is a file: nothing can be created under it (as root too, unlike a chmod).
  const run = await cli(emu, project.dir, ['sync', project.pipeline, '--report-dir', join(project.dir, 'roster.csv', 'report')]);
  expect(run.code, run.stderr).toBe(0);
  expect(Object.keys(groupRecords(emu))).toHaveLength(4);
  const warning = /warning: Could not write the report to (\S+): a part of the path is not a directory \(ENOTDIR\)\. It was written to (\S+) instead\./.exec(run.stderr);
  expect(warning, run.stderr).not.toBeNull();
  const fallbackDir = warning![2]!;
  try {
    expect(run.stdout).toContain(join(fallbackDir, 'report.html'));
    expect(run.stdout).toMatch(/create/);
    const report = JSON.parse(await readFile(join(fallbackDir, 'report.json'), 'utf8')) as { counts: { create: { done: number } } };
    expect(report.counts.create.done).toBe(4);
  } finally {
    if (existsSync(fallbackDir)) rmSync(fallbackDir, { recursive: true, force: true });
  }
});
