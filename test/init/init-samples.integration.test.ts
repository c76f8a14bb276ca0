/**
 * `rostersync init --yes` on every sample roster and on a roster built from public data: the
 * pipeline it writes validates at once, and its mapping matches a hand-written one column by
 * column (test/fixtures/init/). One run reads the custom fields from the emulator over HTTP.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { openSource } from '../../src/sources/index.js';
import { emulatorEnv } from '../support/cli.js';
import { columnView, INIT_CASES } from '../support/init-columns.js';
import { ROOT, runCli, tempDir, writeFieldsFile } from '../validate/helpers.js';

/**
 * Columns where init knowingly differs from the person: "Prof" means "Expert" only to someone who
 * knows the old database, so init leaves it out of values: and lists it as unsure.
 */
const KNOWN_MISSES: Record<string, string[]> = { 'legacy-export': ['Level'] };

let dir: string;
let fieldsFile: string;
let emulator: RunningEmulator;
beforeAll(async () => {
  dir = tempDir('rostersync-init-');
  fieldsFile = writeFieldsFile(dir);
  emulator = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emulator?.close();
});

async function headersOf(roster: string, sheet?: string, headerRow = 1, encoding = 'auto'): Promise<string[]> {
  const source = await openSource(
    roster.endsWith('.xlsx') ? { file: roster, xlsx: { sheet: sheet ?? 1, header_row: headerRow } } : { file: roster, csv: { encoding, delimiter: 'auto', header_row: headerRow } },
    { baseDir: ROOT },
  );
  source.close?.();
  return source.headers;
}

describe('init --yes on each roster', () => {
  it.each(INIT_CASES)('$name: validates at once and maps columns as a person would', async (c) => {
    const pipeline = join(dir, `${c.name}.pipeline.yaml`);
    const mapping = join(dir, `${c.name}.mapping.yaml`);
    const sheet = 'sheet' in c ? ['--sheet', c.sheet] : [];
    const encoding = 'encoding' in c ? ['--encoding', c.encoding] : [];
    const init = await runCli(['init', c.roster, ...sheet, ...encoding, '--fields-file', fieldsFile, '--yes', '--pipeline', pipeline, '--mapping', mapping]);
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);

    // Config accepted: 0 (every row valid) or 2 (rows rejected for their data), never 1.
    const validate = await runCli(['validate', pipeline, '--fields-file', fieldsFile, '--json']);
    expect(validate.stderr).toBe('');
    expect([0, 2]).toContain(validate.code);
    const counts = (JSON.parse(validate.stdout) as { counts: { valid: number } }).counts;
    expect(counts.valid).toBeGreaterThan(0);

    const headers = await headersOf(c.roster, 'sheet' in c ? c.sheet : undefined, c.name === 'legacy-export' ? 2 : 1, 'encoding' in c ? c.encoding : 'auto');
    const actual = columnView(mapping, headers);
    const expected = columnView(join(ROOT, c.expected), headers);
    const misses = KNOWN_MISSES[c.name] ?? [];
    for (const column of headers) {
      if (misses.includes(column)) expect(actual[column], column).not.toBe(expected[column]);
      else expect(actual[column], column).toBe(expected[column]);
    }
  });
});

