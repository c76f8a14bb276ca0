/**
 * The bad-input corpus: broken rosters, mappings, pipeline files, saved plans, state
 * and service settings, each run through the real CLI (`main`, in-process) against a real
 * emulator. Every case asserts the documented exit code (README.md, "Exit codes"), a
 * message naming the location (file and row/column/key as relevant), no stack trace, and that
 * the service saw no write and no delete when the input was broken.
 *
 * The corpus lives in test/fixtures/bad/ (written by make-corpus.ts); the large cases are
 * generated into the case's temporary directory.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../src/errors/user-facing-error.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/server.js';
import type { StatsSnapshot } from '../src/emulator/runtime.js';
import { SqliteStateStore } from '../src/state/sqlite/sqlite-store.js';
import { writeMegabyteCell, writeSharedStringsBomb, writeTenThousandColumns } from './fixtures/bad/make-corpus.js';
import { DEMO_API_KEY, runCli } from './support/cli.js';

const CORPUS = fileURLToPath(new URL('./fixtures/bad/', import.meta.url));
const API_KEY = DEMO_API_KEY;
/** The group the base pipeline targets (the emulator's default fixture has it). */
const GROUP = 501;

let emulator: RunningEmulator;
let root: string;
let caseCount = 0;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  root = mkdtempSync(join(tmpdir(), 'rostersync-bad-input-'));
});

afterAll(async () => {
  await emulator?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  output: string;
}

/** One case directory and the CLI pointed at the emulator. */
interface CaseDir {
  dir: string;
  run(argv: string[], env?: Record<string, string | undefined>): Promise<CliRun>;
  write(name: string, content: string | Buffer): void;
  read(name: string): string;
}

type FileSource = string | ((path: string) => void | Promise<void>);

interface BadCase {
  name: string;
  /** Files of the case directory, by name: a corpus path (relative to fixtures/bad/) or a writer. */
  files?: Record<string, FileSource>;
  /** Steps before the stats are taken, e.g. a first good sync or a saved plan to edit. */
  before?: (c: CaseDir) => Promise<void>;
  argv: string[];
  env?: Record<string, string | undefined>;
  exit: number;
  /** Each must match stdout + stderr: the message, with its location. */
  says: RegExp[];
  /** Write calls the service may see (creates of the valid rows of a partly bad roster). @default 0 */
  /**
   * Write calls the service saw. The base pipeline targets group 501, which it did not create:
   * each new record costs a GET answered 404 and a full POST (create-if-absent): one write.
   */
  writes?: number;
  /** Checks on files the run wrote (rejected.csv), by name in the case directory. */
  wrote?: Record<string, RegExp[]>;
  /** client_ids (with the mapping's `bad-` prefix) that must not exist in the group afterwards. */
  absent?: string[];
  /** client_ids that must exist in the group afterwards, spelled exactly so. */
  present?: string[];
}

const BASE_FILES: Record<string, FileSource> = {
  'pipeline.yaml': 'base/pipeline.yaml',
  'mapping.yaml': 'base/mapping.yaml',
  'roster.csv': 'base/roster.csv',
  'roster.xlsx': 'base/roster.xlsx',
};

async function makeCaseDir(files: Record<string, FileSource>): Promise<CaseDir> {
  const dir = join(root, `case-${++caseCount}`);
  mkdirSync(dir, { recursive: true });
  for (const [name, source] of Object.entries({ ...BASE_FILES, ...files })) {
    const target = join(dir, name);
    mkdirSync(join(target, '..'), { recursive: true });
    if (typeof source === 'string') copyFileSync(join(CORPUS, source), target);
    else await source(target);
  }
  return {
    dir,
    async run(argv, env = {}) {
      const merged: NodeJS.ProcessEnv = { SERVICE_BASE_URL: emulator.url, SERVICE_API_KEY: API_KEY, NO_COLOR: '1', ...env };
      for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key];
      const { code, stdout, stderr } = await runCli(argv, { env: merged, cwd: dir });
      return { code, stdout, stderr, output: `${stdout}\n${stderr}` };
    },
    write: (name, content) => writeFileSync(join(dir, name), content),
    read: (name) => readFileSync(join(dir, name), 'utf8'),
  };
}

