import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserFacingError } from '../../src/errors/user-facing-error.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { RECORDS_PER_PAGE } from '../../src/report/html.js';
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

  it('pages through more records than a page holds: report.html the first RECORDS_PER_PAGE, records/page-N.html the rest, each 0600', async () => {
    const total = 3 * RECORDS_PER_PAGE + 3;
    const records = Array.from({ length: total }, (_, i) => aRecord({ clientId: `EXP-${i}` }));
    const { files } = await writeReport(aReport({ records }), { dir: root, env: {} });
    const html = await readFile(files.html, 'utf8');
    expect(html).toContain(`Records 1–5,000 of 15,003, page 1 of 4`);
    expect(html).toContain(`>EXP-${RECORDS_PER_PAGE - 1}<`);
    expect(html).not.toContain(`>EXP-${RECORDS_PER_PAGE}<`);
    expect(html).toContain('<a href="records/page-2.html" rel="next">next ›</a>');
    expect((await readdir(join(root, 'records'))).sort()).toEqual(['page-2.html', 'page-3.html', 'page-4.html']);
    const second = await readFile(join(root, 'records', 'page-2.html'), 'utf8');
    expect(second).toContain(`>EXP-${RECORDS_PER_PAGE}<`);
    expect(second).toContain(`>EXP-${2 * RECORDS_PER_PAGE - 1}<`);
    expect(second).not.toContain(`>EXP-${2 * RECORDS_PER_PAGE}<`);
    expect(second).toContain('<a href="../report.html#changes">« first</a>');
    const last = await readFile(join(root, 'records', 'page-4.html'), 'utf8');
    expect(last).toContain('Records 15,001–15,003 of 15,003, page 4 of 4');
    expect(last).toContain(`>EXP-${total - 1}<`);
    expect(await modeOf(join(root, 'records', 'page-4.html'))).toBe(0o600);
    // A report that lists every record (no records.jsonl) keeps them all in report.json.
    expect((JSON.parse(await readFile(files.json, 'utf8')) as { records: unknown[] }).records).toHaveLength(total);
  });

  it('streams every record to records.jsonl, one object a line, when the report lists only some', async () => {
    const all = Array.from({ length: 7 }, (_, i) => aRecord({ clientId: `EXP-${i}` }));
    const report = aReport({ records: all.slice(0, 2) });
    report.recordsOmitted = 5;
    report.recordsFile = 'records.jsonl';
    // Read afresh for each file it feeds (records.jsonl, then the HTML pages).
    let reads = 0;
    const { files } = await writeReport(report, { dir: root, env: {}, records: () => (reads++, all) });
    expect(files.records).toBe(join(root, 'records.jsonl'));
    expect(await modeOf(files.records!)).toBe(0o600);
    const lines = (await readFile(files.records!, 'utf8')).trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual(all);
    expect(reads).toBe(1);
    const json = JSON.parse(await readFile(files.json, 'utf8')) as { records: unknown[]; recordsOmitted: number; recordsFile: string };
    expect(json.records).toHaveLength(2);
    expect([json.recordsOmitted, json.recordsFile]).toEqual([5, 'records.jsonl']);
    expect(await readFile(files.md, 'utf8')).toContain('### Changes (first 2 of 7)');
    expect((await readdir(root)).sort()).toEqual(['records.jsonl', 'report.html', 'report.json', 'report.md']);
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
