/**
 * `rostersync manuscript upload`: uploads a manuscript (docs/service-contract.md, call 6) with every field of the spec and
 * prints its referee candidates as a table (name, score, h-index, conflicts, groups) or `--json`.
 *
 * Authors: repeated `--author "Name|Affiliation|ORCID|email"` (empty parts allowed) or
 * `--authors-file F.json` (an array of `{name, affiliation, orcid, email}`), not both.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { Candidate, ManuscriptAuthor, ManuscriptUploadInput, UploadResponse } from '../../client/index.js';
import { EXIT, UserFacingError } from '../../errors/user-facing-error.js';
import type { CommandFactory } from '../command.js';
import { action } from '../command.js';
import { callOptions, connectService, withServiceOptions, type ServiceArgs } from '../service-options.js';

interface UploadArgs extends ServiceArgs {
  folder?: string;
  'origin-id'?: string;
  title?: string;
  abstract?: string;
  'abstract-file'?: string;
  'authors-count'?: number;
  author?: string[];
  'authors-file'?: string;
  file?: string;
  'exclude-candidates'?: boolean;
  'min-h-index'?: number;
  'max-h-index'?: number;
  'min-academic-age'?: number;
  'max-academic-age'?: number;
  'min-articles-count'?: number;
  'max-articles-count'?: number;
}

const FILTER_FLAGS = {
  'min-h-index': 'minHIndex',
  'max-h-index': 'maxHIndex',
  'min-academic-age': 'minAcademicAge',
  'max-academic-age': 'maxAcademicAge',
  'min-articles-count': 'minArticlesCount',
  'max-articles-count': 'maxArticlesCount',
} as const;

export const manuscriptCommand: CommandFactory = (ctx) => ({
  command: 'manuscript <action>',
  describe: 'Upload a manuscript and list its referee candidates',
  builder: (yargs) =>
    yargs.command({
      command: 'upload',
      describe: 'Upload a manuscript (metadata, authors, optional PDF/DOCX) and print referee candidates',
      builder: (y) => {
        let built = withServiceOptions(y)
          .option('folder', { type: 'string', demandOption: true, describe: 'Folder (journal code or panel name); created when missing' })
          .option('origin-id', { type: 'string', demandOption: true, describe: 'Your manuscript id; uploading it again updates (and may move) it' })
          .option('title', { type: 'string', demandOption: true })
          .option('abstract', { type: 'string', describe: 'Abstract text (or --abstract-file)' })
          .option('abstract-file', { type: 'string', describe: 'File holding the abstract (UTF-8)' })
          .option('authors-count', { type: 'number', describe: 'Total number of authors (default: the authors given)' })
          .option('author', { type: 'string', array: true, describe: 'Author as "Name|Affiliation|ORCID|email" (repeatable; empty parts allowed)' })
          .option('authors-file', { type: 'string', describe: 'JSON file: array of {name, affiliation, orcid, email}' })
          .option('file', { type: 'string', describe: 'Manuscript file to parse (PDF or DOCX)' })
          .option('exclude-candidates', { type: 'boolean', default: false, describe: 'Store the manuscript without computing candidates' });
        for (const flag of Object.keys(FILTER_FLAGS)) built = built.option(flag, { type: 'number', describe: `Candidate filter (integer)` });
        return built;
      },
      handler: action(ctx, async (args: UploadArgs) => {
        const input = uploadInputFromArgs(args, ctx.io.cwd);
        const { client } = connectService(args, ctx.io);
        const result = await client.uploadManuscript(input, callOptions(ctx.io));
        ctx.io.stdout.write(args.json ? `${JSON.stringify(result, null, 2)}\n` : renderUpload(result));
        return EXIT.ok;
      }),
    }),
  handler: () => undefined,
});

/** Turns the flags into the client's upload input; every problem names its flag. */
export function uploadInputFromArgs(args: UploadArgs, cwd: string): ManuscriptUploadInput {
  if (args.abstract !== undefined && args['abstract-file'] !== undefined) {
    throw new UserFacingError('give --abstract or --abstract-file, not both');
  }
  const abstract = args['abstract-file'] !== undefined ? readText(resolve(cwd, args['abstract-file']), '--abstract-file').trim() : args.abstract;
  if (abstract === undefined || abstract.trim() === '') {
    throw new UserFacingError('the abstract is required', { hint: 'Pass --abstract "..." or --abstract-file FILE.' });
  }
  if (args.author?.length && args['authors-file'] !== undefined) throw new UserFacingError('give --author or --authors-file, not both');
  const authors = args['authors-file'] !== undefined ? readAuthorsFile(resolve(cwd, args['authors-file'])) : (args.author ?? []).map(parseAuthorFlag);

  const filters: NonNullable<ManuscriptUploadInput['filters']> = {};
  for (const [flag, key] of Object.entries(FILTER_FLAGS) as [keyof typeof FILTER_FLAGS, (typeof FILTER_FLAGS)[keyof typeof FILTER_FLAGS]][]) {
    const value = args[flag];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value)) throw new UserFacingError(`--${flag} must be an integer, got ${String(value)}`);
    filters[key] = value;
  }
  const count = args['authors-count'];
  if (count !== undefined && (!Number.isSafeInteger(count) || count < 0)) {
    throw new UserFacingError(`--authors-count must be a non-negative integer, got ${String(count)}`);
  }

  const input: ManuscriptUploadInput = {
    folder: args.folder ?? '',
    originId: args['origin-id'] ?? '',
    title: args.title ?? '',
    abstract,
    authors,
    filters,
    excludeCandidates: args['exclude-candidates'] ?? false,
  };
  if (count !== undefined) input.authorsCount = count;
  if (args.file !== undefined) {
    const path = resolve(cwd, args.file);
    input.sourceFile = { filename: path.split(/[\\/]/).pop() ?? 'manuscript', data: readBytes(path, '--file') };
  }
  return input;
}

