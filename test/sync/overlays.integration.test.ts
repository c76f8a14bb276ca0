/**
 * Fixes layered over the export (`source.overlays`), end to end: the legacy sample's rejected.csv,
 * as `validate --rejected-out` writes it (Windows-1252, ";", a title line, error columns), is
 * corrected and listed after the export; validate accepts every row, sync writes the corrected
 * values to the emulator, the report names each row's file, and the overlay's new row is listed.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import iconv from 'iconv-lite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { loadFixture } from '../../src/emulator/fixture.js';
import type { RunReport } from '../../src/report/types.js';
import { cli, emulator, writes } from '../support/project.js';

const ROOT = resolve(import.meta.dirname, '../..');

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

/** A copy of the legacy example (pipeline, mapping, export) and a saved custom-fields listing. */
function legacyProject(): { dir: string; pipeline: string; fields: string } {
  const dir = mkdtempSync(join(tmpdir(), 'rostersync-overlays-'));
  for (const folder of ['pipelines', 'mappings', 'samples']) mkdirSync(join(dir, folder));
  copyFileSync(join(ROOT, 'samples/legacy-export.csv'), join(dir, 'samples/legacy-export.csv'));
  copyFileSync(join(ROOT, 'mappings/legacy.yaml'), join(dir, 'mappings/legacy.yaml'));
  copyFileSync(join(ROOT, 'pipelines/legacy.yaml'), join(dir, 'pipelines/legacy.yaml'));
  const fields = join(dir, 'fields.json');
  writeFileSync(fields, JSON.stringify(loadFixture().orgs[0]!.custom_fields));
  return { dir, pipeline: join(dir, 'pipelines/legacy.yaml'), fields };
}

function addOverlays(pipeline: string, files: string[]): void {
  const text = readFileSync(pipeline, 'utf8');
  const list = files.map((file) => `    - ${file}\n`).join('');
  writeFileSync(pipeline, text.replace(/(\n {4}header_row: 2[^\n]*\n)/, `$1  overlays:\n${list}`));
}

/**
 * What a person does in Excel: correct the cells the error columns point at, drop the second copy
 * of a duplicated person, and add a reviewer the export lacked. The file keeps its encoding,
 * delimiter, title line and error columns.
 */
function correct(rejected: Buffer): Buffer {
  const lines = iconv.decode(rejected, 'windows-1252').split('\r\n');
  const fixed = lines
    .filter((line) => !line.includes('second.copy@example.org'))
    .map((line) =>
      line
        .replace('0000-0003-1927-7644', '0000-0003-1927-7643')
        .replace(';jan.novak@;', ';celia.sato@uni-example.org;')
        .replace(';Guru;', ';Expert;')
        .replace('30.02.2021', '28.02.2021')
        .replace(/^70286;;/, '70286;Nyström, Chiara;'),
    )
    .filter((line) => line !== '');
  fixed.push('70338;Berg, Anna;anna.berg@uni-example.org;;Uppsala University, Sweden;Sr;Genetics;2,0;01.02.2024;active;;;;;');
  return iconv.encode(`${fixed.join('\r\n')}\r\n`, 'windows-1252');
}

function legacyRecords(): Map<string, Record<string, unknown>> {
  const group = [...emu.world.orgs[0]!.groups.values()].find((g) => g.name === 'Legacy reviewers');
  return new Map([...(group?.records ?? new Map<string, unknown>())].map(([id, record]) => [id, record as Record<string, unknown>]));
}

async function reportOf(stdout: string): Promise<RunReport> {
  const path = /json\s+(\S+report\.json)/.exec(stdout)?.[1];
  expect(path, stdout).toBeDefined();
  return JSON.parse(await readFile(path!, 'utf8')) as RunReport;
}

interface ValidateJson {
  counts: { rowsRead: number; valid: number; rejected: number };
  rejected: Array<{ provenance: { file: string; row: number }; problems: Array<{ code: string }> }>;
  layers?: { files: string[]; replaced: number; added: Array<{ clientId: string; provenance: { file: string; row: number } }> };
}