describe('init refusals and the service listing', () => {
  it('reads the custom fields from the emulator over HTTP', async () => {
    const pipeline = join(dir, 'svc.pipeline.yaml');
    const mapping = join(dir, 'svc.mapping.yaml');
    const init = await runCli(['init', 'samples/reviewers.csv', '--yes', '--pipeline', pipeline, '--mapping', mapping], { env: emulatorEnv(emulator) });
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    expect(readFileSync(mapping, 'utf8')).toContain('"Availability":');
    const validate = await runCli(['validate', pipeline], { env: emulatorEnv(emulator) });
    expect(validate.code).toBe(0);
  });

  it('refuses off a terminal without --yes, and writes nothing', async () => {
    const pipeline = join(dir, 'no-yes.pipeline.yaml');
    const { code, stderr } = await runCli(['init', 'samples/reviewers.csv', '--fields-file', fieldsFile, '--pipeline', pipeline, '--mapping', join(dir, 'no-yes.mapping.yaml')]);
    expect(code).toBe(1);
    expect(stderr).toContain('--yes');
    expect(existsSync(pipeline)).toBe(false);
  });

  it('never overwrites a file without --force', async () => {
    const pipeline = join(dir, 'kept.pipeline.yaml');
    const mapping = join(dir, 'kept.mapping.yaml');
    writeFileSync(mapping, '# mine\n');
    const args = ['init', 'samples/reviewers.csv', '--fields-file', fieldsFile, '--yes', '--pipeline', pipeline, '--mapping', mapping];
    const refused = await runCli(args);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--force');
    expect(readFileSync(mapping, 'utf8')).toBe('# mine\n');
    expect(existsSync(pipeline)).toBe(false);
    const forced = await runCli([...args, '--force']);
    expect(forced.code).toBe(0);
    expect(readFileSync(mapping, 'utf8')).toContain('client_id:');
    expect(statSync(pipeline).isFile()).toBe(true);
  });

  it('an undeclared Western legacy export is read without a question', async () => {
    const run = await runCli(['init', 'samples/legacy-export.csv', '--fields-file', fieldsFile, '--yes', '--pipeline', join(dir, 'w.p.yaml'), '--mapping', join(dir, 'w.m.yaml')]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });

  it('a legacy file whose bytes do not tell its encoding is refused, naming the --encoding flags', async () => {
    // One short Russian name in KOI8-R: too little text to tell the encodings apart for sure.
    const roster = join(dir, 'one-name.koi8-r.csv');
    writeFileSync(roster, Buffer.from([...Buffer.from('Name,Email\n'), 0xe0, 0xd2, 0xc9, 0xca, ...Buffer.from(',yuri@example.ru\n')]));
    const run = await runCli(['init', roster, '--fields-file', fieldsFile, '--yes', '--pipeline', join(dir, 'e.p.yaml'), '--mapping', join(dir, 'e.m.yaml')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('do not say for sure which encoding it was saved in');
    expect(run.stderr).toContain('--encoding koi8-r');
    expect(existsSync(join(dir, 'e.p.yaml'))).toBe(false);
  });

  it('prints what it was unsure of', async () => {
    const { stdout } = await runCli(['init', 'samples/legacy-export.csv', '--encoding', 'windows-1252', '--fields-file', fieldsFile, '--yes', '--pipeline', join(dir, 'u.p.yaml'), '--mapping', join(dir, 'u.m.yaml')]);
    expect(stdout).toContain('Unsure (check these before the first sync):');
    expect(stdout).toContain('"Prof"');
    expect(stdout).toMatch(/Level → custom field "Expertise level"/);
  });
});

describe('init says what it did', () => {
  const initArgs = (roster: string, stem: string, ...more: string[]): string[] => ['init', roster, '--fields-file', fieldsFile, '--yes', '--pipeline', join(dir, `${stem}.pipeline.yaml`), '--mapping', join(dir, `${stem}.mapping.yaml`), ...more];

  it('--sheet 2 reads the second tab, as `sheet: 2` does in a pipeline; without --sheet it says the workbook has more', async () => {
    const second = await runCli(initArgs('samples/editorial.xlsx', 'sheet2', '--sheet', '2'));
    expect(second.code, second.stderr).toBe(0);
    expect(readFileSync(join(dir, 'sheet2.pipeline.yaml'), 'utf8')).toContain('sheet: "Editorial board"');
    const first = await runCli(initArgs('samples/editorial.xlsx', 'sheet1'));
    expect(first.stdout).toContain('The workbook has 2 worksheets; init read the first, "Active reviewers". The others: "Editorial board"');
  });

  it('a column named like a custom field whose values are none of its options is left out saying so', async () => {
    const roster = join(dir, 'areas.csv');
    writeFileSync(roster, 'ID,Name,Email,Subject areas\n1,Ada Lovelace,ada@x.org,Semantic Web\n2,Alan Turing,alan@y.org,Databases; Logic\n');
    const run = await runCli(initArgs(roster, 'areas'));
    expect(run.stdout).toContain('left   Subject areas: named like custom field "Subject areas", but its values match none of its options');
  });

  it('writes header_row as the line the header is on, and one note with that line', async () => {
    const roster = join(dir, 'titled.csv');
    writeFileSync(roster, 'Reviewer list 2024\n\nID,Name,Email\n1,Ada Lovelace,ada@x.org\n2,Alan Turing,alan@y.org\n');
    const run = await runCli(initArgs(roster, 'titled'));
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(dir, 'titled.pipeline.yaml'), 'utf8')).toContain('header_row: 3');
    expect(run.stdout).toContain('The header row is line 3');
    expect(run.stdout).not.toMatch(/\(line 2\)/);
    const validate = await runCli(['validate', join(dir, 'titled.pipeline.yaml'), '--fields-file', fieldsFile, '--json']);
    expect(JSON.parse(validate.stdout).counts.valid).toBe(2);
  });

  it('the pipeline comment names the key that selects an existing group, and the schema accepts it', async () => {
    await runCli(initArgs('samples/reviewers.csv', 'gid'));
    const text = readFileSync(join(dir, 'gid.pipeline.yaml'), 'utf8');
    expect(text).toContain('`group_id: <its id>`');
    expect(text).not.toContain('`id:`');
  });
});
