/**
 * Mapping files (`mappings/*.yaml` or `.json`): how roster rows become author-from-group records.
 * One zod schema gives the TypeScript type, the validation (unknown keys are errors naming their
 * path) and the committed `mappings/schema.json` (see `src/config/json-schemas.ts`, written by `scripts/write-json-schemas.ts`).
 *
 * Everything is a closed set of named operations; there is deliberately no template language.
 *
 * ```yaml
 * version: 1
 * client_id: { column: Reviewer ID, prefix: "rev-" }
 * fields:
 *   name: { columns: [First name, Last name], join: " ", transforms: [trim, collapse_whitespace] }
 *   emails: { column: Email, split: [";", ","], transforms: [trim, lower, email, dedupe] }
 *   orcids: { column: ORCID, transforms: [orcid] }
 * custom_fields:
 *   Expertise level: { column: Level, values: { Sr: Senior } }
 *   Subject areas: { column: Topics, split: ";" }
 *   Last review date: { column: Last review, date_formats: [DD/MM/YYYY] }
 * skip_rows:
 *   - { column: Active, equals: "No" }
 * duplicate_client_ids: reject
 * ```
 */
import { z } from 'zod';

/**
 * The closed set of value transforms, applied in the order listed, to each value (after `split`)
 * or to the joined value (after `join`).
 * - `trim`: strip leading and trailing Unicode white space and invisible format characters (zero-width
 *   space, BOM, directional marks).
 * - `collapse_whitespace`: runs of whitespace (incl. non-breaking spaces) become one space; also trims.
 * - `lower` / `upper`: change case.
 * - `last_first`: "Curie, Marie" → "Marie Curie"; "King, Martin Luther, Jr." → "Martin Luther King Jr.";
 *   suffixes and degrees stay at the end, CJK names only lose the comma; a value without a comma is
 *   left as is, and one it cannot reorder without guessing is left as written with a warning.
 * - `orcid`: URL, labelled, spaced or unhyphenated ORCID iD → `0000-0002-1825-0097`; the ISO 7064 11,2
 *   check digit must match and the iD lie in a block ORCID issues, otherwise the value is invalid (`invalid_orcid`).
 * - `email`: the value must be a valid address (internationalised ones included), otherwise it is
 *   invalid (`invalid_email`); the domain is sent in its Unicode form.
 * - `dedupe`: drop repeated values of a list (compared case-insensitively, first spelling kept).
 */
export const TRANSFORMS = [
  'trim',
  'collapse_whitespace',
  'lower',
  'upper',
  'last_first',
  'orcid',
  'email',
  'dedupe',
] as const;
export const transformSchema = z.enum(TRANSFORMS);
export type TransformName = z.infer<typeof transformSchema>;

const columnName = z.string().min(1);
const separators = z
  .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
  .describe('Separator(s) splitting one cell into several values; the pieces are trimmed and empty ones dropped.');

/** Keys shared by every field that reads cells: where the value comes from and how it is cleaned. */
const valueSourceShape = {
  /** One source column (header text exactly as in the file). */
  column: columnName.optional().describe('One source column (header text exactly as in the file).'),
  /** Several source columns: joined (single-valued fields) or concatenated (list fields). */
  columns: z
    .array(columnName)
    .min(1)
    .optional()
    .describe('Several source columns: joined with `join` (single-valued fields) or concatenated (list fields).'),
  /** Joins several columns of a single-valued field; empty cells are left out. @default " " */
  join: z.string().optional().describe('Joins several columns of a single-valued field; empty cells are left out. Default " ".'),
  /** Splits multi-valued cells such as `a@x.org; b@y.org` (list fields and multi_option only). */
  split: separators.optional(),
  transforms: z.array(transformSchema).default([]).describe('Named transforms applied in order.'),
  /** Used when the cells are empty. */
  default: z
    .union([z.string(), z.number(), z.array(z.string())])
    .optional()
    .describe('Value used when the cells are empty.'),
  /** An empty value rejects the row (`missing_required`). `name` is always required. */
  required: z.boolean().default(false).describe('An empty value rejects the row (missing_required).'),
  /**
   * An invalid value (a bad ORCID, email, number, date or option): `reject_row` rejects the whole
   * row; `skip_value` syncs the row without it (a list field drops only the bad items) and leaves the
   * field as the service has it, with a warning. @default "reject_row"
   */
  on_invalid: z
    .enum(['reject_row', 'skip_value'])
    .default('reject_row')
    .describe('An invalid value rejects the row (reject_row), or is left out with a warning while the rest of the row syncs (skip_value).'),
  /**
   * When the roster's value is written (docs/mapping.md, "Fields that are only seeded"): `always`
   * keeps the service in step with the roster; `on_create` sets the field when rostersync creates
   * the record (or adopts one where the field is empty); `if_empty` sets it only where the service
   * holds no value, so an editor's later change is kept.
   */
  write: z
    .enum(['always', 'on_create', 'if_empty'])
    .default('always')
    .describe('always (default): keep the service in step; on_create: set when rostersync creates the record (or adopts one where it is empty); if_empty: set only where the service holds no value.'),
};

