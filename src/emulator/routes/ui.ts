/**
 * Test controls that play an editor working in the service's user interface (no auth; never
 * rate limited, faulted or counted, like every `/_emulator/` route):
 * - `POST /_emulator/ui/groups?org=ID`: create a group by hand (`{name, owner_team?}`), as another team would;
 * - `POST /_emulator/ui/groups/:group_id/records/:client_id`: set fields of a record in the UI.
 *   The body holds fields by key, custom fields by api_id or, as a person in the UI sees them, by
 *   name with option labels (what `rostersync author patch` takes); values are checked like a
 *   partial update; `null` clears a field. The service's API itself takes api_ids only. An absent record is created (then `name` is required), as an editor
 *   adding a person by hand would.
 * - `DELETE /_emulator/ui/groups/:group_id/records/:client_id`: delete a record in the UI;
 * - `DELETE /_emulator/ui/groups/:group_id`: delete a whole group, records and all, as an admin would.
 *
 * Tests use them to prove that fields set in the UI survive a sync, that records the pipeline
 * does not own are never overwritten, and that the drift check notices what was deleted or edited.
 */
import type { Route, RouteContext } from '../router.js';
import { badRequest, json, notFound } from '../reply.js';
import { applyPartial, fullRecord, validateWriteBody } from '../record-validation.js';
import type { OrgState } from '../world.js';

function orgOf(ctx: RouteContext): OrgState {
  const wanted = ctx.query.get('org');
  const org = wanted === null ? ctx.world.orgs[0] : ctx.world.orgs.find((candidate) => String(candidate.id) === wanted);
  if (!org) throw notFound(`organization ${wanted} does not exist`);
  return org;
}

/** Custom fields named as the UI shows them (name, option labels) turned into api_ids; api_ids pass as they are. */
function byApiId(org: OrgState, body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const field = org.customFields.author_from_group.find((f) => f.name === key);
    if (!field) {
      out[key] = value;
      continue;
    }
    const option = (label: unknown): unknown => field.options?.find((o) => o.option === label)?.api_id ?? label;
    out[field.api_id] = Array.isArray(value) ? value.map(option) : field.options ? option(value) : value;
  }
  return out;
}

export const routes: Route[] = [
  {
    method: 'POST',
    pattern: '/_emulator/ui/groups',
    auth: 'none',
    handle(ctx) {
      const org = orgOf(ctx);
      const body = ctx.jsonObject();
      if (typeof body.name !== 'string' || body.name === '') throw badRequest('validation_error', 'name: a non-empty string is required');
      const id = ctx.world.nextId('group');
      const ownerTeam = typeof body.owner_team === 'string' ? body.owner_team : [...org.teams][0] ?? '';
      org.groups.set(id, { id, name: body.name, label: null, owner_team: ownerTeam, editor_teams: [], viewer_teams: [], records: new Map() });
      return json({ authors_group_id: id });
    },
  },
  {
    method: 'POST',
    pattern: '/_emulator/ui/groups/:group_id/records/:client_id',
    auth: 'none',
    handle(ctx) {
      const org = orgOf(ctx);
      const group = org.groups.get(Number(ctx.params.group_id));
      if (!group) throw notFound(`authors group ${ctx.params.group_id} does not exist in organization ${org.id}`);
      const body = byApiId(org, ctx.jsonObject());
      const clientId = ctx.params.client_id!;
      const existing = group.records.get(clientId);
      if (existing) {
        validateWriteBody(org, body, 'partial');
        applyPartial(existing, body);
      } else {
        validateWriteBody(org, body, 'full');
        group.records.set(clientId, fullRecord(body));
      }
      return json({ ok: true, created: existing === undefined });
    },
  },
  {
    method: 'DELETE',
    pattern: '/_emulator/ui/groups/:group_id/records/:client_id',
    auth: 'none',
    handle(ctx) {
      const group = orgOf(ctx).groups.get(Number(ctx.params.group_id));
      if (!group?.records.delete(ctx.params.client_id!)) throw notFound(`no record ${ctx.params.client_id} in authors group ${ctx.params.group_id}`);
      return json({ ok: true });
    },
  },
  {
    method: 'DELETE',
    pattern: '/_emulator/ui/groups/:group_id',
    auth: 'none',
    handle(ctx) {
      if (!orgOf(ctx).groups.delete(Number(ctx.params.group_id))) throw notFound(`authors group ${ctx.params.group_id} does not exist`);
      return json({ ok: true });
    },
  },
];
