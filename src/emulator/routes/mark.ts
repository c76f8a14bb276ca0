/**
 * Test controls for referee marking and webhooks (no auth, like every `/_emulator/` route):
 *
 * - `POST /_emulator/mark` plays a user's click in the service's UI: body
 *   `{origin_id | manuscript_id, author_id, marked: true|false, user_email, org?}`. It answers at
 *   once with the event's `order`; the `mark_as_proposal_referee` envelope is then POSTed in the
 *   background to every webhook target of the org (docs/service-contract.md, The webhook), with retries.
 * - `POST /_emulator/webhooks`: `{url, api_key, org?}` adds a webhook target at run time, and/or
 *   `{retry: {baseDelayMs?, maxDelayMs?, maxAttempts?, timeoutMs?}}` changes the retry policy.
 * - `GET /_emulator/webhooks[?wait_ms=N]`: targets per org and every delivery with its attempts
 *   and status; with `wait_ms` it first waits (at most N ms) until no delivery is pending.
 */
import { z } from 'zod';
import { buildEnvelope, buildPayload, applyMark } from '../manuscripts/marking.js';
import { manuscriptsOf, type StoredManuscript } from '../manuscripts/state.js';
import { badRequest, EmulatorHttpError, json, notFound } from '../reply.js';
import type { Route, RouteContext } from '../router.js';
import { webhookSenderOf } from '../webhook-sender.js';
import type { OrgState } from '../world.js';
import { refereeFinderOf } from './manuscripts.js';

const markBodySchema = z
  .strictObject({
    origin_id: z.string().min(1).optional(),
    manuscript_id: z.number().int().optional(),
    author_id: z.number().int(),
    marked: z.boolean().default(true),
    user_email: z.string().min(3),
    /** Org id, needed only when several orgs use the same origin_id. */
    org: z.number().int().optional(),
  })
  .refine((body) => body.origin_id !== undefined || body.manuscript_id !== undefined, {
    message: 'give origin_id or manuscript_id',
  });

const webhooksBodySchema = z.strictObject({
  url: z.string().url().optional(),
  api_key: z.string().min(1).optional(),
  org: z.number().int().optional(),
  retry: z
    .strictObject({
      baseDelayMs: z.number().nonnegative().optional(),
      maxDelayMs: z.number().nonnegative().optional(),
      maxAttempts: z.number().int().positive().optional(),
      timeoutMs: z.number().positive().optional(),
    })
    .optional(),
});

function parse<T>(schema: z.ZodType<T>, ctx: RouteContext): T {
  const result = schema.safeParse(ctx.jsonObject());
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw badRequest('validation_error', `${issue.path.join('.') || '(body)'}: ${issue.message}`);
  }
  return result.data;
}

function findManuscript(ctx: RouteContext, body: z.infer<typeof markBodySchema>): { org: OrgState; manuscript: StoredManuscript } {
  const hits: { org: OrgState; manuscript: StoredManuscript }[] = [];
  for (const org of ctx.world.orgs) {
    if (body.org !== undefined && org.id !== body.org) continue;
    const state = manuscriptsOf(ctx.world, org);
    const manuscript =
      body.manuscript_id !== undefined ? state.manuscriptsById.get(body.manuscript_id) : state.manuscripts.get(body.origin_id ?? '');
    if (manuscript) hits.push({ org, manuscript });
  }
  if (hits.length === 0) throw notFound(`no manuscript ${body.manuscript_id ?? JSON.stringify(body.origin_id)}; upload it first`);
  if (hits.length > 1) throw badRequest('ambiguous', `origin_id ${JSON.stringify(body.origin_id)} exists in several orgs; add "org"`);
  return hits[0]!;
}

export const routes: Route[] = [
  {
    method: 'POST',
    pattern: '/_emulator/mark',
    auth: 'none',
    handle(ctx) {
      const body = parse(markBodySchema, ctx);
      const { org, manuscript } = findManuscript(ctx, body);
      const state = manuscriptsOf(ctx.world, org);
      const marks = state.marksOf(manuscript.id);
      const outcome = applyMark(manuscript, marks, { authorId: body.author_id, marked: body.marked, userEmail: body.user_email });
      if (!outcome.ok) throw new EmulatorHttpError(outcome.status, outcome.code, outcome.message);

      const order = ctx.world.nextId('webhook-order');
      const payload = buildPayload(manuscript, marks, refereeFinderOf(org, manuscript.folderName));
      const sender = webhookSenderOf(ctx.runtime);
      const deliveries = state.webhooks.map(
        (target) => sender.send(target.url, buildEnvelope({ order, nowMs: ctx.runtime.now(), apiKey: target.apiKey, payload })).id,
      );
      return json({
        ok: true,
        order,
        manuscript_id: manuscript.id,
        origin_id: manuscript.originId,
        marked_author_ids: payload.candidates.map((c) => c.author_id),
        deliveries,
      });
    },
  },
  {
    method: 'POST',
    pattern: '/_emulator/webhooks',
    auth: 'none',
    handle(ctx) {
      const body = parse(webhooksBodySchema, ctx);
      const sender = webhookSenderOf(ctx.runtime);
      if (body.retry) sender.policy = { ...sender.policy, ...body.retry };
      if ((body.url === undefined) !== (body.api_key === undefined)) throw badRequest('validation_error', 'give url and api_key together');
      if (body.url !== undefined && body.api_key !== undefined) {
        const org = body.org === undefined ? ctx.world.orgs[0] : ctx.world.orgs.find((o) => o.id === body.org);
        if (!org) throw notFound(`no org ${body.org}`);
        manuscriptsOf(ctx.world, org).webhooks.push({ url: body.url, apiKey: body.api_key });
      }
      return json({ ok: true, retry: sender.policy });
    },
  },
  {
    method: 'GET',
    pattern: '/_emulator/webhooks',
    auth: 'none',
    async handle(ctx) {
      const sender = webhookSenderOf(ctx.runtime);
      const waitMs = Number(ctx.query.get('wait_ms') ?? '0');
      const idle = Number.isFinite(waitMs) && waitMs > 0 ? await sender.idle(Math.min(waitMs, 60_000)) : undefined;
      return json({
        ...(idle === undefined ? {} : { idle }),
        retry: sender.policy,
        // Keys are not echoed: only whether a target has one.
        targets: ctx.world.orgs.map((org) => ({ org: org.id, urls: manuscriptsOf(ctx.world, org).webhooks.map((t) => t.url) })),
        deliveries: sender.deliveries(),
      });
    },
  },
];
