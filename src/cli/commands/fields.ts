/**
 * `rostersync fields`: lists the organization's custom fields (docs/service-contract.md, call 8) with their api_ids and
 * option api_ids, which mapping files and `author put --data` bodies refer to.
 */
import type { CommandFactory } from '../command.js';
import { action } from '../command.js';
import { EXIT } from '../../errors/user-facing-error.js';
import type { CustomField, CustomFieldsListing } from '../../client/index.js';
import { callOptions, connectService, withServiceOptions, type ServiceArgs } from '../service-options.js';

const OWNERS = ['author_from_group', 'folder', 'proposal'] as const;

export const fieldsCommand: CommandFactory = (ctx) => ({
  command: 'fields',
  describe: 'List the custom fields of the organization (names, kinds, api_ids, options)',
  builder: (yargs) => withServiceOptions(yargs),
  handler: action(ctx, async (args: ServiceArgs) => {
    const { client } = connectService(args, ctx.io);
    const listing = await client.listCustomFields(callOptions(ctx.io));
    ctx.io.stdout.write(args.json ? `${JSON.stringify(listing, null, 2)}\n` : renderFields(listing));
    return EXIT.ok;
  }),
});

/** Human-readable listing: one block per owner, one line per field, options indented below. */
export function renderFields(listing: CustomFieldsListing): string {
  const lines: string[] = [];
  for (const owner of OWNERS) {
    const fields = listing[owner];
    lines.push(`${owner} (${fields.length} field${fields.length === 1 ? '' : 's'})`);
    if (fields.length === 0) lines.push('  (none)');
    const width = Math.max(0, ...fields.map((f) => f.name.length));
    for (const field of fields) lines.push(...renderField(field, width));
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

function renderField(field: CustomField, width: number): string[] {
  const lines = [`  ${field.name.padEnd(width)}  ${field.data_kind.padEnd(13)}  ${field.api_id}`];
  if (field.description) lines.push(`  ${''.padEnd(width)}  ${field.description}`);
  const optionWidth = Math.max(0, ...(field.options ?? []).map((o) => o.option.length));
  for (const option of field.options ?? []) lines.push(`      - ${option.option.padEnd(optionWidth)}  ${option.api_id}`);
  return lines;
}
