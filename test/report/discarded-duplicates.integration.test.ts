/**
 * `duplicate_client_ids: last` / `first`: the row set aside is listed in the report with the
 * values it carried that were not synced (an ORCID the kept row lacks), so an office can merge
 * the rows. Against the emulator, through the CLI.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { cli, emulator as startEmulator, makeProject, person, type Project } from '../support/project.js';

const ORCID = '0000-0002-1825-0097';
let running: RunningEmulator;
let project: Project;

beforeAll(async () => {
  running = await startEmulator();
  // Row 2 (p1, with an ORCID), row 3 (p2), row 4 (p1 again, another e-mail, no ORCID).
  project = await makeProject([person(1, { orcid: ORCID }), person(2), person(1, { email: 'p1.new@example.org' })]);
});

afterAll(async () => {
  await running.close();
  await rm(project.dir, { recursive: true, force: true });
});

async function planWith(policy: 'first' | 'last', extra: string[] = []) {
  const mapping = join(project.dir, 'mapping.yaml');
  const text = (await readFile(mapping, 'utf8')).replace(/\nduplicate_client_ids: \w+\n/, '\n');
  await writeFile(mapping, `${text}\nduplicate_client_ids: ${policy}\n`);
  const dir = `report-${policy}${extra.join('')}`;
  const run = await cli(running, project.dir, ['plan', project.pipeline, '--create-group', '--report-dir', dir, ...extra]);
  expect(run.code, run.stderr).toBe(0);
  const read = (name: string) => readFile(join(project.dir, dir, name), 'utf8');
  return { json: JSON.parse(await read('report.json')) as { discardedRows?: unknown[] }, html: await read('report.html'), md: await read('report.md') };
}

describe('discarded duplicate rows', () => {
  it('last: the earlier row is listed with the ORCID and e-mail it carried', async () => {
    const { json, html, md } = await planWith('last');
    expect(json.discardedRows).toEqual([
      { provenance: expect.objectContaining({ row: 2 }), clientId: 'p1', keptRow: 4, notSynced: { Email: 'person1@example.org', ORCID: ORCID } },
    ]);
    expect(html).toContain('Discarded duplicate rows');
    expect(html).toContain(`ORCID: ${ORCID}`);
    // report.md names the columns only: values are personal data.
    expect(md).toMatch(/\| 2 \| p1 \| 4 \| Email, ORCID \|/);
    expect(md).not.toContain(ORCID);
  });

  it('first: the later row is listed with the e-mail it carried', async () => {
    const { json } = await planWith('first');
    expect(json.discardedRows).toEqual([{ provenance: expect.objectContaining({ row: 4 }), clientId: 'p1', keptRow: 2, notSynced: { Email: 'p1.new@example.org' } }]);
  });

  it('--mask: the columns stay, the values are masked in every file', async () => {
    const { json, html, md } = await planWith('last', ['--mask']);
    expect(json.discardedRows).toEqual([expect.objectContaining({ clientId: 'p1', keptRow: 4, notSynced: { Email: '(masked)', ORCID: '(masked)' } })]);
    for (const text of [JSON.stringify(json), html, md]) {
      expect(text).not.toContain(ORCID);
      expect(text).not.toContain('person1@example.org');
    }
    expect(html).toContain('ORCID: (masked)');
  });
});
