/**
 * The one loader of a saved custom-fields listing (`--fields-file` of `validate`, `plan` and
 * `sync`): what `rostersync fields --json` prints, or just its `author_from_group` array, with
 * or without a byte-order mark.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { customFieldSchema, type CustomFieldsListing } from '../client/schemas.js';
import { ConfigError } from '../errors/config-error.js';

/**
 * A saved custom-fields listing: the service's answer to `GET /custom-fields/all/` (what
 * `rostersync fields --json` prints), or just its `author_from_group` array.
 */
const listingObjectSchema = z
  .object({
    author_from_group: z.array(customFieldSchema),
    folder: z.array(customFieldSchema).default([]),
    proposal: z.array(customFieldSchema).default([]),
  })
  .loose();
const listingArraySchema = z
  .array(customFieldSchema)
  .transform((author_from_group) => ({ author_from_group, folder: [], proposal: [] }));

export function loadFieldsFile(path: string): CustomFieldsListing {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(path, [{ path: '', message: `cannot read the custom-fields listing: ${code === 'ENOENT' ? 'fields file not found' : `cannot be read (${code})`}` }], {
      hint: 'Save a listing with `rostersync fields --json > fields.json`, or leave out --fields-file to ask the service.',
      cause: error,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ConfigError(path, [{ path: '', message: `cannot read the custom-fields listing: not valid JSON: ${(error as Error).message}` }], {
      hint: 'Save the listing again with `rostersync fields --json > fields.json`.',
      cause: error,
    });
  }
  const parsed = (Array.isArray(json) ? listingArraySchema : listingObjectSchema).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(
      path,
      [{ path: issue?.path.join('.') ?? '', message: `not a custom-fields listing: ${issue?.message ?? 'unexpected shape'}` }],
      { hint: 'Expected the JSON of GET /custom-fields/all/ (`rostersync fields --json`), with an author_from_group array.' },
    );
  }
  return parsed.data as CustomFieldsListing;
}
