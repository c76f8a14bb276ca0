/**
 * docs/service-contract.md, call 5: `POST /api/external/authors-group/create/`. Needs the Authors groups plan feature (403),
 * a body with group_name, owner_team, editor_teams, viewer_teams (400), and teams that exist (400
 * naming the team). Not idempotent: the same body twice creates two groups, as the real service does.
 */
import { z } from 'zod';
import { servedAt, type Route } from '../router.js';
import { badRequest, forbiddenFeature, json } from '../reply.js';
import { quirksOf } from '../quirks.js';
import { ENDPOINTS } from '../../client/endpoints.js';

const createGroupBody = z.strictObject({
  group_name: z.string().trim().min(1),
  owner_team: z.string().min(1),
  editor_teams: z.array(z.string()),
  viewer_teams: z.array(z.string()),
});

export const routes: Route[] = [
  {
    ...servedAt(ENDPOINTS.createGroup),
    auth: 'api-key',
    handle(ctx) {
      const { org, world } = ctx;
      if (!org.planFeatures.authors_groups) throw forbiddenFeature('Authors groups');
      const parsed = createGroupBody.safeParse(ctx.jsonObject());
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        const field = issue.path.join('.') || '(body)';
        throw badRequest('validation_error', `${field}: ${issue.message}`);
      }
      const body = parsed.data;
      const teams = [body.owner_team, ...body.editor_teams, ...body.viewer_teams];
      const missing = teams.find((team) => !org.teams.has(team));
      if (missing !== undefined) {
        throw badRequest('unknown_team', `team "${missing}" does not exist in this organization; teams are created in the user interface`);
      }
      const id = world.nextId('group');
      org.groups.set(id, {
        id,
        name: body.group_name,
        label: null,
        owner_team: body.owner_team,
        editor_teams: [...body.editor_teams],
        viewer_teams: [...body.viewer_teams],
        records: new Map(),
      });
      return json({ authors_group_id: id }, quirksOf(ctx.runtime).groupCreatedStatus);
    },
  },
];
