/**
 * docs/service-contract.md, call 7: `GET /api/external/recommend-journals/{origin_id}/?journals_corpus=all_journals|org_journals`.
 * Needs the Recommend journals plan feature (403) and a manuscript uploaded with that origin_id
 * by the same organization (404).
 */
import { journalsCorpusSchema } from '../../client/schemas.js';
import { queryParts } from '../manuscripts/candidates.js';
import { recommendJournals } from '../manuscripts/journals.js';
import { scholarDbFor } from '../manuscripts/scholar-db.js';
import { manuscriptsOf } from '../manuscripts/state.js';
import { badRequest, forbiddenFeature, json, notFound } from '../reply.js';
import { servedAt, type Route } from '../router.js';
import { ENDPOINTS, routeKey } from '../../client/endpoints.js';

export const routes: Route[] = [
  {
    ...servedAt(ENDPOINTS.recommendJournals),
    auth: 'api-key',
    handle({ org, world, params, query }) {
      if (!org.planFeatures.recommend_journals) throw forbiddenFeature('Recommend journals');
      const corpusParam = query.get('journals_corpus') ?? 'all_journals';
      const corpus = journalsCorpusSchema.safeParse(corpusParam);
      if (!corpus.success) {
        throw badRequest('validation_error', `journals_corpus must be all_journals or org_journals, got ${JSON.stringify(corpusParam)}`);
      }
      const manuscript = manuscriptsOf(world, org).manuscripts.get(params.origin_id ?? '');
      if (!manuscript) {
        throw notFound(`no manuscript with origin_id ${JSON.stringify(params.origin_id)}; upload it first (${routeKey(ENDPOINTS.uploadManuscript)})`);
      }
      // A journal is linked to the org's folder whose fixture entry names it (`folders[].journal_id`).
      const linked = new Map<number, { id: number; name: string }>();
      for (const folder of org.fixture.folders) {
        const state = org.folders.get(folder.name);
        if (folder.journal_id !== undefined && state && !linked.has(folder.journal_id)) linked.set(folder.journal_id, { id: state.id, name: state.name });
      }
      const recommended = recommendJournals({
        db: scholarDbFor(world.fixture),
        query: queryParts(manuscript, org.settings.prioritize),
        onlyJournalIds: corpus.data === 'org_journals' ? new Set(org.fixture.journal_ids) : null,
        folderOf: (id) => linked.get(id) ?? null,
      });
      return json({ recommended_journals: recommended });
    },
  },
];