describe('overlays: a corrected rejected.csv layered over the export', () => {
  it('validates, syncs the corrected values, names each row’s file and lists the new row; a rerun writes nothing', async () => {
    const { dir, pipeline, fields } = legacyProject();
    const first = await cli(emu, dir, ['validate', pipeline, '--fields-file', fields, '--rejected-out', 'rejected.csv', '--json']);
    expect(first.code, first.stderr).toBe(2);
    expect((JSON.parse(first.stdout) as ValidateJson).counts.rejected).toBe(7);

    writeFileSync(join(dir, 'rejected-fixed.csv'), correct(readFileSync(join(dir, 'rejected.csv'))));
    addOverlays(pipeline, ['../rejected-fixed.csv']);

    const again = await cli(emu, dir, ['validate', pipeline, '--fields-file', fields, '--json']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    const validated = JSON.parse(again.stdout) as ValidateJson;
    // 27 rows of the export + 7 of the fixes; the export's 7 rows of the 6 corrected people are
    // replaced (both rows of the duplicated 70117), 2 are filtered (inactive).
    expect(validated.counts).toMatchObject({ rowsRead: 34, valid: 25, rejected: 0 });
    expect(validated.layers?.replaced).toBe(7);
    expect(validated.layers?.added.map((row) => [row.clientId, basename(row.provenance.file), row.provenance.row])).toEqual([['legacy-70338', 'rejected-fixed.csv', 9]]);

    const sync = await cli(emu, dir, ['sync', pipeline, '--create-group']);
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    const records = legacyRecords();
    expect(records.size).toBe(25);
    expect(records.get('legacy-70039')).toMatchObject({ orcids: ['0000-0003-1927-7643'] });
    expect(records.get('legacy-70104')).toMatchObject({ name: 'Célia Sato', emails: ['celia.sato@uni-example.org'] });
    expect(records.get('legacy-70117')).toMatchObject({ emails: ['dmitri.hartmann@research.example.edu'] });
    expect(records.get('legacy-70286')).toMatchObject({ name: 'Chiara Nyström' });
    expect(records.get('legacy-70338')).toMatchObject({ name: 'Anna Berg', affiliations: ['Uppsala University, Sweden'] });

    const report = await reportOf(sync.stdout);
    const where = (clientId: string) => {
      const provenance = report.records.find((record) => record.clientId === clientId)?.provenance;
      return provenance && `${basename(provenance.file)}:${provenance.row}`;
    };
    expect(where('legacy-70000')).toBe('legacy-export.csv:3');
    expect(where('legacy-70039')).toBe('rejected-fixed.csv:3');
    expect(where('legacy-70338')).toBe('rejected-fixed.csv:9');
    expect(report.layers).toMatchObject({ replaced: 7, added: [{ clientId: 'legacy-70338' }] });
    const markdown = await readFile(join(dirnameOf(sync.stdout), 'report.md'), 'utf8');
    expect(markdown).toContain('| Overlays | `rejected-fixed.csv` · 7 rows replaced · 1 new row: `legacy-70338` at `rejected-fixed.csv:9` |');

    const before = writes(emu).total;
    const rerun = await cli(emu, dir, ['sync', pipeline]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(writes(emu).total - before).toBe(0);
  });

  it('a later overlay replaces an earlier one; a client_id twice in one overlay is rejected at that file’s rows', async () => {
    const { dir, pipeline, fields } = legacyProject();
    const header = 'PersonID,Name,E-mail,ORCID,Institution,Level,Areas,Reviews,Last review,Status,Remarks';
    writeFileSync(join(dir, 'first.csv'), `${header}\n70000,"Siddiqui, Umar",umar@example.org,,First Institute,Sr,Statistics,1,01.01.2024,active,\n`);
    writeFileSync(
      join(dir, 'second.csv'),
      `${header}\n70000,"Siddiqui, Umar",umar@example.org,,Second Institute,Sr,Statistics,1,01.01.2024,active,\n70013,"Costa, V",a@example.org,,X,Sr,Genetics,1,01.01.2024,active,\n70013,"Costa, V",b@example.org,,X,Sr,Genetics,1,01.01.2024,active,\n`,
    );
    addOverlays(pipeline, ['../first.csv', '../second.csv']);
    const result = await cli(emu, dir, ['validate', pipeline, '--fields-file', fields, '--json']);
    const validated = JSON.parse(result.stdout) as ValidateJson;
    // 70000: the export's row and first.csv's are replaced by second.csv's; 70013: the export's row
    // is replaced by second.csv's two rows, which are the same id twice (rejected, in second.csv).
    expect(validated.layers?.replaced).toBe(3);
    expect(validated.layers?.added).toEqual([]);
    const duplicates = validated.rejected.filter((row) => row.problems.some((p) => p.code === 'duplicate_client_id') && basename(row.provenance.file) === 'second.csv');
    expect(duplicates.map((row) => row.provenance.row)).toEqual([3, 4]);

    await cli(emu, dir, ['sync', pipeline, '--create-group']);
    expect(legacyRecords().get('legacy-70000')).toMatchObject({ affiliations: ['Second Institute'] });
    // The person whose rows are rejected is neither written nor deleted.
    expect(legacyRecords().has('legacy-70013')).toBe(false);
  });

  it('duplicate_client_ids: last in an overlay: the row set aside is listed with that file and the cells the kept row lacks', async () => {
    const { dir, pipeline } = legacyProject();
    const mapping = join(dir, 'mappings/legacy.yaml');
    writeFileSync(mapping, readFileSync(mapping, 'utf8').replace('duplicate_client_ids: reject', 'duplicate_client_ids: last'));
    const header = 'PersonID,Name,E-mail,ORCID,Institution,Level,Areas,Reviews,Last review,Status,Remarks';
    writeFileSync(
      join(dir, 'second.csv'),
      `${header}\n70013,"Costa, V",a@example.org,,X,Sr,Genetics,1,01.01.2024,active,\n70013,"Costa, V",b@example.org,,X,Sr,Genetics,1,01.01.2024,active,\n`,
    );
    addOverlays(pipeline, ['../second.csv']);
    const run = await cli(emu, dir, ['plan', pipeline, '--create-group', '--report-dir', 'out']);
    expect(run.code, run.stderr).not.toBe(1);
    const report = JSON.parse(await readFile(join(dir, 'out', 'report.json'), 'utf8')) as RunReport;
    // The first row of 70013 in second.csv was read back from that file (not from the export's row 3).
    expect(report.discardedRows).toEqual([
      // The export's own duplicate (rows 13 and 31), and the overlay's.
      expect.objectContaining({ clientId: 'legacy-70117', keptRow: 31, provenance: { file: join(dir, 'samples/legacy-export.csv'), row: 13 } }),
      { provenance: { file: join(dir, 'second.csv'), row: 2 }, clientId: 'legacy-70013', keptRow: 3, notSynced: { 'E-mail': 'a@example.org' } },
    ]);
  });

  it('a saved plan is refused once an overlay changed', async () => {
    const { dir, pipeline, fields } = legacyProject();
    const header = 'PersonID,Name,E-mail,ORCID,Institution,Level,Areas,Reviews,Last review,Status,Remarks';
    const overlay = join(dir, 'fix.csv');
    writeFileSync(overlay, `${header}\n70000,"Siddiqui, Umar",umar@example.org,,First Institute,Sr,Statistics,1,01.01.2024,active,\n`);
    addOverlays(pipeline, ['../fix.csv']);
    expect((await cli(emu, dir, ['sync', pipeline, '--create-group', '--fields-file', fields])).code).toBe(2);
    // Exit 2: the export's other rejected rows are still there; the plan is saved all the same.
    const plan = await cli(emu, dir, ['plan', pipeline, '--out', 'plan.json', '--fields-file', fields]);
    expect(plan.code, plan.stderr).toBe(2);
    writeFileSync(overlay, `${header}\n70000,"Siddiqui, Umar",umar@example.org,,Other Institute,Sr,Statistics,1,01.01.2024,active,\n`);
    const apply = await cli(emu, dir, ['apply', 'plan.json', '--fields-file', fields]);
    expect(apply.code).toBe(1);
    expect(apply.stderr).toContain('the source file content');
  });
});

function dirnameOf(stdout: string): string {
  return /json\s+(\S+)[\\/]report\.json/.exec(stdout)![1]!;
}
