/**
 * One measured task per process, so peak RSS (`process.resourceUsage().maxRSS`) belongs to that
 * task alone. Prints one JSON line: { task, ms, maxRssMb, ...task figures }. Time is measured
 * in-process around the task (module loading excluded, identically for every task).
 *
 * Plain JavaScript run by plain `node`, as users run rostersync: the plan imports the compiled
 * build (dist/, which `npm run bench` builds first), and nothing loads tsx, which put about 35 MB
 * and a loader thread into every measured process and slowed the bare reads by about 10 %.
 * exceljs is imported only by the task that uses it: loaded, it adds about 130 MB to peak RSS.
 *
 *   node bench/measure.mjs plan <pipeline.yaml> <stateDir> <fields.json> <reportDir>
 *   node bench/measure.mjs plan-full-path <pipeline.yaml> <stateDir> <fields.json> <reportDir>   (--no-fast-path)
 *   node bench/measure.mjs bare-csv <roster.csv>
 *   node bench/measure.mjs bare-csv-columns <roster.csv>
 *   node bench/measure.mjs bare-xlsx <roster.xlsx>
 *   node bench/measure.mjs read-csv <roster.csv> [<dist dir>]   (the reader alone, from this or another build)
 *   node bench/measure.mjs first-sync <pipeline.yaml> <stateDir> <reportDir> <baseUrl>   (a real `sync --create-group`)
 */
import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The plan as `rostersync plan`/`sync --dry-run` runs it, from the compiled build. */
async function plan(pipelinePath, stateDir, fieldsFile, reportDir, fastPath = true) {
  const { runSync } = await import('../dist/sync/run-sync.js');
  const result = await runSync({
    fastPath,
    pipelinePath,
    // A dry run with a saved custom-fields listing makes no call; the URL is never contacted.
    service: { baseUrl: 'http://127.0.0.1:9', apiKey: 'demo-key-0123456789' },
    dryRun: true,
    // An empty state is a first run: the group is to be created (dry: nothing is).
    createGroup: true,
    stateDir,
    fieldsFile,
    reportDir,
  });
  return { exitCode: result.exitCode, valid: result.report.input.valid, counts: result.report.counts };
}

/**
 * A first `sync --create-group` as the CLI runs it, against an emulator in another process (its
 * memory is not this process's). No max_rps: the emulator runs without a limit, so the figure is
 * rostersync's own cost per record.
 */
async function firstSync(pipelinePath, stateDir, reportDir, baseUrl) {
  const { runSync } = await import('../dist/sync/run-sync.js');
  // Memory at the phase boundaries: once planned (the first outcome), once applied (the last), once
  // reported. `external` already holds the array buffers (Node's definition): not added twice.
  // `peakMb` is the peak RSS so far (VmHWM), so each phase's own peak shows where it rose.
  const mb = (bytes) => Math.round(bytes / 2 ** 20);
  const at = (usage = process.memoryUsage()) => ({
    rssMb: mb(usage.rss),
    heapMb: mb(usage.heapUsed),
    externalMb: mb(usage.external),
    arrayBuffersMb: mb(usage.arrayBuffers),
    peakMb: Math.round(process.resourceUsage().maxRSS / 1024),
  });
  const stages = {};
  const onProgress = (done, total) => {
    if (done === 1) stages.planned = at();
    if (done === total) stages.applied = at();
  };
  const result = await runSync({ pipelinePath, service: { baseUrl, apiKey: 'demo-key-0123456789' }, createGroup: true, stateDir, reportDir, onProgress });
  stages.reported = at();
  const failed = Object.values(result.report.counts).reduce((sum, byOutcome) => sum + (byOutcome.failed ?? 0), 0);
  return { exitCode: result.exitCode, created: result.report.counts.create.done ?? 0, failed, reportDir: result.written.dir, stages };
}

/** csv-parse with its defaults, streamed, one record at a time: the floor any CSV plan stands on. */
async function bareCsv(file, options = {}) {
  const { parse } = await import('csv-parse');
  let rows = 0;
  for await (const record of createReadStream(file).pipe(parse(options))) if (record) rows++;
  return { rows: options.columns ? rows : rows - 1 };
}

/** rostersync's CSV reader alone (decode, parse, rows as objects), from `dist` (another build's, to compare). */
async function readCsv(file, dist = '../dist') {
  const { openSource } = await import(`${dist}/sources/index.js`);
  const source = await openSource({ file }, { baseDir: process.cwd() });
  let rows = 0;
  let errors = 0;
  for await (const item of source.items) {
    if (item.kind === 'row') rows++;
    else errors++;
  }
  return { rows, errors };
}

/** The same WorkbookReader options our reader needs (dates need styles, see src/sources/xlsx/reader.ts). */
async function bareXlsx(file) {
  const { default: ExcelJS } = await import('exceljs');
  let rows = 0;
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(file, { worksheets: 'emit', sharedStrings: 'cache', styles: 'cache', hyperlinks: 'cache' });
  for await (const worksheet of reader) {
    for await (const row of worksheet) if (row.values) rows++;
    break;
  }
  return { rows: rows - 1 };
}

const [task, ...args] = process.argv.slice(2);
const tasks = {
  plan: () => plan(args[0], args[1], args[2], args[3]),
  'plan-full-path': () => plan(args[0], args[1], args[2], args[3], false),
  'bare-csv': () => bareCsv(args[0]),
  'bare-csv-columns': () => bareCsv(args[0], { columns: true }),
  'bare-xlsx': () => bareXlsx(args[0]),
  'first-sync': () => firstSync(args[0], args[1], args[2], args[3]),
  'read-csv': () => readCsv(args[0], args[1] ? pathToFileURL(resolve(args[1])).href : undefined),
};
if (!(task in tasks)) throw new Error(`unknown task ${task}`);
// Modules load before the clock starts, as for every task: only the work is timed.
if (task.startsWith('plan') || task === 'first-sync') await import('../dist/sync/run-sync.js');
else if (task === 'read-csv') await import(`${args[1] ? pathToFileURL(resolve(args[1])).href : '../dist'}/sources/index.js`);
else await import(task === 'bare-xlsx' ? 'exceljs' : 'csv-parse');
const started = performance.now();
const figures = await tasks[task]();
const ms = performance.now() - started;
process.stdout.write(`${JSON.stringify({ task, ms, maxRssMb: process.resourceUsage().maxRSS / 1024, ...figures })}\n`);
