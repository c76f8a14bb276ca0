import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserFacingError } from '../../src/errors.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { TABLE_MAX_ROWS } from '../../src/report/table.js';
import { reportJson, writeReport } from '../../src/report/write.js';
import { aChange, aRecord, aRejectedRow, aReport } from './builders.js';

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

describe('writeReport', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'rostersync-report-'));
  });
  afterEach(async () => {
    await chmod(root, 0o700).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });

  it('creates the directory 0700 and writes report.json, .md and .html, each 0600', async () => {
    const dir = join(root, 'reports', 'demo', 'run-1');
    const written = await writeReport(aReport(), { dir, env: {} });

    expect(written.dir).toBe(dir);
    expect(await modeOf(dir)).toBe(0o700);
    expect(Object.keys(written.files).sort()).toEqual(['html', 'json', 'md']);
    for (const path of Object.values(written.files)) expect(await modeOf(path)).toBe(0o600);
    // Atomic writes leave no temporary files behind.
    expect((await readdir(dir)).sort()).toEqual(['report.html', 'report.json', 'report.md']);
    expect(written.stepSummary).toBeUndefined();
  });

  it('report.json is the report object, pretty-printed, and parses back equal', async () => {
    const report = aReport({
      records: [
        aRecord({ clientId: 'EXP-1', changes: [aChange({ field: 'cf_12', label: 'Subject areas', before: ['a'], after: null, remote: ['a', 'b'] })] }),
        aRecord({ clientId: 'EXP-2', action: 'create', reason: 'new', changes: [aChange({ before: undefined })] }),
      ],
    });
    const { files } = await writeReport(report, { dir: root, env: {} });
    const text = await readFile(files.json, 'utf8');
    expect(text).toContain('\n  "runId": ');
    expect(JSON.parse(text)).toEqual(report);
    // Written a record at a time (a million would not fit one string), yet the very same text.
    expect(text).toBe(`${JSON.stringify(report, null, 2)}\n`);
    expect([...reportJson(aReport({ records: [] }))].join('')).toBe(`${JSON.stringify(aReport({ records: [] }), null, 2)}\n`);
    expect(await readFile(files.md, 'utf8')).toBe(renderMarkdown(report));
  });

  it('a page lists at most TABLE_MAX_ROWS changes and says where the rest are', async () => {
    const records = Array.from({ length: TABLE_MAX_ROWS + 3 }, (_, i) => aRecord({ clientId: `EXP-${i}` }));
    const { files } = await writeReport(aReport({ records }), { dir: root, env: {} });
    const html = await readFile(files.html, 'utf8');
    expect(html).toContain(`This page holds the first ${TABLE_MAX_ROWS} of ${TABLE_MAX_ROWS + 3} rows; open report.json for all of them.`);
    expect(html).toContain(`>EXP-${TABLE_MAX_ROWS - 1}<`);
    expect(html).not.toContain(`>EXP-${TABLE_MAX_ROWS}<`);
    expect((JSON.parse(await readFile(files.json, 'utf8')) as { records: unknown[] }).records).toHaveLength(TABLE_MAX_ROWS + 3);
  });

  it('writes rejected.csv (0600, formula cells escaped) only when rows were rejected', async () => {
    const withRejects = aReport({ rejectedRows: [aRejectedRow({ values: { Name: '=HYPERLINK("x")', 'Client ID': 'EXP-7' } })] });
    const written = await writeReport(withRejects, { dir: join(root, 'with'), env: {} });
    expect(written.files.rejectedCsv).toBe(join(root, 'with', 'rejected.csv'));
    const csvPath = written.files.rejectedCsv ?? '';
    expect(await modeOf(csvPath)).toBe(0o600);
    const csv = await readFile(csvPath, 'utf8');
    expect(csv).toContain(`"'=HYPERLINK(""x"")"`);
    expect(csv).toContain('invalid_orcid');
    expect((await readdir(join(root, 'with'))).sort()).toEqual(['rejected.csv', 'report.html', 'report.json', 'report.md']);

    const without = await writeReport(aReport(), { dir: join(root, 'without'), env: {} });
    expect(without.files.rejectedCsv).toBeUndefined();
    expect(await readdir(join(root, 'without'))).not.toContain('rejected.csv');
  });

  it('replaces an existing report file and leaves it 0600 whatever its previous mode', async () => {
    const path = join(root, 'report.md');
    await writeFile(path, 'old');
    await chmod(path, 0o644);
    await writeReport(aReport(), { dir: root, env: {} });
    expect(await modeOf(path)).toBe(0o600);
    expect(await readFile(path, 'utf8')).toContain('## rostersync');
  });

  it('appends report.md to $GITHUB_STEP_SUMMARY, keeping what earlier steps wrote', async () => {
    const summary = join(root, 'step-summary.md');
    await writeFile(summary, '# Earlier step\n');
    const report = aReport();
    const env = { GITHUB_STEP_SUMMARY: summary };

    const first = await writeReport(report, { dir: join(root, 'a'), env });
    await writeReport(report, { dir: join(root, 'b'), env });

    const md = renderMarkdown(report);
    expect(first.stepSummary).toBe(summary);
    expect(await readFile(summary, 'utf8')).toBe(`# Earlier step\n${md}\n${md}\n`);
  });

  it('reports an unwritable step summary as a warning, not a failure', async () => {
    const summary = join(root, 'missing-dir', 'summary.md');
    const written = await writeReport(aReport(), { dir: join(root, 'r'), env: { GITHUB_STEP_SUMMARY: summary } });
    expect(written.stepSummary).toBeUndefined();
    expect(written.warnings).toEqual([expect.stringContaining(`GITHUB_STEP_SUMMARY (${summary}): ENOENT`)]);
    expect(await modeOf(written.files.html)).toBe(0o600);
  });

  it.skipIf(process.getuid?.() === 0)('refuses an unwritable directory with a message naming it and a hint', async () => {
    await chmod(root, 0o500);
    const dir = join(root, 'sub');
    const attempt = writeReport(aReport(), { dir, env: {} });
    await expect(attempt).rejects.toBeInstanceOf(UserFacingError);
    await expect(attempt).rejects.toMatchObject({
      message: `Cannot write the report to ${dir} (EACCES).`,
      hint: expect.stringContaining('--report-dir'),
    });
  });

  it('refuses a directory path that is a file with a message naming it', async () => {
    const file = join(root, 'not-a-dir');
    await writeFile(file, '');
    await expect(writeReport(aReport(), { dir: file, env: {} })).rejects.toMatchObject({
      message: expect.stringMatching(/^Cannot write the report to .*not-a-dir.* \((EEXIST|ENOTDIR)\)\.$/),
    });
  });
});
