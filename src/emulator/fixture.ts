/**
 * The emulator's fixture: the organization(s) the emulated service knows, and the scholarly
 * database behind referee candidates and journal recommendations.
 *
 * One schema gives the type, the runtime check (unknown keys are errors) and the JSON Schema.
 * Without `--fixture` the built-in `default-fixture.yaml` beside this file is used.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { customFieldSchema } from '../client/schemas.js';

const strictCustomField = customFieldSchema;

export const planFeaturesSchema = z.strictObject({
  /** Manuscript upload (candidates are returned only with it). */
  referee_finder: z.boolean().default(true),
  recommend_journals: z.boolean().default(true),
  /** Authors groups creation. */
  authors_groups: z.boolean().default(true),
});

/** The three organization-wide settings of the spec ("Organization-wide settings"). */
export const orgSettingsSchema = z.strictObject({
  prioritize: z.enum(['parsed_data', 'metadata']).default('parsed_data'),
  include_candidates_with_conflicts: z.boolean().default(true),
  include_candidates_without_email: z.boolean().default(true),
});

export const folderSchema = z.strictObject({
  name: z.string().min(1),
  /** Journal linked to this folder (recommend-journals `folder_id` / `folder_name`). */
  journal_id: z.number().int().optional(),
  /** The folder's Referee Finder settings; group ids refer to groups of this org. */
  referee_finder: z
    .strictObject({
      authors_groups: z.array(z.number().int()),
      effect: z.enum(['highlight', 'limit_to', 'boost']),
      boost_multiplier: z.number().positive().optional(),
    })
    .optional(),
});

export const preexistingGroupSchema = z.strictObject({
  id: z.number().int().positive(),
  name: z.string().min(1),
  label: z.string().nullable().default(null),
  owner_team: z.string(),
  editor_teams: z.array(z.string()).default([]),
  viewer_teams: z.array(z.string()).default([]),
  /** Records already in the group, keyed by client_id, in the write shape (custom fields by api_id). */
  records: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
});

export const webhookTargetSchema = z.strictObject({
  url: z.string().url(),
  /** Each webhook URL has its own key, sent as `api_key` in the body. */
  api_key: z.string().min(1),
});

export const orgSchema = z.strictObject({
  id: z.number().int().positive(),
  name: z.string().min(1),
  api_keys: z.array(z.string().min(8)).min(1),
  plan_features: planFeaturesSchema.default({
    referee_finder: true,
    recommend_journals: true,
    authors_groups: true,
  }),
  settings: orgSettingsSchema.default({
    prioritize: 'parsed_data',
    include_candidates_with_conflicts: true,
    include_candidates_without_email: true,
  }),
  teams: z.array(z.string().min(1)),
  custom_fields: z.strictObject({
    author_from_group: z.array(strictCustomField).default([]),
    folder: z.array(strictCustomField).default([]),
    proposal: z.array(strictCustomField).default([]),
  }),
  /**
   * api_id of the author_from_group custom field through which the client flags a conflict of
   * interest: a record whose value is truthy ("yes"/"true"/1/option labelled Yes) marks its
   * linked author with `external_coi.exists = true`.
   */
  external_coi_field: z.string().optional(),
  /** Journal ids linked to this organization (`journals_corpus=org_journals`). */
  journal_ids: z.array(z.number().int()).default([]),
  folders: z.array(folderSchema).default([]),
  groups: z.array(preexistingGroupSchema).default([]),
  webhooks: z.array(webhookTargetSchema).default([]),
});

export const authorSchema = z.strictObject({
  id: z.number().int().positive(),
  first_name: z.string(),
  last_name: z.string(),
  middle_name: z.string().nullable().default(null),
  suffix: z.string().nullable().default(null),
  emails: z.array(z.string()).default([]),
  orcid: z.string().nullable().default(null),
  /** Most recent first. */
  affiliations: z.array(z.string()).default([]),
  h_index: z.number().int().nonnegative(),
  citations: z.number().int().nonnegative(),
});

export const articleSchema = z.strictObject({
  id: z.number().int().positive(),
  title: z.string(),
  abstract: z.string().default(''),
  year: z.number().int(),
  concepts: z.array(z.string()).default([]),
  author_ids: z.array(z.number().int()).min(1),
  journal_id: z.number().int().nullable().default(null),
  doi: z.string().nullable().default(null),
  retracted: z.boolean().default(false),
});

export const journalSchema = z.strictObject({
  id: z.number().int().positive(),
  title: z.string(),
  publisher_name: z.string().nullable().default(null),
});

export const fixtureSchema = z.strictObject({
  orgs: z.array(orgSchema).min(1),
  authors: z.array(authorSchema).default([]),
  articles: z.array(articleSchema).default([]),
  journals: z.array(journalSchema).default([]),
});

export type Fixture = z.infer<typeof fixtureSchema>;
export type FixtureOrg = z.infer<typeof orgSchema>;
export type FixtureAuthor = z.infer<typeof authorSchema>;
export type FixtureArticle = z.infer<typeof articleSchema>;
export type FixtureJournal = z.infer<typeof journalSchema>;
export type FixtureFolder = z.infer<typeof folderSchema>;

export const DEFAULT_FIXTURE_PATH = fileURLToPath(new URL('./default-fixture.yaml', import.meta.url));

/** Parses and validates a fixture document (YAML or JSON text). */
export function parseFixture(text: string, origin: string): Fixture {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw new Error(`${origin}: not valid YAML or JSON: ${(error as Error).message}`);
  }
  const result = fixtureSchema.safeParse(doc);
  if (!result.success) {
    const problems = result.error.issues
      .slice(0, 10)
      .map((issue) => `  - ${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('\n');
    throw new Error(`${origin}: invalid emulator fixture:\n${problems}`);
  }
  return result.data;
}

export function loadFixture(path: string = DEFAULT_FIXTURE_PATH): Fixture {
  return parseFixture(readFileSync(path, 'utf8'), path);
}
