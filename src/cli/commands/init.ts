/**
 * `rostersync init <roster>`: reads a roster and the service's custom fields (or a saved listing)
 * and writes a commented pipeline and mapping proposed by src/init/. On a terminal it asks about
 * each guess; `--yes` takes every best guess but refuses to answer a question (another column fits as well); anywhere else it refuses rather than guess silently.
 */
import { existsSync } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { loadFieldsFile } from '../../config/fields-file.js';
import { EXIT, UserFacingError } from '../../errors/user-facing-error.js';
import { matchColumns, type ColumnMatch, type MatchResult } from '../../init/match.js';
import { readRosterSample } from '../../init/read-roster.js';
import { renderMapping, renderPipeline, writeNew } from '../../init/write-files.js';
import { action, type CommandFactory } from '../command.js';
import { callOptions, connectService, withServiceOptions, type ServiceArgs } from '../service-options.js';

interface InitArgs extends ServiceArgs {
  roster?: string;
  'fields-file'?: string;
  sheet?: string;
  encoding?: string;
  pipeline?: string;
  mapping?: string;
  yes?: boolean;
  force?: boolean;
}

export const initCommand: CommandFactory = (ctx) => ({
  command: 'init <roster>',
  describe: 'Propose a pipeline and a mapping for a roster, from its columns and the custom fields',
  builder: (yargs) =>
    withServiceOptions(yargs)
      .positional('roster', { type: 'string', describe: 'Roster file (CSV or XLSX)' })
      .option('fields-file', { type: 'string', describe: 'Saved custom-fields listing (`rostersync fields --json`) instead of asking the service' })
      .option('sheet', { type: 'string', describe: 'XLSX: the sheet to read, by name or number (1 = first tab; default: the first)' })
      .option('encoding', { type: 'string', describe: 'CSV: the encoding the roster was saved in (a WHATWG label such as windows-1250), when its bytes do not tell' })
      .option('pipeline', { type: 'string', describe: 'Pipeline file to write (default: <roster name>.pipeline.yaml)' })
      .option('mapping', { type: 'string', describe: 'Mapping file to write (default: <roster name>.mapping.yaml)' })
      .option('yes', { type: 'boolean', default: false, describe: 'Take every best guess without asking; a column with a rival is written commented out and init exits 1' })
      .option('force', { type: 'boolean', default: false, describe: 'Overwrite existing pipeline and mapping files' })
      .example('$0 init exports/reviewers.csv --fields-file fields.json --yes', 'write reviewers.pipeline.yaml and reviewers.mapping.yaml'),
  handler: action(ctx, async (args: InitArgs) => {
    const { io } = ctx;
    const roster = resolve(io.cwd, String(args.roster));
    const stem = basename(roster, extname(roster));
    const pipelinePath = resolve(io.cwd, args.pipeline ?? `${stem}.pipeline.yaml`);
    const mappingPath = resolve(io.cwd, args.mapping ?? `${stem}.mapping.yaml`);
    for (const path of [pipelinePath, mappingPath]) {
      if (!args.force && existsSync(path)) {
        throw new UserFacingError(`${path} exists; init does not overwrite it.`, { hint: 'Pass --force to replace it, or name other files with --pipeline and --mapping.' });
      }
    }
    const interactive = process.stdin.isTTY === true && (io.stdout as NodeJS.WriteStream).isTTY === true;
    if (!args.yes && !interactive) {
      throw new UserFacingError('init asks about each uncertain match, but this is not a terminal.', { hint: 'Pass --yes to take the best guesses (they are marked GUESS in the files and listed).' });
    }

    // A number is a position in the tab order, as `sheet: 2` is in a pipeline.
    const sheet = args.sheet !== undefined && /^\d+$/.test(args.sheet) ? Number(args.sheet) : args.sheet;
    const sample = await readRosterSample(roster, dirname(roster), sheet, args.encoding).catch(askForEncoding);
    const listing = args['fields-file'] !== undefined ? loadFieldsFile(resolve(io.cwd, args['fields-file'])) : await connectService(args, io).client.listCustomFields(callOptions(io));
    let result = matchColumns(sample.headers, sample.sample, listing.author_from_group);
    if (!args.yes) result = await confirmGuesses(result, io.stdout);

    writeNew(mappingPath, renderMapping(basename(roster), result), args.force === true);
    writeNew(pipelinePath, renderPipeline({ pipeline: pipelinePath, mapping: mappingPath, roster }, sample), args.force === true);
    io.stdout.write(renderSummary(result, pipelinePath, mappingPath, sample.notes));
    const questions = result.matches.filter((m) => m.question !== undefined);
    // No id and no email column: the mapping says `CHANGE ME`, which no run accepts.
    const noId = !result.matches.some((m) => m.target.kind === 'client_id' || (m.target.kind === 'field' && m.target.field === 'emails'));
    if (questions.length > 0 || noId) {
      const open = [...questions.map(describeQuestion), ...(noId ? ['client_id: no column looks like an id or holds emails ("CHANGE ME" in the mapping)'] : [])];
      throw new UserFacingError(
        `init did not choose ${open.length === 1 ? 'a column' : `${open.length} columns`} for you: ${open.join('; ')}. ` +
          `The guesses are written commented out (or as "CHANGE ME") in ${mappingPath}.`,
        { hint: 'Uncomment the right lines (or put the right column in) before `rostersync validate`, or run init on a terminal without --yes to be asked.' },
      );
    }
    return EXIT.ok;
  }),
});

