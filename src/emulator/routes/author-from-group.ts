/**
 * docs/service-contract.md, calls 1–4: author-from-group records inside an authors group, keyed by the client-side id.
 * The group must belong to the caller's organization (else 404, like an unknown group).
 */
import { servedAt, type AuthenticatedContext, type Route } from '../router.js';
import { json, notFound, type Reply } from '../reply.js';
import { applyPartial, fullRecord, validateWriteBody, type StoredRecord } from '../record-validation.js';
import type { GroupState, OrgState, World } from '../world.js';
import { echoedKey, quirksOf, refusesWrite } from '../quirks.js';
import { clientIdPathProblem } from '../../client/path-rules.js';
import type { EmulatorRuntime } from '../runtime.js';
import { ENDPOINTS } from '../../client/endpoints.js';

function groupOf(ctx: AuthenticatedContext): GroupState {
  // Quirk strictClientIds: the server in front of the service does not route such a path at all.
  if (quirksOf(ctx.runtime).strictClientIds && clientIdPathProblem(ctx.params.client_id!) !== undefined) {
    throw notFound(`no such endpoint: ${ctx.method} ${ctx.path}`);
  }
  const raw = ctx.params.group_id!;
  // docs/service-contract.md, call 1: group_id is an integer; anything else cannot name a group.
  const id = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  const group = Number.isSafeInteger(id) ? ctx.org.groups.get(id) : undefined;
  if (!group) throw notFound(`authors group ${raw} does not exist in this organization`);
  return group;
}

function recordOf(group: GroupState, clientId: string): StoredRecord {
  const record = group.records.get(clientId);
  if (!record) throw notFound(`no author with client_id "${clientId}" in authors group ${group.id}`);
  return record;
}

/** Quirk okFalse: the service refuses the write with 200 `{"ok": false}` and changes nothing. */
const REFUSED = (ctx: AuthenticatedContext): Reply =>
  json(quirksOf(ctx.runtime).echoKey ? { ok: false, detail: `refused for key ${echoedKey(ctx.headers['x-apikey'])}` } : { ok: false });

/**
 * Quirk optionOrder `service`: multi_option values come back in the reverse order of the field's
 * options, not as written (the spec calls them a list of api_ids; a set in all but name).
 */
function inServiceOrder(org: OrgState, runtime: EmulatorRuntime, record: StoredRecord): StoredRecord {
  if (quirksOf(runtime).optionOrder !== 'service') return record;
  const out: StoredRecord = { ...record };
  for (const [key, value] of Object.entries(record)) {
    const field = org.authorFieldsById.get(key)?.field;
    if (field?.data_kind !== 'multi_option' || !Array.isArray(value)) continue;
    const rank = new Map((field.options ?? []).map((option, index) => [option.api_id, index]));
    out[key] = [...(value as string[])].sort((a, b) => (rank.get(b) ?? 0) - (rank.get(a) ?? 0));
  }
  return out;
}

/** Read shape (docs/service-contract.md, An author-from-group record): standard fields, custom fields that have a value, `author`. */
function readShape(world: World, record: StoredRecord): Record<string, unknown> {
  const author = world.linkedAuthorOf(record);
  let linked: Record<string, unknown> | null = null;
  if (author) {
    const articles = world.authorDb.articlesByAuthor.get(author.id) ?? [];
    linked = {
      id: author.id,
      service_url: world.authorUrl(author.id),
      name: [author.first_name, author.middle_name, author.last_name, author.suffix].filter(Boolean).join(' '),
      articles_count: articles.length,
      h_index: author.h_index,
      // The service's stated limits: the last three published articles (newest first).
      last_articles: articles.slice(0, 3).map((article) => ({
        service_url: world.articleUrl(article.id),
        title: article.title,
        year: article.year,
      })),
    };
  }
  return { ...record, author: linked };
}

export const routes: Route[] = [
  {
    ...servedAt(ENDPOINTS.getAuthor),
    auth: 'api-key',
    handle(ctx) {
      const record = recordOf(groupOf(ctx), ctx.params.client_id!);
      return json(readShape(ctx.world, inServiceOrder(ctx.org, ctx.runtime, record)));
    },
  },
  {
    ...servedAt(ENDPOINTS.putAuthor),
    auth: 'api-key',
    handle(ctx) {
      const group = groupOf(ctx);
      const body = ctx.jsonObject();
      validateWriteBody(ctx.org, body, 'full');
      if (refusesWrite(ctx.runtime, ctx.params.client_id!)) return REFUSED(ctx);
      // docs/service-contract.md, call 2 / Records 3: created when absent, fully replaced when present.
      group.records.set(ctx.params.client_id!, fullRecord(body));
      return json({ ok: true });
    },
  },
  {
    ...servedAt(ENDPOINTS.patchAuthor),
    auth: 'api-key',
    handle(ctx) {
      const group = groupOf(ctx);
      const record = recordOf(group, ctx.params.client_id!);
      const body = ctx.jsonObject();
      validateWriteBody(ctx.org, body, 'partial');
      if (refusesWrite(ctx.runtime, ctx.params.client_id!)) return REFUSED(ctx);
      applyPartial(record, body);
      return json({ ok: true });
    },
  },
  {
    ...servedAt(ENDPOINTS.deleteAuthor),
    auth: 'api-key',
    handle(ctx) {
      const group = groupOf(ctx);
      recordOf(group, ctx.params.client_id!);
      if (refusesWrite(ctx.runtime, ctx.params.client_id!)) return REFUSED(ctx);
      group.records.delete(ctx.params.client_id!);
      return json({ ok: true });
    },
  },
];
