/**
 * `rostersync author get|put|patch|delete <group_id> <client_id>`: one author-from-group record
 * (docs/service-contract.md, calls 1–4). `put` is the full POST (fields not sent become null), `patch` the partial POST.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import type { CommandFactory, CommandContext } from '../command.js';
import { action } from '../command.js';
import { closestMatch } from '../../errors/did-you-mean.js';
import { EXIT, UserFacingError } from '../../errors/user-facing-error.js';
import {
  STANDARD_FIELDS,
  type AuthorFromGroup,
  type AuthorPatch,
  type AuthorWrite,
  type CustomField,
  type OkResponse,
} from '../../client/index.js';
import type { CliIo } from '../io.js';
import { callOptions, connectService, withServiceOptions, type ServiceArgs } from '../service-options.js';

interface AuthorArgs extends ServiceArgs {
  group_id?: string;
  client_id?: string;
  data?: string;
  'data-file'?: string;
}

type Verb = 'get' | 'put' | 'patch' | 'delete';

const DESCRIPTIONS: Record<Verb, string> = {
  get: 'Show a record and its linked author',
  put: 'Create or fully replace a record (fields not sent become null)',
  patch: 'Update only the fields sent (null clears a field)',
  delete: 'Delete a record',
};

export const authorCommand: CommandFactory = (ctx) => ({
  command: 'author <command>',
  describe: 'Read or write one author-from-group record',
  builder: (yargs: Argv) => {
    let parser = yargs;
    for (const verb of ['get', 'put', 'patch', 'delete'] as const) {
      parser = parser.command({
        command: `${verb} <group_id> <client_id>`,
        describe: DESCRIPTIONS[verb],
        builder: (sub: Argv) => {
          let withArgs = withServiceOptions(sub)
            .positional('group_id', { type: 'string', describe: 'Authors group id (integer)' })
            .positional('client_id', { type: 'string', describe: 'Client-side id of the author in the group' });
          if (verb === 'put' || verb === 'patch') {
            withArgs = withArgs
              .option('data', { type: 'string', describe: 'Record as JSON, e.g. \'{"name": "Ada Okafor"}\'' })
              .option('data-file', { type: 'string', describe: 'File holding the record as JSON' })
              .conflicts('data', 'data-file');
          }
          return withArgs;
        },
        handler: action(ctx, (args: AuthorArgs) => runAuthor(verb, args, ctx)),
      });
    }
    return parser.demandCommand(1, 'Name an author command: get, put, patch or delete');
  },
  handler: () => undefined,
});

async function runAuthor(verb: Verb, args: AuthorArgs, ctx: CommandContext): Promise<number> {
  const { io } = ctx;
  const groupId = parseGroupId(args.group_id);
  const clientId = String(args.client_id ?? '');
  const data = verb === 'put' || verb === 'patch' ? readData(args, io) : undefined;
  const { client } = connectService(args, io);
  const options = callOptions(io);
  // Custom fields and options by name, as `get` prints them; the listing is only fetched when needed.
  const body = data && Object.keys(data).some((key) => !isStandardKey(key)) ? withApiIds(data, (await client.listCustomFields(options)).author_from_group) : data;

  if (verb === 'get') {
    const record = await client.getAuthor(groupId, clientId, options);
    if (args.json) {
      io.stdout.write(`${JSON.stringify(record, null, 2)}\n`);
    } else {
      const customKeys = Object.keys(record).filter((key) => !isStandardKey(key));
      // Name custom fields for people; only worth a call when the record has any.
      const fields = customKeys.length > 0 ? (await client.listCustomFields(options)).author_from_group : [];
      io.stdout.write(renderAuthor(record, fields));
    }
    return EXIT.ok;
  }

  // An {"ok": false} answer throws RefusedError in the client, so an answer here is a success.
  let answer: OkResponse;
  if (verb === 'put') answer = await client.putAuthor(groupId, clientId, body as AuthorWrite, options);
  else if (verb === 'patch') answer = await client.patchAuthor(groupId, clientId, body as AuthorPatch, options);
  else answer = await client.deleteAuthor(groupId, clientId, options);

  if (args.json) {
    io.stdout.write(`${JSON.stringify(answer)}\n`);
  } else {
    const done = { put: 'written (full replace)', patch: 'updated', delete: 'deleted' }[verb];
    io.stdout.write(`author "${clientId}" in group ${groupId} ${done}\n`);
  }
  return EXIT.ok;
}

function parseGroupId(raw: string | undefined): number {
  const text = String(raw ?? '').trim();
  const id = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(id) || id <= 0) {
    throw new UserFacingError(`group id "${text}" is not a positive integer`, {
      hint: 'Use the id printed by `rostersync group create` or shown in the service UI.',
    });
  }
  return id;
}

/** The record body from --data or --data-file; the client validates its shape before sending. */
function readData(args: AuthorArgs, io: CliIo): Record<string, unknown> {
  let text: string;
  let source: string;
  if (args.data !== undefined) {
    text = args.data;
    source = '--data';
  } else if (args['data-file'] !== undefined) {
    const path = resolve(io.cwd, args['data-file']);
    source = path;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new UserFacingError(`cannot read --data-file ${path} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`, {
        hint: 'Give a readable JSON file, or pass the record inline with --data.',
        cause: error,
      });
    }
  } else {
    throw new UserFacingError('put and patch need the record: pass --data JSON or --data-file FILE', {
      hint: 'Example: --data \'{"name": "Ada Okafor", "emails": ["ada@example.org"]}\'',
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UserFacingError(`${source} is not valid JSON: ${(error as Error).message}`, {
      hint: 'Write the record as a JSON object, with double-quoted keys and strings.',
      cause: error,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UserFacingError(`${source} must hold a JSON object (the record), not ${Array.isArray(value) ? 'an array' : typeof value}`);
  }
  return value as Record<string, unknown>;
}

/**
 * The record with custom fields and their options named as `author get` prints them (names, option
 * labels; case and spacing aside) turned into the api_ids the service takes. An api_id is kept as
 * it is. A name that matches no field, or an option no label, is refused with the nearest name.
 */
export function withApiIds(data: Record<string, unknown>, fields: readonly CustomField[]): Record<string, unknown> {
  const norm = (text: string) => text.trim().replace(/\s+/g, ' ').toLowerCase();
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (isStandardKey(key)) {
      out[key] = value;
      continue;
    }
    const matches = fields.filter((field) => field.api_id === key);
    if (matches.length === 0) matches.push(...fields.filter((field) => norm(field.name) === norm(key)));
    if (matches.length > 1) {
      throw new UserFacingError(`field name "${key}" is shared by ${matches.length} custom fields (${matches.map((f) => f.api_id).join(', ')})`, {
        hint: 'Name the field by its api_id instead; `rostersync fields` lists them.',
      });
    }
    const field = matches[0];
    if (field === undefined) {
      const closest = closestMatch(key, [...STANDARD_FIELDS, ...fields.map((f) => f.name)]);
      throw new UserFacingError(`unknown field "${key}"${closest ? `; did you mean "${closest}"?` : ''}`, {
        hint: `Use a standard field (${STANDARD_FIELDS.join(', ')}) or a custom field's name or api_id; \`rostersync fields\` lists them.`,
      });
    }
    if (field.api_id in out) throw new UserFacingError(`field "${field.name}" is given twice (by its name and by its api_id)`, { hint: 'Keep one of the two keys.' });
    out[field.api_id] = field.options ? withOptionIds(field, value, norm) : value;
  }
  return out;
}

function withOptionIds(field: CustomField, value: unknown, norm: (text: string) => string): unknown {
  const options = field.options ?? [];
  const one = (item: unknown): unknown => {
    if (typeof item !== 'string' || options.some((option) => option.api_id === item)) return item;
    const option = options.find((candidate) => norm(candidate.option) === norm(item));
    if (option) return option.api_id;
    const closest = closestMatch(item, options.map((candidate) => candidate.option));
    throw new UserFacingError(`field "${field.name}" has no option "${item}"${closest ? `; did you mean "${closest}"?` : ''}`, {
      hint: `Its options: ${options.map((candidate) => candidate.option).join(', ')}.`,
    });
  };
  return Array.isArray(value) ? value.map(one) : one(value);
}

function isStandardKey(key: string): boolean {
  return key === 'author' || (STANDARD_FIELDS as readonly string[]).includes(key);
}

/** Text view of a record: standard fields, custom fields by name, then the linked author. */
export function renderAuthor(record: AuthorFromGroup, fields: readonly CustomField[]): string {
  const list = (value: string[] | null | undefined) => (value && value.length > 0 ? value.join('; ') : '—');
  const lines = [
    `name:         ${record.name}`,
    `emails:       ${list(record.emails)}`,
    `orcids:       ${list(record.orcids)}`,
    `affiliations: ${list(record.affiliations)}`,
    `articles:     ${list(record.articles)}`,
  ];
  const custom = Object.entries(record).filter(([key]) => !isStandardKey(key));
  if (custom.length > 0) {
    lines.push('custom fields:');
    for (const [apiId, value] of custom) {
      const field = fields.find((f) => f.api_id === apiId);
      lines.push(`  ${field?.name ?? apiId}: ${describeValue(value, field)}`);
    }
  }
  const author = record.author;
  if (author) {
    lines.push(`linked author: #${author.id} ${author.name} (h-index ${author.h_index}, ${author.articles_count} articles) ${author.service_url}`);
    for (const article of author.last_articles) lines.push(`  ${article.year}  ${article.title}`);
  } else {
    lines.push('linked author: none');
  }
  return `${lines.join('\n')}\n`;
}

/** Shows option labels instead of option api_ids where the field is known. */
function describeValue(value: unknown, field: CustomField | undefined): string {
  const label = (id: unknown) => field?.options?.find((o) => o.api_id === id)?.option ?? String(id);
  if (value === null || value === undefined) return '—';
  if (Array.isArray(value)) return value.map(label).join('; ');
  return field?.options ? label(value) : typeof value === 'string' ? value : JSON.stringify(value);
}
