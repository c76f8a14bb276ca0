import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/load.js';
import type { DesiredRecord } from '../../src/mapping/index.js';
import { loadFieldsFile } from '../../src/config/fields-file.js';
import { validatePipeline } from '../../src/sync/validate.js';
import { ROOT, runCli, tempDir, writeFieldsFile } from './helpers.js';
import { unmarked } from '../../src/personal-data/personal-text.js';

let dir: string;
let fieldsFile: string;
beforeAll(() => {
  dir = tempDir();
  fieldsFile = writeFieldsFile(dir);
});

describe('validate on the samples (offline, --fields-file)', () => {
  it.each([
    // pipeline, rows read, valid, rejected, filtered, exit code
    ['pipelines/reviewers.yaml', 40, 38, 0, 2, 0],
    ['pipelines/demo.yaml', 40, 38, 0, 2, 0],
    ['pipelines/editorial-reviewers.yaml', 20, 20, 0, 0, 0],
    ['pipelines/editorial-board.yaml', 12, 12, 0, 0, 0],
    ['pipelines/legacy.yaml', 27, 18, 7, 2, 2],
  ])('%s', async (pipeline, rowsRead, valid, rejected, filtered, exit) => {
    const { code, stdout, stderr } = await runCli(['validate', pipeline, '--fields-file', fieldsFile, '--json']);
    expect(stderr).toBe('');
    const result = JSON.parse(stdout) as { counts: Record<string, number>; exitCode: number };
    expect(result.counts).toMatchObject({ rowsRead, valid, rejected, filtered });
    expect(code).toBe(exit);
    expect(result.exitCode).toBe(exit);
  });

  it('explains every legacy problem with file, row, column, value and a fix', async () => {
    const { code, stdout } = await runCli(['validate', 'pipelines/legacy.yaml', '--fields-file', fieldsFile]);
    expect(code).toBe(2);
    expect(stdout).toMatch(/rows read\s+27\n\s+records valid\s+18\n\s+rows rejected\s+7\n\s+rows filtered\s+2/);
    for (const code of ['invalid_orcid', 'invalid_email', 'duplicate_client_id', 'unknown_option', 'invalid_date', 'missing_required']) {
      expect(stdout).toContain(`  ${code} (`);
    }
    expect(unmarked(stdout)).toContain('samples/legacy-export.csv row 15, column "Level", value "Guru": Expertise level: "Guru" is not one of the allowed labels: Junior, Senior, Expert');
    expect(stdout).toMatch(/row 13, column "PersonID", value "legacy-70117": client_id "legacy-70117" is also used by row 31/);
    expect(stdout.match(/\n\s+fix: /g)?.length).toBe(7);
  });

  it('maps the legacy quirks: Last-First names, cp1252, split emails, ORCID URLs, serial and DD.MM.YYYY dates, decimal comma', async () => {
    const pipeline = loadPipeline(join(ROOT, 'pipelines/legacy.yaml'));
    const records: DesiredRecord[] = [];
    await validatePipeline(pipeline, { customFields: loadFieldsFile(fieldsFile), onRecord: (r) => void records.push(r) });
    const first = records.find((r) => r.clientId === 'legacy-70000')!;
    expect(first.fields).toMatchObject({
      name: 'Umar Siddiqui',
      emails: ['umar.siddiqui@hospital.example.net', 'u.siddiqui@alumni.example.org'],
      orcids: ['0000-0001-8704-8442'],
      affiliations: ['McGill University, Montreal, Canada'],
      '3e9a0d6b-4f50-4182-9dce-3f4a5b6c7d84': '2019-08-21', // serial 43698
      '2d8f9c5a-3e4f-4071-8cbd-2e3f4a5b6c73': 48,
      '0b6f7a3e-1c2d-4e5f-8a9b-0c1d2e3f4a51': '5a1e0f6c-0001-4a00-8000-000000000002', // Sr → Senior
    });
    const second = records.find((r) => r.clientId === 'legacy-70013')!;
    expect(second.fields['3e9a0d6b-4f50-4182-9dce-3f4a5b6c7d84']).toBe('2022-06-19');
    expect(second.fields.orcids).toEqual(['0000-0003-1250-4532']);
    expect(records.some((r) => /[éøñçćšžÿ]/.test(String(r.fields.name)))).toBe(true);
    // Under the reject policy the first row of a duplicated id was streamed; the summary says to drop it.
    expect(records.some((r) => r.clientId === 'legacy-70117')).toBe(true);
  });

  it('maps the workbook: option labels, legacy values, hyperlink ORCIDs, date cells, multi-option', async () => {
    const records: DesiredRecord[] = [];
    const pipeline = loadPipeline(join(ROOT, 'pipelines/editorial-board.yaml'));
    await validatePipeline(pipeline, { customFields: loadFieldsFile(fieldsFile), onRecord: (r) => void records.push(r) });
    expect(records[0]!.clientId).toBe('board-eb-01');
    expect(records[0]!.fields).toMatchObject({
      '5a1c2f8d-6172-43a4-9fe0-5b6c7d8e9fa6': '7c3a2b8e-0003-4c00-8000-000000000001', // EiC → Editor-in-Chief
      '6b2d3a9e-7283-44b5-a0f1-6c7d8e9fa0b7': expect.stringMatching(/^202[5-8]-(06|12)-30$/),
      '4f0b1e7c-5061-4293-8edf-4a5b6c7d8e95': 'Handles statistics queries',
    });
    expect(records.every((r) => Array.isArray(r.fields['1c7e8b4f-2d3e-4f60-9bac-1d2e3f4a5b62']))).toBe(true);

    const reviewers: DesiredRecord[] = [];
    await validatePipeline(loadPipeline(join(ROOT, 'pipelines/editorial-reviewers.yaml')), {
      customFields: loadFieldsFile(fieldsFile),
      onRecord: (r) => void reviewers.push(r),
    });
    expect(reviewers.filter((r) => r.fields.orcids !== null).every((r) => /^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$/.test((r.fields.orcids as string[])[0]!))).toBe(true);
    expect(new Set(reviewers.map((r) => r.fields['0b6f7a3e-1c2d-4e5f-8a9b-0c1d2e3f4a51'])).size).toBeGreaterThan(1);
  });

  it('writes rejected rows to --rejected-out: original columns + error columns, mode 0600', async () => {
    const out = join(dir, 'rejected.csv');
    const { code, stdout } = await runCli(['validate', 'pipelines/legacy.yaml', '--fields-file', fieldsFile, '--rejected-out', out]);
    expect(code).toBe(2);
    expect(stdout).toContain('Rejected rows written to');
    expect(statSync(out).mode & 0o777).toBe(0o600);
    // In the pipeline's own dialect (Windows-1252, ";", header on line 2), so it can be fed back.
    const lines = iconv.decode(readFileSync(out), 'windows-1252').trimEnd().split('\r\n');
    expect(lines[1]).toBe('PersonID;Name;E-mail;ORCID;Institution;Level;Areas;Reviews;Last review;Status;Remarks;error_row;error_codes;error_messages;error_hints');
    expect(lines).toHaveLength(9);
    expect(lines.find((l) => l.includes('Guru'))).toMatch(/;15;unknown_option;/);
    // both rows of the duplicated id carry their original cells (the first one through a second read)
    const dupes = lines.filter((l) => l.includes('duplicate_client_id'));
    expect(dupes).toHaveLength(2);
    expect(dupes.every((l) => l.startsWith('70117;'))).toBe(true);
  });
});