/** "Name|Affiliation|ORCID|email" → author; empty parts are left out. */
export function parseAuthorFlag(value: string): ManuscriptAuthor {
  const parts = value.split('|').map((part) => part.trim());
  if (parts.length > 4) {
    throw new UserFacingError(`--author ${JSON.stringify(value)} has ${parts.length} parts`, {
      hint: 'Use "Name|Affiliation|ORCID|email" (at most four parts; leave a part empty to skip it).',
    });
  }
  const [name, affiliation, orcid, email] = parts;
  if (!name) throw new UserFacingError(`--author ${JSON.stringify(value)} has no name`, { hint: 'The first part is the name.' });
  const author: ManuscriptAuthor = { name };
  if (affiliation) author.affiliation = affiliation;
  if (orcid) author.orcid = orcid;
  if (email) author.email = email;
  return author;
}

const authorsFileSchema = z.array(
  z.strictObject({
    name: z.string().min(1),
    affiliation: z.string().optional(),
    orcid: z.string().optional(),
    email: z.string().optional(),
  }),
);

function readAuthorsFile(path: string): ManuscriptAuthor[] {
  let doc: unknown;
  try {
    doc = JSON.parse(readText(path, '--authors-file'));
  } catch (error) {
    if (error instanceof UserFacingError) throw error;
    throw new UserFacingError(`--authors-file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = authorsFileSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UserFacingError(`--authors-file ${path}: ${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`, {
      hint: 'The file is a JSON array of {"name", "affiliation", "orcid", "email"} objects; only name is required.',
    });
  }
  return parsed.data;
}

function readBytes(path: string, flag: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new UserFacingError(`${flag} ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
}

function readText(path: string, flag: string): string {
  return readBytes(path, flag).toString('utf8');
}

/** Fixed-width text table. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** Conflict letters: C coauthor, A affiliation, R retracted, B bibliography, X external COI. */
export function conflictLetters(c: Candidate): string {
  const flags: [string, { exists: boolean } | undefined][] = [
    ['C', c.coauth_conflicts],
    ['A', c.aff_conflicts],
    ['R', c.retracted_articles],
    ['B', c.referenced_articles],
    ['X', c.external_coi],
  ];
  return flags.filter(([, flag]) => flag?.exists).map(([letter]) => letter).join('') || '-';
}

export function renderUpload(result: UploadResponse): string {
  const head = `manuscript ${result.origin_id} (id ${result.manuscript_id}), response version ${result.version}`;
  const debug = result.debug_info;
  const parsed = `parsed: ${debug.source_file ?? 'no file'}, ${debug.parsed_text_len} chars, ${debug.parsed_references} references, ${debug.extracted_concepts} concepts, ${debug.authors_info.authors_count} authors`;
  const settings = result.authors_groups_settings
    ? `authors groups: ${result.authors_groups_settings.effect}${result.authors_groups_settings.boost_multiplier !== undefined ? ` x${result.authors_groups_settings.boost_multiplier}` : ''} (${result.authors_groups_settings.authors_groups.map((g) => `${g.id} ${g.name}`).join(', ')})`
    : null;
  if (result.candidates === null) return `${[head, parsed, settings].filter(Boolean).join('\n')}\ncandidates: not computed (exclude_candidates)\n`;
  const rows = result.candidates.map((c, i) => [
    String(i + 1),
    c.name,
    c.score.toFixed(3),
    String(c.hIndex),
    conflictLetters(c),
    c.authors_groups.map((g) => `${g.group_id}${g.client_id ? `:${g.client_id}` : ''}`).join(' ') || '-',
    c.marked ? 'yes' : '',
  ]);
  const table = rows.length > 0 ? renderTable(['#', 'name', 'score', 'h-index', 'conflicts', 'groups', 'marked'], rows) : '(no candidates)';
  return `${[head, parsed, settings].filter(Boolean).join('\n')}\n${table}\nconflicts: C coauthor, A affiliation, R retracted articles, B in bibliography, X external COI\n`;
}
