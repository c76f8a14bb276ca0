/**
 * `rostersync validate <pipeline>`: reads the roster, maps every row and explains each rejected
 * one, without writing anything to the service. Exit 0 when every row is valid (or the rejected
 * ones are within `policy.rejects`, as for sync), 2 when rows were rejected beyond it, 1 when the pipeline, mapping or file itself is wrong (thrown ConfigError,
 * MappingError or SourceError, printed by `main`).
 */
import { relative, resolve } from 'node:path';
import type { CustomFieldsListing } from '../../client/schemas.js';
import { loadPipeline } from '../../config/load.js';
import { EXIT } from '../../errors/user-facing-error.js';
import type { RowProblem } from '../../mapping/types.js';
import { loadFieldsFile } from '../../config/fields-file.js';
import { existingState } from '../../state/open.js';
import { judgeRejects } from '../../plan/rejects-tolerance.js';
import { rejectsVerdict, type RejectsVerdict } from '../../report/plan-text.js';
import { validatePipeline, type ValidationResult } from '../../sync/validate.js';
import { dialectFor, rejectedCsvRows, writeRejectedCsv } from '../../report/rejected-csv.js';
import type { Provenance } from '../../sources/types.js';
import { action, type CommandFactory } from '../command.js';
import type { CliIo } from '../io.js';
import { callOptions, connectService, withServiceOptions, type ServiceArgs } from '../service-options.js';

interface ValidateArgs extends ServiceArgs {
  pipeline?: string;
  'fields-file'?: string;
  'rejected-out'?: string;
  'state-dir'?: string;
}

/** Problems printed per code in the text output; the rest are counted (all are in --rejected-out). */
const SHOWN_PER_CODE = 10;

export const validateCommand: CommandFactory = (ctx) => ({
  command: 'validate <pipeline>',
  describe: 'Read and map a roster, and explain every rejected row (writes nothing to the service)',
  builder: (yargs) =>
    withServiceOptions(yargs)
      .positional('pipeline', { type: 'string', describe: 'Pipeline file (YAML or JSON)' })
      .option('fields-file', {
        type: 'string',
        describe: 'Saved custom-fields listing (`rostersync fields --json > fields.json`) instead of asking the service',
      })
      .option('rejected-out', { type: 'string', describe: 'Write rejected rows to this CSV (original columns + error columns), mode 0600' })
      .option('state-dir', { type: 'string', describe: 'State directory (overrides state_dir): its inventory is read, never written, so the same-person check answers as a plan would' })
      .example('$0 validate pipelines/legacy.yaml --rejected-out rejected.csv', 'explain every rejected row and save them to fix in Excel')
      .example('$0 fields --json > fields.json && $0 validate pipelines/legacy.yaml --fields-file fields.json', 'work offline from a saved listing'),
  handler: action(ctx, async (args: ValidateArgs) => {
    const { io } = ctx;
    const pipeline = loadPipeline(resolve(io.cwd, String(args.pipeline)));
    const customFields = await fetchCustomFields(args, io);
    // The state, when there is one, is only read: new rows are compared as the plan compares them.
    const store = existingState(pipeline, { ...(args['state-dir'] !== undefined ? { stateDir: args['state-dir'] } : {}), cwd: io.cwd, env: io.env });
    const result = await validatePipeline(pipeline, { customFields, ...(store ? { store } : {}), ...(io.signal ? { signal: io.signal } : {}) }).finally(() => store?.close());
    const { summary } = result;

    let rejectedOut: string | undefined;
    if (args['rejected-out'] !== undefined && (summary.counts.rejected > 0 || summary.warnedRows?.length)) {
      rejectedOut = resolve(io.cwd, args['rejected-out']);
      const rows = rejectedCsvRows({ rejectedRows: summary.rejected, warnings: summary.warnedRows });
      await writeRejectedCsv(rejectedOut, rows, { headers: result.source.headers, dialect: dialectFor(pipeline.config.source) });
    }
    const rejects = summary.counts.rejected > 0 ? rejectsVerdict(judgeRejects(summary.counts, pipeline.config.policy.rejects)) : undefined;
    // Over policy.rejects a sync is refused by its guard before writing: validate gives that answer too.
    const overCeiling = rejects !== undefined && !rejects.tolerated && pipeline.config.policy.rejects !== undefined;
    const exitCode = overCeiling ? EXIT.guard : rejects && !rejects.tolerated ? EXIT.partial : EXIT.ok;
    const show = (file: string): string => relative(io.cwd, file) || file;
    if (args.json) {
      io.stdout.write(`${JSON.stringify(toJson(pipeline.name, result, rejectedOut, exitCode, rejects), null, 2)}\n`);
    } else {
      io.stdout.write(renderText(pipeline.name, result, rejectedOut, show, rejects));
    }
    return exitCode;
  }),
});

/** Custom fields offline from `--fields-file`, else from the service (docs/service-contract.md, call 8). */
async function fetchCustomFields(args: ValidateArgs, io: CliIo): Promise<CustomFieldsListing> {
  if (args['fields-file'] !== undefined) return loadFieldsFile(resolve(io.cwd, args['fields-file']));
  const { client } = connectService(args, io);
  return client.listCustomFields(callOptions(io));
}

function where(p: Provenance, show: (file: string) => string): string {
  return `${show(p.file)}${p.sheet !== undefined ? ` [sheet ${p.sheet}]` : ''} row ${p.row}`;
}

function describeProblem(p: RowProblem, show: (file: string) => string): string {
  const column = p.column !== undefined ? `, column "${p.column}"` : '';
  const value = p.value !== undefined ? `, value ${JSON.stringify(p.value)}` : '';
  return `${where(p.provenance, show)}${column}${value}: ${p.message}${p.hint ? `\n      fix: ${p.hint}` : ''}`;
}