async function emulatorStats(): Promise<StatsSnapshot> {
  const response = await fetch(`${emulator.url}/_emulator/stats`);
  return (await response.json()) as StatsSnapshot;
}

function deletes(stats: StatsSnapshot): number {
  return Object.entries(stats.calls)
    .filter(([route]) => route.startsWith('DELETE '))
    .reduce((sum, [, byStatus]) => sum + Object.values(byStatus).reduce((a, b) => a + b, 0), 0);
}

async function recordExists(clientId: string): Promise<boolean> {
  const response = await fetch(`${emulator.url}/api/external/author-from-group/${GROUP}/${encodeURIComponent(clientId)}/`, {
    headers: { 'X-ApiKey': API_KEY },
  });
  await response.arrayBuffer();
  return response.status === 200;
}

/** Edits the saved plan `plan.json` of a case directory. */
function editPlan(c: CaseDir, edit: (plan: Record<string, any>) => void): void {
  const plan = JSON.parse(c.read('plan.json')) as Record<string, any>;
  edit(plan);
  c.write('plan.json', JSON.stringify(plan, null, 2));
}

async function savePlan(c: CaseDir): Promise<void> {
  const made = await c.run(['plan', 'pipeline.yaml', '--create-group', '--out', 'plan.json', '--report-dir', 'plan-report']);
  expect(made.code, made.output).toBe(EXIT.ok);
}

/** The base roster's header and `count` good rows (ids R1..), for the large generated cases. */
function baseRows(count: number): string {
  const header = readFileSync(join(CORPUS, 'base/roster.csv'), 'utf8').split('\n')[0]!;
  const rows = Array.from({ length: count }, (_, i) => `R${i + 1},Person,Number${i + 1},p${i + 1}@example.org,,Somewhere,Junior,Statistics,1,,Available,,Yes`);
  return `${header}\n${rows.join('\n')}\n`;
}

