import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors/config-error.js';
import { loadMapping, loadPipeline } from '../../src/config/load.js';

const ROOT = resolve(import.meta.dirname, '../..');
const sha = (path: string) => createHash('sha256').update(readFileSync(path, 'utf8')).digest('hex');

function tmp(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'rostersync-config-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const MAPPING = 'client_id: { column: ID }\nfields:\n  name: { column: Name }\n';
const PIPELINE = 'source: { file: r.csv }\nmapping: m.yaml\ntarget: { group_id: 3 }\n';

describe('loadPipeline', () => {
  it('resolves the sample pipeline: absolute paths, name, hashes, defaults', () => {
    const p = loadPipeline(join(ROOT, 'pipelines/legacy.yaml'));
    expect(p.name).toBe('legacy');
    expect(p.file).toBe(join(ROOT, 'pipelines/legacy.yaml'));
    expect(p.source).toMatchObject({ file: join(ROOT, 'samples/legacy-export.csv'), format: 'csv', csv: { header_row: 2, delimiter: ';' } });
    expect(p.mappingFile).toBe(join(ROOT, 'mappings/legacy.yaml'));
    expect(p.hash).toBe(sha(join(ROOT, 'pipelines/legacy.yaml')));
    expect(p.mappingHash).toBe(sha(join(ROOT, 'mappings/legacy.yaml')));
    expect(p.config.policy.guards.max_deletes).toBe(50);
    expect(p.mapping.duplicate_client_ids).toBe('reject');
  });

  it('uses name: when given', () => {
    expect(loadPipeline(join(ROOT, 'pipelines/demo.yaml')).name).toBe('demo');
  });

  it('reads JSON pipeline and mapping files', () => {
    const dir = tmp({
      'p.json': JSON.stringify({ source: { file: 'r.xlsx', xlsx: { sheet: 'Board' } }, mapping: 'm.json', target: { group_id: 1 } }),
      'm.json': JSON.stringify({ client_id: { from: 'email' }, fields: { name: { column: 'N' }, emails: { column: 'E' } } }),
    });
    const p = loadPipeline(join(dir, 'p.json'));
    expect(p.source.format).toBe('xlsx');
    expect(p.mapping.client_id).toEqual({ from: 'email', transforms: ['trim'], prefix: '' });
  });

  it.each([
    ['unknown top-level key', `${PIPELINE}sorce: x\n`, 'sorce', /unknown key "sorce" \(line 4\)/],
    ['unknown nested key', PIPELINE.replace('{ file: r.csv }', '{ file: r.csv, delimiter: ";" }'), 'source.delimiter', /unknown key/],
    ['wrong type', `${PIPELINE}policy: { max_rps: fast }\n`, 'policy.max_rps', /expected number/],
    ['bad enum', `${PIPELINE}policy: { mode: sync }\n`, 'policy.mode', /upsert|mirror/],
    ['missing key', 'source: { file: r.csv }\ntarget: { group_id: 3 }\n', 'mapping', /is required/],
    // The forms it accepts, and the nearest with the key to rename.
    ['target of neither form', PIPELINE.replace('{ group_id: 3 }', '{ id: 3 }'), 'target', /accepted form: \{ group_id, share\? \} or \{ group, share\? \}; nearest: \{ group_id, share\? \} \("id" → "group_id"\)/],
    ['target with a misspelt group', PIPELINE.replace('{ group_id: 3 }', '{ gruop: { name: G, owner_team: T } }'), 'target', /nearest: \{ group, share\? \} \("gruop" → "group"\)/],
    ['bad name', `${PIPELINE}name: "my pipeline"\n`, 'name', /letters, digits/],
    ['unknown extension', PIPELINE.replace('r.csv', 'r.dat'), 'source.format', /format: csv/],
    ['csv options on xlsx', PIPELINE.replace('{ file: r.csv }', '{ file: r.xlsx, csv: { delimiter: ";" } }'), 'source.csv', /CSV options/],
  ])('%s → ConfigError at %s', (_label, text, path, message) => {
    const dir = tmp({ 'p.yaml': text, 'm.yaml': MAPPING });
    const error = configError(() => loadPipeline(join(dir, 'p.yaml')));
    const problem = error.problems.find((p) => p.path === path);
    expect(problem, JSON.stringify(error.problems)).toBeDefined();
    expect(problem!.message).toMatch(message);
    expect(error.file).toBe(join(dir, 'p.yaml'));
    expect(error.exitCode).toBe(1);
  });

  it('points at the line of a YAML syntax error', () => {
    const dir = tmp({ 'p.yaml': 'source:\n  file: r.csv\n mapping: [unclosed\n' });
    const error = configError(() => loadPipeline(join(dir, 'p.yaml')));
    expect(error.message).toMatch(/line \d+, column \d+: not valid YAML or JSON/);
  });

  it('refuses duplicate keys', () => {
    const dir = tmp({ 'p.yaml': `${PIPELINE}mapping: other.yaml\n` });
    expect(configError(() => loadPipeline(join(dir, 'p.yaml'))).message).toMatch(/not valid YAML|unique/i);
  });

  it('names the mapping key when the mapping file is missing', () => {
    const dir = tmp({ 'p.yaml': PIPELINE });
    const error = configError(() => loadPipeline(join(dir, 'p.yaml')));
    expect(error.file).toBe(join(dir, 'p.yaml'));
    expect(error.problems[0]).toMatchObject({ path: 'mapping', message: expect.stringContaining('not found') });
  });

  it('errors in the mapping name the mapping file', () => {
    const dir = tmp({ 'p.yaml': PIPELINE, 'm.yaml': `${MAPPING}extra: 1\n` });
    const error = configError(() => loadPipeline(join(dir, 'p.yaml')));
    expect(error.file).toBe(join(dir, 'm.yaml'));
    expect(error.problems).toEqual([{ path: 'extra', message: 'unknown key "extra" (line 4)' }]);
  });
});

describe('loadMapping: schema errors with paths', () => {
  it.each([
    ['feilds:\n  name: { column: N }\nclient_id: { column: ID }\n', ['fields', 'feilds']],
    [MAPPING.replace('{ column: Name }', '{ colum: Name }'), ['fields.name.colum', 'fields.name']],
    [`${MAPPING}  emails: { column: E, transforms: [titlecase] }\n`, ['fields.emails.transforms.0']],
    [MAPPING.replace('{ column: ID }', '{ column: ID, from: orcid }'), ['client_id']],
    [MAPPING.replace('client_id: { column: ID }\n', ''), ['client_id']],
    [`${MAPPING}skip_rows:\n  - { column: Active }\n`, ['skip_rows.0']],
    [`${MAPPING}skip_rows:\n  - { column: Active, equals: x, in: [y] }\n`, ['skip_rows.0']],
    [`${MAPPING}custom_fields:\n  Last review date: { column: D, date_formats: [YYYY-DD-MM] }\n`, ['custom_fields.Last review date.date_formats.0']],
    [`${MAPPING}custom_fields:\n  Notes: { column: N, decimal: ";" }\n`, ['custom_fields.Notes.decimal']],
    [`${MAPPING}duplicate_client_ids: newest\n`, ['duplicate_client_ids']],
    [`${MAPPING}version: 2\n`, ['version']],
    [MAPPING.replace('{ column: Name }', '{ column: Name, columns: [A, B] }'), ['fields.name']],
  ])('%j → %j', (text, paths) => {
    const dir = tmp({ 'm.yaml': text });
    const error = configError(() => loadMapping(join(dir, 'm.yaml')));
    expect(error.problems.map((p) => p.path)).toEqual(paths);
    expect(error.message).toContain(join(dir, 'm.yaml'));
  });

  it('loads every sample mapping', () => {
    for (const name of ['reviewers', 'legacy', 'editorial-board', 'editorial-reviewers']) {
      expect(() => loadMapping(join(ROOT, `mappings/${name}.yaml`))).not.toThrow();
    }
  });
});