function exactlyOneSource(
  value: { column?: string | undefined; columns?: string[] | undefined },
  ctx: z.RefinementCtx,
): void {
  const given = [value.column !== undefined, value.columns !== undefined].filter(Boolean).length;
  if (given !== 1) {
    ctx.addIssue({
      code: 'custom',
      message: given === 0 ? 'give `column` or `columns`' : 'give either `column` or `columns`, not both',
    });
  }
}

/** A standard field (`name`, `emails`, `orcids`, `affiliations`, `articles`). */
export const standardFieldSchema = z.strictObject(valueSourceShape).superRefine(exactlyOneSource);
export type StandardFieldSpec = z.infer<typeof standardFieldSchema>;
/** `write:` of a mapped field. */
export type WritePolicy = 'always' | 'on_create' | 'if_empty';

export const DATE_FORMATS = [
  'DD/MM/YYYY',
  'MM/DD/YYYY',
  'DD.MM.YYYY',
  'DD-MM-YYYY',
  'MM-DD-YYYY',
  'YYYY/MM/DD',
  'YYYY.MM.DD',
] as const;

/**
 * A custom field, keyed in `custom_fields` by its human name as shown in the service
 * (matched case-insensitively). Which extra keys apply depends on the field's data_kind,
 * which the service's listing decides; a key that does not apply is a mapping error.
 */
export const customFieldSpecSchema = z
  .strictObject({
    ...valueSourceShape,
    /** number fields: the decimal separator of text cells. @default "." */
    decimal: z
      .enum(['.', ','])
      .optional()
      .describe('number fields: decimal separator of text cells ("." or ","). Default ".".'),
    /**
     * date fields: accepted text formats besides ISO `YYYY-MM-DD` and Excel serial numbers.
     * Day-first and month-first are never guessed: list the one your file uses.
     */
    date_formats: z
      .array(z.enum(DATE_FORMATS))
      .optional()
      .describe('date fields: text formats accepted besides ISO YYYY-MM-DD and Excel serial numbers.'),
    /** single_option / multi_option: legacy label → option label of the service (case-insensitive). */
    values: z
      .record(z.string().min(1), z.string().min(1))
      .optional()
      .describe('Option fields: legacy label → option label of the service (case-insensitive).'),
  })
  .superRefine(exactlyOneSource);
export type CustomFieldSpec = z.infer<typeof customFieldSpecSchema>;

/**
 * client_id: the record's key in the group. It must stay the same for the same person across
 * runs, or every run deletes and recreates records. The best source is the legacy database's own
 * person ID: it never changes when a person changes email, gains an ORCID or fixes a typo in
 * their name. `from: orcid` / `from: email` are fallbacks for rosters without such an ID; a
 * changed email then looks like a new person.
 */
