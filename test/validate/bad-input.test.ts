/**
 * Broken files and mappings: each gives one clear error of the right class naming the file and
 * the place in it, exit code 1, and never a stack trace.
 */
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/load.js';
import { loadFieldsFile } from '../../src/config/fields-file.js';
import { validatePipeline } from '../../src/sync/validate.js';
import { ROOT, runCli, tempDir, writeFieldsFile } from './helpers.js';

const CSV = 'ID,Name,Email,Level\n1,Ann Lee,ann@x.org,Senior\n';
const MAPPING = 'client_id: { column: ID }\nfields:\n  name: { column: Name }\n  emails: { column: Email }\ncustom_fields:\n  Expertise level: { column: Level }\n';
const PIPELINE = 'source: { file: roster.csv }\nmapping: mapping.yaml\ntarget: { group_id: 1 }\n';

interface Case {
  label: string;
  files?: Record<string, string | Buffer>;
  /** Extra CLI flags; `--fields-file` is added unless `fields` is given. */
  fields?: string;
  errorClass: 'ConfigError' | 'MappingError' | 'SourceError';
  /** File the message must name. */
  file: string;
  /** Location inside it (dot-path, line, column name...). */
  where: RegExp;
}

const pipeline = (text: string) => ({ 'pipeline.yaml': text });
const mapping = (text: string) => ({ 'mapping.yaml': text });

const CASES: Case[] = [
  { label: 'pipeline file missing', files: { 'pipeline.yaml': '' }, errorClass: 'ConfigError', file: 'nope.yaml', where: /not found/ },
  { label: 'pipeline empty', files: pipeline(''), errorClass: 'ConfigError', file: 'pipeline.yaml', where: /is empty/ },
  { label: 'pipeline YAML syntax', files: pipeline('source: { file: roster.csv\nmapping: m\n'), errorClass: 'ConfigError', file: 'pipeline.yaml', where: /line \d+, column \d+/ },
  { label: 'pipeline unknown key', files: pipeline(`${PIPELINE}dry_run: true\n`), errorClass: 'ConfigError', file: 'pipeline.yaml', where: /dry_run: unknown key "dry_run" \(line 4\)/ },
  { label: 'pipeline nested unknown key', files: pipeline(PIPELINE.replace('{ file: roster.csv }', '{ file: roster.csv, sheet: 2 }')), errorClass: 'ConfigError', file: 'pipeline.yaml', where: /source\.sheet: unknown key/ },
  { label: 'pipeline wrong type', files: pipeline(`${PIPELINE}policy: { guards: { max_deletes: lots } }\n`), errorClass: 'ConfigError', file: 'pipeline.yaml', where: /policy\.guards\.max_deletes: .*number/ },
  { label: 'pipeline target malformed', files: pipeline(PIPELINE.replace('{ group_id: 1 }', '{ group: { name: X } }')), errorClass: 'ConfigError', file: 'pipeline.yaml', where: /target/ },
  { label: 'pipeline mapping missing', files: pipeline(PIPELINE.replace('mapping.yaml', 'missing.yaml')), errorClass: 'ConfigError', file: 'pipeline.yaml', where: /mapping: mapping file .*missing\.yaml not found/ },
  { label: 'pipeline unknown format', files: pipeline(PIPELINE.replace('roster.csv', 'roster.dat')), errorClass: 'ConfigError', file: 'pipeline.yaml', where: /source\.format/ },
  { label: 'mapping JSON syntax', files: { 'pipeline.yaml': PIPELINE.replace('mapping.yaml', 'mapping.json'), 'mapping.json': '{"client_id": {"column": "ID"},' }, errorClass: 'ConfigError', file: 'mapping.json', where: /line \d+, column \d+: not valid YAML or JSON/ },
  { label: 'mapping unknown key', files: mapping(`${MAPPING}filters: []\n`), errorClass: 'ConfigError', file: 'mapping.yaml', where: /filters: unknown key/ },
  { label: 'mapping typo in a field key', files: mapping(MAPPING.replace('{ column: Email }', '{ column: Email, split_on: ";" }')), errorClass: 'ConfigError', file: 'mapping.yaml', where: /fields\.emails\.split_on: unknown key "split_on" \(line 4\)/ },
  { label: 'mapping unknown transform', files: mapping(MAPPING.replace('{ column: Name }', '{ column: Name, transforms: [titlecase] }')), errorClass: 'ConfigError', file: 'mapping.yaml', where: /fields\.name\.transforms\.0: .*trim/ },
  { label: 'mapping without name', files: mapping('client_id: { column: ID }\nfields:\n  emails: { column: Email }\n'), errorClass: 'ConfigError', file: 'mapping.yaml', where: /fields\.name: is required/ },
  { label: 'mapping client_id two sources', files: mapping(MAPPING.replace('{ column: ID }', '{ column: ID, from: email }')), errorClass: 'ConfigError', file: 'mapping.yaml', where: /client_id: give only one/ },
  { label: 'mapping filter without operator', files: mapping(`${MAPPING}skip_rows: [{ column: Level }]\n`), errorClass: 'ConfigError', file: 'mapping.yaml', where: /skip_rows\.0: give exactly one/ },
  { label: 'mapping unknown custom field', files: mapping(MAPPING.replace('Expertise level:', 'Expertise:')), errorClass: 'MappingError', file: 'mapping.yaml', where: /custom_fields\.Expertise: .*Did you mean "Expertise level"\? Available: "Expertise level", "Subject areas"/ },
  { label: 'mapping values to a missing option', files: mapping(MAPPING.replace('{ column: Level }', '{ column: Level, values: { Sr: Senor } }')), errorClass: 'MappingError', file: 'mapping.yaml', where: /custom_fields\.Expertise level\.values\.Sr: "Senor" is not an option/ },
  { label: 'mapping key unfit for data_kind', files: mapping(MAPPING.replace('{ column: Level }', '{ column: Level, decimal: "," }')), errorClass: 'MappingError', file: 'mapping.yaml', where: /custom_fields\.Expertise level\.decimal: .*single_option field/ },
  { label: 'mapping column not in header', files: mapping(MAPPING.replace('{ column: Email }', '{ column: E-mail }')), errorClass: 'MappingError', file: 'mapping.yaml', where: /fields\.emails: column "E-mail" is not in the header of .*roster\.csv; did you mean "Email"\?/ },
  { label: 'roster missing', files: { 'roster.csv': '' , 'pipeline.yaml': PIPELINE.replace('roster.csv', 'gone.csv') }, errorClass: 'SourceError', file: 'gone.csv', where: /not found/ },
  { label: 'roster empty', files: { 'roster.csv': '' }, errorClass: 'SourceError', file: 'roster.csv', where: /empty/ },
  { label: 'CSV renamed .xlsx', files: { 'roster.xlsx': CSV, 'pipeline.yaml': PIPELINE.replace('roster.csv', 'roster.xlsx') }, errorClass: 'SourceError', file: 'roster.xlsx', where: /roster\.xlsx/ },
  { label: 'corrupt xlsx zip', files: { 'roster.xlsx': Buffer.from('PK\u0003\u0004garbage-not-a-zip'), 'pipeline.yaml': PIPELINE.replace('roster.csv', 'roster.xlsx') }, errorClass: 'SourceError', file: 'roster.xlsx', where: /roster\.xlsx/ },
  { label: 'sheet not in workbook', files: { 'pipeline.yaml': PIPELINE.replace('{ file: roster.csv }', '{ file: editorial.xlsx, xlsx: { sheet: Board } }') }, errorClass: 'SourceError', file: 'editorial.xlsx', where: /Board/ },
  { label: 'header row beyond the file', files: pipeline(PIPELINE.replace('{ file: roster.csv }', '{ file: roster.csv, csv: { header_row: 9 } }')), errorClass: 'SourceError', file: 'roster.csv', where: /header_row is 9/ },
  { label: 'fields file missing', fields: 'no-fields.json', errorClass: 'ConfigError', file: 'no-fields.json', where: /fields file not found/ },
  { label: 'fields file not a listing', files: { 'bad-fields.json': '{"folder": []}' }, fields: 'bad-fields.json', errorClass: 'ConfigError', file: 'bad-fields.json', where: /author_from_group: not a custom-fields listing/ },
];