/** Groups problems by code, in order of first appearance. */
function groupByCode(problems: RowProblem[]): Map<string, RowProblem[]> {
  const groups = new Map<string, RowProblem[]>();
  for (const p of problems) {
    const list = groups.get(p.code) ?? [];
    list.push(p);
    groups.set(p.code, list);
  }
  return groups;
}

function renderText(name: string, result: ValidationResult, rejectedOut: string | undefined, show: (f: string) => string, rejects: RejectsVerdict | undefined): string {
  const { summary, source } = result;
  const { counts } = summary;
  const out: string[] = [];
  out.push(`validate ${name}: ${show(source.file)}${source.sheet !== undefined ? ` [sheet ${source.sheet}]` : ''} (${source.format})`);
  for (const note of source.notes) out.push(`  note: ${note}`);
  const rows: [string, number][] = [
    ['rows read', counts.rowsRead],
    ['records valid', counts.valid],
    ['rows rejected', counts.rejected],
    ['rows filtered', counts.filtered],
  ];
  if (counts.duplicatesIgnored) rows.push(['duplicates ignored', counts.duplicatesIgnored]);
  const layers = summary.layers;
  if (layers) rows.push(['rows replaced', layers.replaced], ['new rows', layers.added.length + layers.addedNotStored]);
  const width = Math.max(...rows.map(([, n]) => String(n).length));
  for (const [label, n] of rows) out.push(`  ${label.padEnd(19)}${String(n).padStart(width)}`);
  if (layers) {
    out.push('', `Overlays, read over ${show(source.file)} in this order: ${layers.files.map(show).join(', ')}.`);
    if (layers.added.length) {
      out.push('New rows (their client_id is in no earlier file):');
      for (const row of layers.added.slice(0, SHOWN_PER_CODE)) out.push(`    ${row.clientId} (${where(row.provenance, show)})`);
      const more = layers.added.length + layers.addedNotStored - SHOWN_PER_CODE;
      if (more > 0) out.push(`    … and ${more} more`);
    }
  }

  const problems = summary.rejected.flatMap((r) => r.problems);
  if (problems.length) {
    out.push('', `Problems by code (${problems.length}${summary.rejectedNotStored ? `, plus ${summary.rejectedNotStored} rejected rows not listed` : ''}):`);
    for (const [code, list] of groupByCode(problems)) {
      out.push(`  ${code} (${list.length})`);
      for (const p of list.slice(0, SHOWN_PER_CODE)) out.push(`    ${describeProblem(p, show)}`);
      if (list.length > SHOWN_PER_CODE) {
        out.push(`    … and ${list.length - SHOWN_PER_CODE} more${rejectedOut ? '' : ' (use --rejected-out FILE to get every one)'}`);
      }
    }
  }
  if (summary.warnings.length) {
    out.push('', `Warnings (${summary.warnings.length}):`);
    for (const w of summary.warnings.slice(0, SHOWN_PER_CODE)) out.push(`    ${describeProblem(w, show)}`);
    if (summary.warnings.length > SHOWN_PER_CODE) out.push(`    … and ${summary.warnings.length - SHOWN_PER_CODE} more`);
  }
  const pairs = summary.duplicatePeople ?? [];
  if (pairs.length) {
    const total = summary.duplicatePeopleFound ? summary.duplicatePeopleFound.listed + summary.duplicatePeopleFound.leftOut : pairs.length;
    out.push('', `Probably the same person (${total}, the strongest first; policy.duplicate_people decides what sync does):`);
    for (const pair of pairs.slice(0, SHOWN_PER_CODE)) {
      out.push(`    ${pair.a.clientId} (${pair.a.provenance ? where(pair.a.provenance, show) : '?'}) and ${pair.b.clientId} (${pair.b.provenance ? where(pair.b.provenance, show) : '?'}): ${pair.evidence}`);
    }
    if (total > SHOWN_PER_CODE) out.push(`    … and ${total - SHOWN_PER_CODE} more${total > pairs.length ? ` (--json lists the strongest ${pairs.length})` : ''}`);
  }
  if (rejectedOut) out.push('', `Rejected rows written to ${show(rejectedOut)}; fix them there and feed the file back.`);
  out.push('', rejects ? `${rejects.text}.` : 'All rows valid.');
  if (rejects && !rejects.tolerated && /policy\.rejects/.test(rejects.text)) {
    out.push(`A sync refuses to write over policy.rejects (exit 3) unless run with --allow-rejects ${counts.rejected}.`);
  }
  return `${out.join('\n')}\n`;
}

function toJson(name: string, result: ValidationResult, rejectedOut: string | undefined, exitCode: number, rejects: RejectsVerdict | undefined): unknown {
  const { summary, source, compiled } = result;
  return {
    pipeline: name,
    source,
    managedFields: compiled.managedFields,
    fieldNames: compiled.fieldNames,
    counts: summary.counts,
    rejectedNotStored: summary.rejectedNotStored,
    duplicateClientIds: summary.duplicateClientIds.size,
    problemsByCode: Object.fromEntries([...groupByCode(summary.rejected.flatMap((r) => r.problems))].map(([k, v]) => [k, v.length])),
    rejected: summary.rejected.map((r) => ({ provenance: r.provenance, problems: r.problems })),
    warnings: summary.warnings,
    ...(summary.layers ? { layers: summary.layers } : {}),
    ...(summary.duplicatePeople ? { duplicatePeople: summary.duplicatePeople } : {}),
    ...(summary.duplicatePeopleFound ? { duplicatePeopleFound: summary.duplicatePeopleFound } : {}),
    rejectedOut: rejectedOut ?? null,
    ...(rejects ? { rejects } : {}),
    exitCode,
  };
}