export const clientIdSchema = z
  .strictObject({
    column: columnName.optional().describe('Column holding a stable person ID (best choice).'),
    columns: z.array(columnName).min(1).optional().describe('Several columns joined with `join`.'),
    /** Joins `columns`. @default "-" */
    join: z.string().optional().describe('Joins `columns`. Default "-".'),
    /** Normalised value: `orcid` = the record's first ORCID; `email` = its first email, lowercased. */
    from: z
      .enum(['orcid', 'email'])
      .optional()
      .describe("Derive from the record's first ORCID or its lowercased first email."),
    transforms: z
      .array(z.enum(['trim', 'collapse_whitespace', 'lower', 'upper']))
      .default(['trim'])
      .describe('Transforms applied to the id before the prefix. Default [trim].'),
    /** Prepended to every id, e.g. `legacy-`. */
    prefix: z.string().default('').describe('Prepended to every id.'),
  })
  .superRefine((value, ctx) => {
    const given = [value.column, value.columns, value.from].filter((v) => v !== undefined).length;
    if (given !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: given === 0 ? 'give one of `column`, `columns` or `from`' : 'give only one of `column`, `columns` or `from`',
      });
    }
  });
export type ClientIdSpec = z.infer<typeof clientIdSchema>;

/**
 * A row filter: a row is skipped (counted as filtered, not rejected) when ANY `skip_rows` entry
 * matches. Comparisons trim the cell and ignore case. Exactly one operator per entry.
 */
export const rowFilterSchema = z
  .strictObject({
    column: columnName,
    equals: z.string().optional(),
    not_equals: z.string().optional(),
    in: z.array(z.string()).min(1).optional(),
    empty: z.literal(true).optional(),
    not_empty: z.literal(true).optional(),
  })
  .superRefine((value, ctx) => {
    const ops = (['equals', 'not_equals', 'in', 'empty', 'not_empty'] as const).filter((k) => value[k] !== undefined);
    if (ops.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: `give exactly one of equals, not_equals, in, empty, not_empty${ops.length ? ` (got ${ops.join(', ')})` : ''}`,
      });
    }
  });
export type RowFilter = z.infer<typeof rowFilterSchema>;

/**
 * What to do when several rows carry the same client_id.
 * - `reject` (default): every such row is rejected as `duplicate_client_id`, each naming the others.
 * - `first`: the first row wins; later ones are ignored (listed as warnings).
 * - `last`: the last row wins; earlier ones are ignored.
 */
export const duplicatePolicySchema = z.enum(['reject', 'first', 'last']);
export type DuplicatePolicy = z.infer<typeof duplicatePolicySchema>;

export const mappingFileSchema = z.strictObject({
  $schema: z.string().optional(),
  version: z.literal(1).default(1),
  client_id: clientIdSchema,
  fields: z.strictObject({
    name: standardFieldSchema,
    emails: standardFieldSchema.optional(),
    orcids: standardFieldSchema.optional(),
    affiliations: standardFieldSchema.optional(),
    articles: standardFieldSchema.optional(),
  }),
  /** Keyed by the custom field's human name (author_from_group fields of the listing). */
  custom_fields: z
    .record(z.string().min(1), customFieldSpecSchema)
    .default({})
    .describe("Keyed by the custom field's name as shown in the service (case-insensitive)."),
  skip_rows: z.array(rowFilterSchema).default([]).describe('A row is skipped when any entry matches.'),
  duplicate_client_ids: duplicatePolicySchema.default('reject'),
  /**
   * Text cells are compared and sent in Unicode NFC, so "José" decomposed (NFD, as macOS and some
   * exports write it) and composed are one value. `as_written` keeps the cells' own form.
   */
  unicode: z
    .enum(['nfc', 'as_written'])
    .default('nfc')
    .describe('Text cells are normalised to Unicode NFC (nfc), or kept as written (as_written).'),
  /**
   * Text values a spreadsheet would run as a formula (`=HYPERLINK(…)`): `warn` syncs them as written
   * with a warning; `reject` makes them invalid values (see `on_invalid`).
   */
  formula_like: z
    .enum(['warn', 'reject'])
    .default('warn')
    .describe('Text values that start like a spreadsheet formula: synced with a warning (warn), or invalid (reject).'),
  /**
   * Email addresses that look like another one: a domain label mixing scripts (`exаmple` with a
   * Cyrillic "а"), full-width characters (`ｊａｎｅ@…`). `warn` syncs them with a warning naming
   * the characters; `reject` makes them invalid values (see `on_invalid`).
   */
  email_lookalikes: z
    .enum(['warn', 'reject'])
    .default('warn')
    .describe('Email addresses with a mixed-script domain label or full-width characters: synced with a warning (warn), or invalid (reject).'),
});
export type MappingFile = z.infer<typeof mappingFileSchema>;