let fieldsFile: string;
beforeAll(() => {
  fieldsFile = writeFieldsFile(tempDir());
});

function setUp(c: Case): string {
  const dir = tempDir('rostersync-bad-');
  const files: Record<string, string | Buffer> = { 'roster.csv': CSV, 'mapping.yaml': MAPPING, 'pipeline.yaml': PIPELINE, ...c.files };
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  copyFileSync(join(ROOT, 'samples/editorial.xlsx'), join(dir, 'editorial.xlsx'));
  return dir;
}

const pipelineArg = (c: Case) => (c.label === 'pipeline file missing' ? 'nope.yaml' : 'pipeline.yaml');

describe('bad input', () => {
  it(`covers at least 20 broken files and mappings (${CASES.length})`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(20);
  });

  it.each(CASES.map((c) => [c.label, c] as const))('%s', async (_label, c) => {
    const dir = setUp(c);
    const fields = c.fields ? join(dir, c.fields) : fieldsFile;

    // the library throws the documented class
    let thrown: unknown;
    try {
      const p = loadPipeline(join(dir, pipelineArg(c)));
      await validatePipeline(p, { customFields: loadFieldsFile(fields) });
    } catch (error) {
      thrown = error;
    }
    expect(thrown, 'expected an error').toBeInstanceOf(Error);
    expect((thrown as Error).name).toBe(c.errorClass);

    // the CLI prints one clear message, no stack, exit 1
    const { code, stdout, stderr } = await runCli(['validate', pipelineArg(c), '--fields-file', fields], { cwd: dir });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^error: /);
    expect(stderr).toContain(c.file);
    expect(stderr).toMatch(c.where);
    expect(stderr).toMatch(/\nhint: /);
    expect(stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(stderr).not.toContain('unexpected failure');
  });
});