const validate = ['validate', 'pipeline.yaml'];
const sync = ['sync', 'pipeline.yaml', '--create-group', '--report-dir', 'report'];
const cases: BadCase[] = [
  // --- rosters that cannot be read: exit 1, nothing written ---------------------------------------
  { name: 'empty CSV', files: { 'roster.csv': 'rosters/empty.csv' }, argv: sync, exit: EXIT.usage, says: [/roster\.csv is empty/] },
  { name: 'CSV holding only a BOM', files: { 'roster.csv': 'rosters/bom-only.csv' }, argv: validate, exit: EXIT.usage, says: [/roster\.csv is empty/] },
  { name: 'CSV of blank lines only', files: { 'roster.csv': 'rosters/blank-lines-only.csv' }, argv: sync, exit: EXIT.usage, says: [/roster\.csv has no header row: from line 1 on it holds only blank lines/] },
  { name: 'UTF-32 CSV', files: { 'roster.csv': 'rosters/utf32.csv' }, argv: sync, exit: EXIT.usage, says: [/roster\.csv is encoded as UTF-32/, /hint: .*UTF-8/] },
  { name: 'mixed UTF-8 and Windows-1252 rows', files: { 'roster.csv': 'rosters/mixed-encodings.csv' }, argv: sync, exit: EXIT.usage, says: [/roster\.csv mixes encodings: .*from line \d+/, /hint: Re-save the whole file in one encoding/] },
  { name: 'binary file named .csv', files: { 'roster.csv': 'rosters/binary.csv' }, argv: validate, exit: EXIT.usage, says: [/roster\.csv contains NUL bytes/] },
  { name: 'workbook named .csv', files: { 'roster.csv': 'rosters/xlsx-renamed.csv' }, argv: sync, exit: EXIT.usage, says: [/roster\.csv is a zip file/] },
  { name: 'CSV named .xlsx', files: { 'roster.xlsx': 'rosters/csv-renamed.xlsx', 'pipeline.yaml': 'base/pipeline-xlsx.yaml' }, argv: sync, exit: EXIT.usage, says: [/roster\.xlsx is not an Excel workbook/] },
  { name: 'truncated XLSX', files: { 'roster.xlsx': 'rosters/truncated.xlsx', 'pipeline.yaml': 'base/pipeline-xlsx.yaml' }, argv: sync, exit: EXIT.usage, says: [/roster\.xlsx is damaged/] },
  { name: 'corrupt XLSX', files: { 'roster.xlsx': 'rosters/corrupt.xlsx', 'pipeline.yaml': 'base/pipeline-xlsx.yaml' }, argv: sync, exit: EXIT.usage, says: [/roster\.xlsx/, /(damaged|could not be read as an Excel workbook)/] },
  {
    name: 'zip-bomb-like XLSX (huge shared strings)',
    files: { 'roster.xlsx': (path) => writeSharedStringsBomb(path, 100 * 1024 * 1024), 'pipeline.yaml': 'base/pipeline-xlsx.yaml' },
    argv: sync,
    exit: EXIT.usage,
    says: [/roster\.xlsx looks like a zip bomb: its part xl\/sharedStrings\.xml inflates from 0\.\d MB to 100\.0 MB/],
  },
  { name: 'wrong sheet name', files: { 'pipeline.yaml': 'pipelines/wrong-sheet.yaml' }, argv: sync, exit: EXIT.usage, says: [/roster\.xlsx has no sheet named "Reviewer"/, /"Reviewers", "Archive"/] },
  { name: 'sheet number past the last sheet', files: { 'pipeline.yaml': 'pipelines/sheet-number-too-high.yaml' }, argv: validate, exit: EXIT.usage, says: [/roster\.xlsx has 2 sheet\(s\), so there is no sheet number 7/] },
  { name: 'header row past the end of the file', files: { 'pipeline.yaml': 'pipelines/header-row-past-end.yaml' }, argv: sync, exit: EXIT.usage, says: [/roster\.csv: header_row is 40/] },
  { name: 'duplicate headers', files: { 'roster.csv': 'rosters/duplicate-headers.csv' }, argv: sync, exit: EXIT.usage, says: [/roster\.csv/, /"Email"/] },
  { name: 'blank header cell', files: { 'roster.csv': 'rosters/blank-header-cell.csv' }, argv: validate, exit: EXIT.usage, says: [/roster\.csv/, /column 12/] },
  { name: 'missing required column', files: { 'roster.csv': 'rosters/missing-column.csv' }, argv: sync, exit: EXIT.usage, says: [/mapping\.yaml/, /"Email"/, /roster\.csv/] },
  {
    name: 'mixed encodings under a declared UTF-8 are refused, naming the line',
    files: { 'pipeline.yaml': 'pipelines/explicit-utf8.yaml', 'roster.csv': 'rosters/mixed-encodings.csv' },
    argv: validate,
    exit: EXIT.usage,
    says: [/roster\.csv is not UTF-8, but source\.csv\.encoding says it is: line \d+ has the byte 0x[0-9A-F]{2}/, /hint: Re-save the file as "CSV UTF-8"/],
  },

  // --- rows that cannot be mapped: validate exits 2 naming row and column -------------------------
  { name: 'unclosed quote at EOF', files: { 'roster.csv': 'rosters/unclosed-quote-eof.csv' }, argv: validate, exit: EXIT.partial, says: [/roster\.csv row 5/, /quote/i] },
  { name: 'invalid ORCID checksum', files: { 'roster.csv': 'rosters/invalid-orcid.csv' }, argv: validate, exit: EXIT.partial, says: [/roster\.csv row 3, column "ORCID", value "0000-0001-5109-3701"/, /check digit/] },
  { name: 'impossible date 2023-02-30', files: { 'roster.csv': 'rosters/impossible-date.csv' }, argv: validate, exit: EXIT.partial, says: [/roster\.csv row 3, column "Last review", value "2023-02-30"/] },
  { name: 'unknown option label', files: { 'roster.csv': 'rosters/unknown-option.csv' }, argv: validate, exit: EXIT.partial, says: [/roster\.csv row 3, column "Expertise level", value "Guru"/, /Junior/, /Senior/, /Expert/] },
  { name: 'unknown multi-option label', files: { 'roster.csv': 'rosters/unknown-multi-option.csv' }, argv: validate, exit: EXIT.partial, says: [/roster\.csv row 4, column "Subject areas"/, /Astrology/] },
  { name: 'text in a number field', files: { 'roster.csv': 'rosters/not-a-number.csv' }, argv: validate, exit: EXIT.partial, says: [/roster\.csv row 3, column "Reviews completed", value "twelve"/] },
  { name: 'invalid email', files: { 'roster.csv': 'rosters/invalid-email.csv' }, argv: validate, exit: EXIT.partial, says: [/roster\.csv row 4, column "Email", value "grace at example\.org"/] },
  { name: 'missing name', files: { 'roster.csv': 'rosters/missing-name.csv' }, argv: validate, exit: EXIT.partial, says: [/roster\.csv row 3, column "First name/] },
  { name: 'duplicate client_ids', files: { 'roster.csv': 'rosters/duplicate-ids.csv' }, argv: validate, exit: EXIT.partial, says: [/roster\.csv row 3/, /roster\.csv row 5/, /bad-R2/] },
  { name: 'ragged row', files: { 'roster.csv': 'rosters/ragged-row.csv' }, argv: validate, exit: EXIT.partial, says: [/roster\.csv row 4/] },
  // A BOM before a data line must not end up in the client_id (it would be a new person next run).
  { name: 'BOM in the middle of the file', files: { 'roster.csv': 'rosters/bom-in-middle.csv' }, argv: sync, exit: EXIT.ok, says: [/3 valid/], writes: 3, present: ['bad-R3'] },
  {
    name: 'formula cells escaped in rejected.csv',
    files: { 'roster.csv': 'rosters/formulas.csv' },
    argv: [...validate, '--rejected-out', 'rejected.csv'],
    exit: EXIT.partial,
    says: [/roster\.csv row 5, column "Email", value "=1\+1"/, /row 8, column "Email", value "@evil"/],
    wrote: {
      'rejected.csv': [/,"'=HYPERLINK\(""http:\/\/evil\.example"",""click""\)",/, /,'=1\+1,/, /,'\+cmd,/, /,'\+SUM\(A1\),/, /,'-2\+3,/, /,'-cmd\|calc,/, /,'@SUM\(A1:A2\),/, /,'@evil,/],
    },
  },
  {
    name: 'rows rejected in a sync are not written',
    files: { 'roster.csv': 'rosters/unknown-option.csv' },
    argv: sync,
    exit: EXIT.partial,
    says: [/1 rejected/],
    writes: 2,
    absent: ['bad-R2'],
    wrote: { 'report/rejected.csv': [/Guru/, /Expertise level/, /(^|,)3,/m] },
  },
  {
    name: 'a sync of rows that are all bad writes nothing',
    files: { 'roster.csv': 'rosters/all-rows-bad.csv' },
    argv: sync,
    exit: EXIT.partial,
    says: [/3 rejected/],
    absent: ['bad-R1', 'bad-R2', 'bad-R3'],
    wrote: { 'report/rejected.csv': [/not-an-email/, /\[Email\]/] },
  },
  {
    name: '10,000 columns',
    files: { 'roster.csv': writeTenThousandColumns, 'mapping.yaml': 'mappings/missing-column.yaml' },
    argv: sync,
    exit: EXIT.usage,
    says: [/mapping\.yaml/, /"Institution"/, /"Extra 17" … and 9970 more/],
  },
  {
    name: 'a 1 MB cell',
    files: { 'roster.csv': writeMegabyteCell },
    argv: validate,
    exit: EXIT.partial,
    says: [/roster\.csv row 3, column "Email", value "x{10,}/],
  },

  // --- mapping files: exit 1 naming the key -------------------------------------------------------
  { name: 'unknown key in the mapping', files: { 'mapping.yaml': 'mappings/unknown-key.yaml' }, argv: sync, exit: EXIT.usage, says: [/mapping\.yaml/, /fields\.orcids\.colum: unknown key "colum" \(line \d+\)/] },
  { name: 'YAML syntax error in the mapping', files: { 'mapping.yaml': 'mappings/yaml-syntax.yaml' }, argv: validate, exit: EXIT.usage, says: [/mapping\.yaml/, /line \d+, column \d+: not valid YAML/] },
  { name: 'unknown transform', files: { 'mapping.yaml': 'mappings/unknown-transform.yaml' }, argv: sync, exit: EXIT.usage, says: [/mapping\.yaml/, /fields\.orcids\.transforms\.1/] },
  { name: 'unknown custom field name', files: { 'mapping.yaml': 'mappings/unknown-custom-field.yaml' }, argv: sync, exit: EXIT.usage, says: [/mapping\.yaml/, /Expertize level/, /Expertise level/] },
  { name: 'column missing from the roster', files: { 'mapping.yaml': 'mappings/missing-column.yaml' }, argv: validate, exit: EXIT.usage, says: [/mapping\.yaml/, /"Institution"/] },
  { name: 'option keys on a number field', files: { 'mapping.yaml': 'mappings/option-keys-on-number.yaml' }, argv: sync, exit: EXIT.usage, says: [/mapping\.yaml/, /Reviews completed/, /values/] },
  { name: 'value map to an unknown option', files: { 'mapping.yaml': 'mappings/unknown-value-map-target.yaml' }, argv: sync, exit: EXIT.usage, says: [/mapping\.yaml/, /Seniour/] },
  { name: 'client_id with two sources', files: { 'mapping.yaml': 'mappings/client-id-two-sources.yaml' }, argv: sync, exit: EXIT.usage, says: [/mapping\.yaml/, /client_id/] },
  { name: 'empty mapping', files: { 'mapping.yaml': 'mappings/empty.yaml' }, argv: sync, exit: EXIT.usage, says: [/mapping\.yaml: the mapping file is empty/] },
  { name: 'JSON mapping cut short', files: { 'mapping.yaml': 'mappings/json-cut-short.json' }, argv: validate, exit: EXIT.usage, says: [/mapping\.yaml/, /line \d+, column \d+: not valid YAML or JSON/] },

  // --- pipeline files: exit 1 naming the key ------------------------------------------------------
  { name: 'unknown key in the pipeline', files: { 'pipeline.yaml': 'pipelines/unknown-key.yaml' }, argv: sync, exit: EXIT.usage, says: [/pipeline\.yaml/, /policy\.dry_run: unknown key "dry_run" \(line \d+\)/] },
  { name: 'YAML syntax error in the pipeline', files: { 'pipeline.yaml': 'pipelines/yaml-syntax.yaml' }, argv: sync, exit: EXIT.usage, says: [/pipeline\.yaml/, /line \d+, column \d+: not valid YAML/] },
  { name: 'pipeline pointing to a missing mapping', files: { 'pipeline.yaml': 'pipelines/missing-mapping.yaml' }, argv: sync, exit: EXIT.usage, says: [/pipeline\.yaml: mapping: mapping file .*gone\.yaml not found/] },
  { name: 'pipeline pointing to a missing roster', files: { 'pipeline.yaml': 'pipelines/missing-roster.yaml' }, argv: sync, exit: EXIT.usage, says: [/Roster file not found: \S*exports\/roster-2024\.csv/] },
  { name: 'pipeline file missing', argv: ['sync', 'pipelines/nightly.yaml'], exit: EXIT.usage, says: [/nightly\.yaml: pipeline file not found/] },
  { name: 'wrong type in the pipeline', files: { 'pipeline.yaml': 'pipelines/wrong-type.yaml' }, argv: sync, exit: EXIT.usage, says: [/pipeline\.yaml/, /policy\.max_rps/] },
  { name: 'unknown policy mode', files: { 'pipeline.yaml': 'pipelines/unknown-mode.yaml' }, argv: sync, exit: EXIT.usage, says: [/pipeline\.yaml/, /policy\.mode/, /upsert/] },
  { name: 'roster extension that names no format', files: { 'pipeline.yaml': 'pipelines/unknown-extension.yaml' }, argv: sync, exit: EXIT.usage, says: [/pipeline\.yaml: source\.format: cannot tell the format of "roster\.dat"/] },
  { name: 'pipeline without a target', files: { 'pipeline.yaml': 'pipelines/no-target.yaml' }, argv: sync, exit: EXIT.usage, says: [/pipeline\.yaml: target: /] },
  { name: 'xlsx options on a CSV source', files: { 'pipeline.yaml': 'pipelines/xlsx-options-on-csv.yaml' }, argv: sync, exit: EXIT.usage, says: [/pipeline\.yaml: source\.xlsx: xlsx options given for a CSV source/] },

  // --- service settings -----------------------------------------------------------------------------
  { name: 'wrong API key', argv: sync, env: { SERVICE_API_KEY: 'wrong-key-0123456789' }, exit: EXIT.auth, says: [/401/] },
  { name: 'unreachable base URL', argv: sync, env: { SERVICE_BASE_URL: 'http://127.0.0.1:9' }, exit: EXIT.unavailable, says: [/127\.0\.0\.1:9/] },
  { name: 'plain http to a host off loopback', argv: sync, env: { SERVICE_BASE_URL: 'http://service.example.org' }, exit: EXIT.usage, says: [/refusing plain http:\/\/ to service\.example\.org/] },
  { name: 'no base URL at all', argv: validate, env: { SERVICE_BASE_URL: undefined }, exit: EXIT.usage, says: [/SERVICE_BASE_URL/] },
  // the credentials of a base URL are never echoed, even when the port is wrong.
  {
    name: 'base URL with credentials and a bad port',
    argv: sync,
    env: { SERVICE_BASE_URL: 'https://ops:Pa55word@service.example.org:99999' },
    exit: EXIT.usage,
    says: [/base URL "https:\/\/\[credentials\]@service\.example\.org:99999" is not a valid URL/],
  },
  { name: 'truncated custom-fields listing', files: { 'fields.json': 'fields/truncated.json' }, argv: [...sync, '--fields-file', 'fields.json'], exit: EXIT.usage, says: [/fields\.json: cannot read the custom-fields listing/] },
  { name: 'custom-fields listing of the wrong shape', files: { 'fields.json': 'fields/wrong-shape.json' }, argv: [...validate, '--fields-file', 'fields.json'], exit: EXIT.usage, says: [/fields\.json/, /author_from_group\.0/] },

  // --- saved plans ----------------------------------------------------------------------------------
  {
    name: 'plan file cut short',
    before: async (c) => {
      await savePlan(c);
      c.write('plan.json', c.read('plan.json').slice(0, 300));
    },
    argv: ['apply', 'plan.json'],
    exit: EXIT.usage,
    says: [/plan\.json: cannot read the plan file/],
    absent: ['bad-R1'],
  },
  {
    name: 'plan file with an action edited by hand',
    before: async (c) => {
      await savePlan(c);
      editPlan(c, (p) => (p.plan.items[0].action = 'upsert'));
    },
    argv: ['apply', 'plan.json'],
    exit: EXIT.usage,
    says: [/plan\.json: not a valid rostersync plan \(plan\.items\.0\.action/],
    absent: ['bad-R1'],
  },
  {
    name: 'plan file with a binding edited by hand',
    before: async (c) => {
      await savePlan(c);
      editPlan(c, (p) => (p.bindings.groupId = 502));
    },
    argv: ['apply', 'plan.json'],
    exit: EXIT.usage,
    says: [/plan\.json: the plan was changed after `rostersync plan` wrote it/],
    absent: ['bad-R1'],
  },
  {
    // Schema-valid, bindings intact: only the digest shows that the reviewed plan was changed.
    name: 'plan file with a value edited by hand',
    before: async (c) => {
      await savePlan(c);
      editPlan(c, (p) => (p.plan.items[0].body.emails = ['someone.else@example.org']));
    },
    argv: ['apply', 'plan.json'],
    exit: EXIT.usage,
    says: [/plan\.json: the plan was changed after `rostersync plan` wrote it/],
    absent: ['bad-R1', 'bad-R2', 'bad-R3'],
  },
  {
    name: 'plan file of another version',
    before: async (c) => {
      await savePlan(c);
      editPlan(c, (p) => (p.version = 99));
    },
    argv: ['apply', 'plan.json'],
    exit: EXIT.usage,
    says: [/plan\.json: plan file version 99 is not supported/],
  },
  {
    name: 'roster changed after the plan was saved',
    before: async (c) => {
      await savePlan(c);
      c.write('roster.csv', `${c.read('roster.csv')}R9,Edsger,Dijkstra,edsger@example.org,,UT Austin,Senior,Statistics,1,,Busy,,Yes\n`);
    },
    argv: ['apply', 'plan.json'],
    exit: EXIT.usage,
    says: [/plan\.json: the plan is stale: the source file content changed/],
    absent: ['bad-R1', 'bad-R9'],
  },
  { name: 'plan file that does not exist', argv: ['apply', 'plans/tonight.json'], exit: EXIT.usage, says: [/tonight\.json: cannot read the plan file/] },

  // --- state ----------------------------------------------------------------------------------------
  {
    name: 'state file from another pipeline',
    before: async (c) => {
      mkdirSync(join(c.dir, '.rostersync'), { recursive: true });
      SqliteStateStore.open(join(c.dir, '.rostersync', 'bad-input.sqlite'), 'editorial-board').close();
    },
    argv: sync,
    exit: EXIT.usage,
    says: [/bad-input\.sqlite: this state database belongs to pipeline "editorial-board", not "bad-input"/],
    absent: ['bad-R1'],
  },
  {
    name: 'state file that is not a database',
    files: { '.rostersync/bad-input.sqlite': 'state/not-sqlite.sqlite' },
    argv: sync,
    exit: EXIT.usage,
    says: [/bad-input\.sqlite: cannot open the state database/],
    absent: ['bad-R1'],
  },
  {
    name: 'header-only roster after a mirror sync deletes nothing',
    files: { 'pipeline.yaml': 'pipelines/mirror-new-group.yaml' },
    before: async (c) => {
      const first = await c.run(sync);
      expect(first.code, first.output).toBe(EXIT.ok);
      copyFileSync(join(CORPUS, 'rosters/header-only.csv'), join(c.dir, 'roster.csv'));
    },
    argv: sync,
    exit: EXIT.guard,
    says: [/guard empty_source tripped/, /--allow-empty-source/],
  },

  // --- stricter readers and mapping -------------------------------------------------------
  {
    name: 'NUL byte past the first 64 KB',
    files: { 'roster.csv': (path) => writeFileSync(path, Buffer.concat([Buffer.from(baseRows(1000)), Buffer.from('R9999,Nul,Byte\u0000,nul@example.org,,X,Junior,Statistics,1,,Available,,Yes\n')])) },
    argv: sync,
    exit: EXIT.usage,
    says: [/roster\.csv contains a NUL byte on line 1002/],
  },
  {
    name: 'invalid UTF-8 far into a file declared UTF-8 is refused by line',
    files: {
      'pipeline.yaml': 'pipelines/explicit-utf8.yaml',
      'roster.csv': (path) => writeFileSync(path, Buffer.concat([Buffer.from(baseRows(1000)), Buffer.from('R9999,Ren'), Buffer.from([0xe9]), Buffer.from('e,Late,late@example.org,,X,Junior,Statistics,1,,Available,,Yes\n')])),
    },
    argv: validate,
    exit: EXIT.usage,
    says: [/roster\.csv is not UTF-8, but source\.csv\.encoding says it is: line 1002 has the byte 0xE9/],
  },
  {
    name: 'a row with 100,000 cells beyond the header',
    files: { 'roster.csv': (path) => writeFileSync(path, `${baseRows(2)}R3,Wide,Row,wide@example.org,,X,Junior,Statistics,1,,Available,,Yes,${Array.from({ length: 100_000 }, (_, i) => `c${i}`).join(',')}\n`) },
    argv: validate,
    exit: EXIT.partial,
    says: [/roster\.csv row 4/, /100000 values beyond the header \(column 14: "c0", column 15: "c1", column 16: "c2", … and 99997 more\)/],
  },
  {
    name: 'a valid row and a rejected row with the same client_id',
    files: { 'roster.csv': 'rosters/valid-and-rejected-same-id.csv' },
    argv: validate,
    exit: EXIT.partial,
    says: [/roster\.csv row 2, column "Reviewer ID", value "bad-R1": client_id "bad-R1" is also used by rejected row 4/, /records valid +2/, /rows rejected +2/],
  },
  {
    name: 'a number a JSON number cannot carry exactly',
    files: { 'roster.csv': 'rosters/inexact-number.csv' },
    argv: validate,
    exit: EXIT.partial,
    says: [/roster\.csv row 3, column "Reviews completed", value "99999999999999999999"/, /would be sent as 100000000000000000000/],
  },
  {
    name: 'client_ids a URL path cannot carry',
    files: { 'roster.csv': 'rosters/client-ids-not-in-url.csv' },
    argv: validate,
    exit: EXIT.partial,
    says: [/roster\.csv row 3, column "Reviewer ID", value "bad-R2\/old": client_id contains "\/"/, /roster\.csv row 4, column "Reviewer ID", value "bad-R9+…?": client_id is 305 characters long; the service accepts at most 255/],
  },
  {
    name: 'a mapped custom field of a data_kind rostersync does not know',
    files: { 'mapping.yaml': 'mappings/unknown-kind-field.yaml', 'fields.json': 'fields/unknown-kind.json' },
    argv: [...validate, '--fields-file', 'fields.json'],
    exit: EXIT.usage,
    says: [/mapping\.yaml/, /custom_fields\.Notes \(rich text\): custom field "Notes \(rich text\)" has data_kind "rich_text", which rostersync cannot write/],
  },
];

describe('bad-input corpus', () => {
  it('has at least 40 cases with distinct names', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it.each(cases)('$name', async (badCase) => {
    await fetch(`${emulator.url}/_emulator/reset`, { method: 'POST' }).then((r) => r.arrayBuffer());
    const c = await makeCaseDir(badCase.files ?? {});
    if (badCase.before) await badCase.before(c);
    const before = await emulatorStats();

    const result = await c.run(badCase.argv, badCase.env);
    const after = await emulatorStats();

    expect(result.code, result.output).toBe(badCase.exit);
    for (const pattern of badCase.says) expect(result.output).toMatch(pattern);
    // No stack trace and no raw Node error: only `error:` / `hint:` lines for a person.
    expect(result.output).not.toMatch(/^\s+at /m);
    expect(result.output).not.toMatch(/^\w*Error: /m);
    expect(result.output).not.toMatch(/unexpected failure/);
    // Values are truncated (a 1 MB cell is not echoed) and the API key never reaches the output
    // (the setup hint may quote the emulator's public demo key as an example).
    expect(result.output.length).toBeLessThan(20_000);
    expect(result.output.replace(`SERVICE_API_KEY=${API_KEY}`, '')).not.toContain(API_KEY);

    expect(after.writes.total - before.writes.total).toBe(badCase.writes ?? 0);
    expect(deletes(after) - deletes(before)).toBe(0);
    for (const clientId of badCase.absent ?? []) expect(await recordExists(clientId), clientId).toBe(false);
    for (const clientId of badCase.present ?? []) expect(await recordExists(clientId), clientId).toBe(true);
    for (const [name, patterns] of Object.entries(badCase.wrote ?? {})) {
      expect(existsSync(join(c.dir, name)), name).toBe(true);
      const text = c.read(name);
      for (const pattern of patterns) expect(text).toMatch(pattern);
    }
  });
});