/**
 * The reader refuses a legacy file whose encoding its bytes do not tell; its hint names the
 * pipeline's `encoding:` lines, which init writes itself, so the user is told the flag instead.
 */
function askForEncoding(error: unknown): never {
  if (!(error instanceof UserFacingError) || !/which encoding it was saved in/.test(error.message)) throw error;
  const labels = [...new Set([...(error.hint ?? '').matchAll(/encoding: ([\w-]+)/g)].map((m) => m[1]!))];
  throw new UserFacingError(error.message, {
    hint: `Tell init which one is right, and it writes it into the pipeline: ${labels.map((label) => `--encoding ${label}`).join(', or ')}; or re-save the file as "CSV UTF-8".`,
    cause: error,
  });
}

function describeQuestion(m: ColumnMatch): string {
  const choices = [m.columns.join(' + '), ...(m.alternatives ?? [])].map((c) => `"${c}"`);
  return `${describeTarget(m)} from ${choices.join(' or ')}${m.alternatives?.length ? '' : ` (${m.question})`}`;
}

function describeTarget(m: ColumnMatch): string {
  const t = m.target;
  if (t.kind === 'client_id') return 'client_id';
  if (t.kind === 'field') return `fields.${t.field}`;
  if (t.kind === 'custom') return `custom field "${t.field}"`;
  return `skip rows where it is "${t.equals}"`;
}

/**
 * Asks yes/no about each guess; a "no" leaves the column out of the mapping. Answers are read as
 * a stream of lines, so answers typed (or pasted) ahead are kept; the end of input writes nothing.
 */
async function confirmGuesses(result: MatchResult, output: NodeJS.WritableStream): Promise<MatchResult> {
  const rl = createInterface({ input: process.stdin, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  const ask = async (question: string): Promise<string> => {
    output.write(question);
    const line = await lines.next();
    if (line.done) throw new UserFacingError('init stopped: the input ended before every question was answered; nothing was written.', { hint: 'Run it again, or pass --yes to take the best guesses.' });
    return String(line.value);
  };
  try {
    const matches: ColumnMatch[] = [];
    const unmapped = [...result.unmapped];
    for (const m of result.matches) {
      if (m.sure) {
        matches.push(m);
        continue;
      }
      const others = m.alternatives ?? [];
      const why = m.question !== undefined ? `; but ${m.question}` : '';
      const choices = others.length ? `[Y/n/or type ${others.map((o) => `"${o}"`).join(', ')}]` : '[Y/n]';
      const answer = (await ask(`Column ${m.columns.join(' + ')} → ${describeTarget(m)} (${m.reason}${why})? ${choices} `)).trim();
      const chosen = others.find((o) => o.toLowerCase() === answer.replace(/^"|"$/g, '').toLowerCase());
      const declined = /^(n|no)$/i.test(answer);
      if (chosen !== undefined) matches.push({ ...m, columns: chosen.split(' + '), sure: true, question: undefined, alternatives: undefined, reason: 'you chose it' });
      else if (declined) unmapped.push(...m.columns.map((column) => ({ column, reason: 'you declined the proposed match' })));
      else matches.push({ ...m, sure: true, question: undefined, alternatives: undefined, reason: `${m.reason} (confirmed)` });
    }
    return { ...result, matches, unmapped };
  } finally {
    rl.close();
  }
}

function renderSummary(result: MatchResult, pipeline: string, mapping: string, notes: string[]): string {
  const out = [`Wrote ${pipeline}`, `Wrote ${mapping}`, ''];
  for (const note of notes) out.push(`note: ${note}`);
  for (const m of result.matches) {
    const others = m.alternatives?.length ? ` (or ${m.alternatives.map((a) => `"${a}"`).join(', or ')})` : '';
    out.push(`  ${m.question !== undefined ? 'ASK  ' : m.sure ? 'sure ' : 'GUESS'}  ${m.columns.join(' + ')} → ${describeTarget(m)}${others}`);
  }
  for (const u of result.unmapped) out.push(`  left   ${u.column}: ${u.reason}`);
  const unsure = result.matches.filter((m) => !m.sure && m.question === undefined);
  const questions = result.matches.filter((m) => m.question !== undefined);
  if (questions.length) {
    out.push('', 'Not taken, choose (written commented out in the mapping):');
    for (const m of questions) out.push(`  - ${describeQuestion(m)}: ${m.question}`);
  }
  if (unsure.length || result.doubts.length) {
    out.push('', 'Unsure (check these before the first sync):');
    for (const m of unsure) out.push(`  - ${m.columns.join(' + ')} → ${describeTarget(m)}: ${m.reason}`);
    for (const d of result.doubts) out.push(`  - ${d}`);
  }
  out.push('', 'Set target.group.owner_team in the pipeline, then run `rostersync validate` on it.');
  return `${out.join('\n')}\n`;
}
