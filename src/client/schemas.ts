/**
 * One zod schema per shape of the service contract (`docs/service-contract.md`).
 * Types are inferred from these schemas; responses are parsed with `.loose()` objects so extra
 * fields the service adds later are tolerated, while a missing or mistyped required field fails
 * with an error naming the field.
 */
import { z } from 'zod';

export const dataKindSchema = z.enum(['number', 'str', 'date', 'single_option', 'multi_option']);
export type DataKind = z.infer<typeof dataKindSchema>;

/** True for a custom field of a data_kind the spec lists (and rostersync can write). */
export function hasKnownDataKind<F extends { data_kind: string }>(field: F): field is F & { data_kind: DataKind } {
  return (dataKindSchema.options as readonly string[]).includes(field.data_kind);
}

/** docs/service-contract.md, Custom fields: `options` is present only for single_option / multi_option. */
export const customFieldOptionSchema = z.object({ api_id: z.string(), option: z.string() }).loose();
export const customFieldSchema = z
  .object({
    api_id: z.string(),
    // Any string: the service may add kinds. One the mapping does not use is listed and ignored;
    // a mapped one is a configuration error naming the field (mapping/compile.ts).
    data_kind: z.string(),
    name: z.string(),
    description: z.string().nullable().optional(),
    options: z.array(customFieldOptionSchema).optional(),
  })
  .loose();
export type CustomField = z.infer<typeof customFieldSchema>;

/** docs/service-contract.md, call 8: three owners, each an array of custom fields. */
export const customFieldsListingSchema = z
  .object({
    author_from_group: z.array(customFieldSchema),
    folder: z.array(customFieldSchema),
    proposal: z.array(customFieldSchema),
  })
  .loose();
export type CustomFieldsListing = z.infer<typeof customFieldsListingSchema>;

/** Linked author (docs/service-contract.md, An author-from-group record, `author`). */
export const linkedAuthorSchema = z
  .object({
    id: z.number().int(),
    service_url: z.string(),
    name: z.string(),
    articles_count: z.number().int(),
    h_index: z.number().int(),
    last_articles: z.array(
      z.object({ service_url: z.string(), title: z.string(), year: z.number().int() }).loose(),
    ),
  })
  .loose();
export type LinkedAuthor = z.infer<typeof linkedAuthorSchema>;

const nullableStringList = z.array(z.string()).nullable();

/** The standard (non custom) fields of an author-from-group record. */
export const STANDARD_FIELDS = ['name', 'emails', 'orcids', 'articles', 'affiliations'] as const;
export type StandardField = (typeof STANDARD_FIELDS)[number];

/**
 * Read shape (docs/service-contract.md, call 1). Custom field values arrive under their api_id as extra keys, so the
 * object is loose; `author` is null when no author is linked.
 */
export const authorFromGroupSchema = z
  .object({
    name: z.string(),
    emails: nullableStringList.optional(),
    orcids: nullableStringList.optional(),
    articles: nullableStringList.optional(),
    affiliations: nullableStringList.optional(),
    author: linkedAuthorSchema.nullable().optional(),
  })
  .loose();
export type AuthorFromGroup = z.infer<typeof authorFromGroupSchema>;

/** Custom field value shapes by data_kind (spec table). */
export const customFieldValueSchema = z.union([z.number(), z.string(), z.array(z.string()), z.null()]);
export type CustomFieldValue = z.infer<typeof customFieldValueSchema>;

/** A value of one field of a record in the write shape, standard or custom; null clears the field. */
export type FieldValue = string | string[] | CustomFieldValue;

/** Write body of the full POST (docs/service-contract.md, call 2): `name` required, custom field api_ids as extra keys. */
export const authorWriteSchema = z
  .object({
    name: z.string().min(1),
    emails: nullableStringList.optional(),
    orcids: nullableStringList.optional(),
    articles: nullableStringList.optional(),
    affiliations: nullableStringList.optional(),
  })
  .catchall(customFieldValueSchema);
export type AuthorWrite = z.infer<typeof authorWriteSchema>;

/** Partial update body (docs/service-contract.md, call 3): every field optional; null clears a field. */
export const authorPatchSchema = z
  .object({
    name: z.string().min(1).optional(),
    emails: nullableStringList.optional(),
    orcids: nullableStringList.optional(),
    articles: nullableStringList.optional(),
    affiliations: nullableStringList.optional(),
  })
  .catchall(customFieldValueSchema);
export type AuthorPatch = z.infer<typeof authorPatchSchema>;

export const okResponseSchema = z.object({ ok: z.boolean() }).loose();
export type OkResponse = z.infer<typeof okResponseSchema>;

/** docs/service-contract.md, call 5. */
export const createGroupRequestSchema = z.object({
  group_name: z.string().min(1),
  owner_team: z.string().min(1),
  editor_teams: z.array(z.string()),
  viewer_teams: z.array(z.string()),
});
export type CreateGroupRequest = z.infer<typeof createGroupRequestSchema>;
export const createGroupResponseSchema = z.object({ authors_group_id: z.number().int() }).loose();
export type CreateGroupResponse = z.infer<typeof createGroupResponseSchema>;

/** The service's authors_groups_settings. `boost_multiplier` only with effect `boost`. */
export const authorsGroupRefSchema = z
  .object({ id: z.number().int(), name: z.string(), label: z.string().nullable() })
  .loose();
