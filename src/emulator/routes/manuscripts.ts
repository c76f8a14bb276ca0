/**
 * docs/service-contract.md, call 6: `POST /api/external/proposal/` (multipart) — stores the manuscript (upsert by
 * origin_id, folder move, folders created on demand) and answers referee candidates, version 7.
 *
 * Authentication: the `X-ApiKey` header (checked by the server) and the `api_key` form field
 * (docs/service-contract.md, Authentication 2), which must be a key of the same organization (401 otherwise).
 * Plan feature (spec "Feature gating"): without Referee finder the upload is refused with 403,
 * unless `exclude_candidates` asks for no candidates — then nothing gated was requested.
 */
import { timingSafeEqual } from 'node:crypto';
import type { UploadResponse } from '../../client/schemas.js';
import { computeCandidates, effectiveAuthors, groupsSettingsOf, queryParts, RESPONSE_VERSION, type GroupView, type ResolvedRefereeFinder } from '../manuscripts/candidates.js';
import { boundaryOf, MultipartError, parseMultipart } from '../manuscripts/multipart.js';
import { scholarDbFor } from '../manuscripts/scholar-db.js';
import { manuscriptsOf } from '../manuscripts/state.js';
import { parseSource, readUploadFields } from '../manuscripts/upload.js';
import { badRequest, EmulatorHttpError, forbiddenFeature, json } from '../reply.js';
import { servedAt, type AuthenticatedContext, type Route } from '../router.js';
import type { OrgState } from '../world.js';
import { ENDPOINTS } from '../../client/endpoints.js';

export const routes: Route[] = [
  {
    ...servedAt(ENDPOINTS.uploadManuscript),
    auth: 'api-key',
    handle: uploadManuscript,
  },
];

function keyBelongsTo(org: OrgState, key: string): boolean {
  const given = Buffer.from(key);
  let ok = false;
  for (const known of org.apiKeys) {
    const expected = Buffer.from(known);
    if (expected.length === given.length && timingSafeEqual(expected, given)) ok = true;
  }
  return ok;
}

/** The folder's Referee Finder settings with its groups resolved (unknown group ids are skipped). */
export function refereeFinderOf(org: OrgState, folderName: string): ResolvedRefereeFinder | null {
  const settings = org.folders.get(folderName)?.referee_finder;
  if (!settings) return null;
  const groups: GroupView[] = settings.authors_groups
    .map((id) => org.groups.get(id))
    .filter((group) => group !== undefined)
    .map((group) => ({ id: group.id, name: group.name, label: group.label, records: group.records }));
  if (groups.length === 0) return null;
  return { groups, effect: settings.effect, boostMultiplier: settings.boost_multiplier ?? 1.5 };
}

async function uploadManuscript(ctx: AuthenticatedContext) {
  const { org, world } = ctx;
  const boundary = boundaryOf(ctx.headers['content-type']);
  if (!boundary) throw badRequest('bad_request', 'send the manuscript as multipart/form-data (Content-Type with a boundary), docs/service-contract.md, call 6');
  let form;
  try {
    form = parseMultipart(ctx.body, boundary);
  } catch (error) {
    if (error instanceof MultipartError) throw badRequest('bad_request', `malformed multipart body: ${error.message}`);
    throw error;
  }
  const fields = readUploadFields(form);
  if (fields.apiKey === null || fields.apiKey === '') {
    throw new EmulatorHttpError(401, 'unauthorized', 'missing api_key form field (docs/service-contract.md, Authentication 2)');
  }
  if (!keyBelongsTo(org, fields.apiKey)) {
    throw new EmulatorHttpError(401, 'unauthorized', 'the api_key form field is not a key of the organization named by X-ApiKey');
  }
  if (!org.planFeatures.referee_finder && !fields.excludeCandidates) throw forbiddenFeature('Referee finder');

  const source = await parseSource(form);
  const folder = world.folder(org, fields.folder);
  const state = manuscriptsOf(world, org);
  const { manuscript } = state.upsert(world, org, {
    originId: fields.originId,
    folderId: folder.id,
    folderName: folder.name,
    title: fields.title,
    abstract: fields.abstract,
    authorsCount: fields.authorsCount,
    formAuthors: fields.authors,
    parsedAuthors: source.authors,
    sourceFile: source.fileName,
    text: source.text,
    references: source.references,
    ranked: new Map(),
  });

  const db = scholarDbFor(world.fixture);
  const prioritize = org.settings.prioritize;
  const refereeFinder = refereeFinderOf(org, folder.name);
  let candidates: UploadResponse['candidates'] = null;
  if (!fields.excludeCandidates) {
    const result = computeCandidates({
      db,
      org: org.fixture,
      settings: org.settings,
      manuscript,
      refereeFinder,
      allGroups: [...org.groups.values()],
      filters: fields.filters,
      marks: state.marksOf(manuscript.id),
      year: new Date(ctx.runtime.now()).getUTCFullYear(),
      urls: { author: (id) => world.authorUrl(id), article: (id) => world.articleUrl(id) },
    });
    manuscript.ranked = result.ranked;
    candidates = result.candidates;
  }

  const authors = effectiveAuthors(manuscript, prioritize);
  const body: UploadResponse = {
    version: RESPONSE_VERSION,
    manuscript_id: manuscript.id,
    origin_id: manuscript.originId,
    candidates,
    authors_groups_settings: groupsSettingsOf(refereeFinder),
    debug_info: {
      source_file: source.fileName,
      parsed_text_len: source.text.length,
      parsed_references: source.references.length,
      extracted_concepts: db.index.conceptsIn(queryParts(manuscript, prioritize).map((p) => p.text).join('\n')).length,
      authors_info: {
        authors_count: authors.length,
        emails_count: authors.filter((a) => a.email).length,
        orcids_count: authors.filter((a) => a.orcid).length,
      },
    },
  };
  return json(body);
}