export const authorsGroupsSettingsSchema = z
  .object({
    authors_groups: z.array(authorsGroupRefSchema),
    effect: z.enum(['highlight', 'limit_to', 'boost']),
    boost_multiplier: z.number().optional(),
  })
  .loose();
export type AuthorsGroupsSettings = z.infer<typeof authorsGroupsSettingsSchema>;

/** The upload answer's debug_info. */
export const debugInfoSchema = z
  .object({
    source_file: z.string().nullable(),
    parsed_text_len: z.number().int(),
    parsed_references: z.number().int(),
    extracted_concepts: z.number().int(),
    authors_info: z
      .object({
        authors_count: z.number().int(),
        emails_count: z.number().int(),
        orcids_count: z.number().int(),
      })
      .loose(),
  })
  .loose();
export type DebugInfo = z.infer<typeof debugInfoSchema>;

const existsFlag = z.object({ exists: z.boolean() }).loose();

export const candidateGroupSchema = z
  .object({ group_id: z.number().int(), client_id: z.string().nullable() })
  .loose();

export const relevantArticleSchema = z
  .object({ id: z.number().int(), title: z.string(), year: z.number().int(), url: z.string() })
  .loose();

/**
 * Referee candidate. Fields added in version 6 (marked_by and the conflict objects) and version 7
 * (relevant_articles) are optional so older response versions still parse.
 */
export const candidateSchema = z
  .object({
    name: z.string(),
    first_name: z.string(),
    last_name: z.string(),
    middle_name: z.string().nullable(),
    suffix: z.string().nullable(),
    author_id: z.number().int(),
    email: z.string().nullable(),
    orcid: z.string().nullable(),
    affiliation: z.string().nullable(),
    articlesCount: z.number().int(),
    citationsCount: z.number().int(),
    hIndex: z.number().int(),
    score: z.number(),
    url: z.string(),
    relevant_concepts: z.array(z.string()),
    relevant_articles: z.array(relevantArticleSchema).optional(),
    authors_groups: z.array(candidateGroupSchema),
    marked: z.boolean(),
    marked_by: z.string().nullable().optional(),
    coauth_conflicts: existsFlag.optional(),
    aff_conflicts: existsFlag.optional(),
    retracted_articles: existsFlag.optional(),
    referenced_articles: existsFlag.optional(),
    external_coi: existsFlag.optional(),
  })
  .loose();
export type Candidate = z.infer<typeof candidateSchema>;

/** docs/service-contract.md, call 6 response. */
export const uploadResponseSchema = z
  .object({
    version: z.number().int(),
    manuscript_id: z.number().int(),
    origin_id: z.string(),
    candidates: z.array(candidateSchema).nullable(),
    authors_groups_settings: authorsGroupsSettingsSchema.nullable().optional(),
    debug_info: debugInfoSchema,
  })
  .loose();
export type UploadResponse = z.infer<typeof uploadResponseSchema>;

/** A recommended journal (docs/service-contract.md, call 7). */
export const recommendedJournalSchema = z
  .object({
    id: z.number().int(),
    title: z.string(),
    score: z.number(),
    publisher_name: z.string().nullable(),
    folder_id: z.number().int().nullable(),
    folder_name: z.string().nullable(),
    relevant_articles: z.array(
      z.object({ id: z.number().int(), title: z.string(), year: z.number().int() }).loose(),
    ),
  })
  .loose();
export type RecommendedJournal = z.infer<typeof recommendedJournalSchema>;
export const recommendJournalsResponseSchema = z
  .object({ recommended_journals: z.array(recommendedJournalSchema) })
  .loose();
export type RecommendJournalsResponse = z.infer<typeof recommendJournalsResponseSchema>;
export const journalsCorpusSchema = z.enum(['all_journals', 'org_journals']);
export type JournalsCorpus = z.infer<typeof journalsCorpusSchema>;

/**
 * Webhook candidate (docs/service-contract.md, The webhook): the upload candidate without relevant_articles and the v6
 * conflict objects; `marked` is always true and `marked_by` always set.
 */
export const webhookCandidateSchema = candidateSchema
  .omit({
    relevant_articles: true,
    coauth_conflicts: true,
    aff_conflicts: true,
    retracted_articles: true,
    referenced_articles: true,
    external_coi: true,
  })
  .extend({ marked: z.literal(true), marked_by: z.string() });
export type WebhookCandidate = z.infer<typeof webhookCandidateSchema>;

/** docs/service-contract.md, The webhook: the payload: the webhook documents only highlight and limit_to. */
export const webhookPayloadSchema = z
  .object({
    version: z.number().int(),
    manuscript_id: z.number().int(),
    origin_id: z.string().nullable(),
    candidates: z.array(webhookCandidateSchema),
    authors_groups_settings: z
      .object({
        authors_groups: z.array(authorsGroupRefSchema),
        effect: z.enum(['highlight', 'limit_to']),
      })
      .loose()
      .nullable(),
  })
  .loose();
export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;

export const webhookEnvelopeSchema = z
  .object({
    action: z.literal('mark_as_proposal_referee'),
    timestamp: z.number().int(),
    order: z.number().int(),
    api_key: z.string(),
    test: z.boolean().optional(),
    payload: webhookPayloadSchema,
  })
  .loose();
export type WebhookEnvelope = z.infer<typeof webhookEnvelopeSchema>;
