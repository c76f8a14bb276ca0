/**
 * Test controls under `/_emulator/` (no auth; never rate limited, faulted or counted):
 * - `GET stats`: calls by "METHOD pattern" and status, write totals, rate-limited and fault counts;
 * - `GET state[?org=ID][&group=ID]`: groups and their records per org;
 * - `POST reset[?keep_stats=1]`: back to the fixture state (and zeroed stats);
 * - `GET faults`, `POST faults`: read or change rps, burst, faults, latency, seed at run time.
 */
import type { Route } from '../router.js';
import { badRequest, json } from '../reply.js';
import { runtimePatchSchema } from '../runtime.js';

export const routes: Route[] = [
  {
    method: 'GET',
    pattern: '/_emulator/stats',
    auth: 'none',
    handle: ({ runtime }) => json(runtime.stats.snapshot()),
  },
  {
    method: 'GET',
    pattern: '/_emulator/state',
    auth: 'none',
    handle({ world, query }) {
      const orgFilter = query.get('org');
      const groupFilter = query.get('group');
      const orgs = world.orgs
        .filter((org) => orgFilter === null || String(org.id) === orgFilter)
        .map((org) => ({
          id: org.id,
          name: org.name,
          groups: [...org.groups.values()]
            .filter((group) => groupFilter === null || String(group.id) === groupFilter)
            .map((group) => ({
              id: group.id,
              name: group.name,
              label: group.label,
              owner_team: group.owner_team,
              editor_teams: group.editor_teams,
              viewer_teams: group.viewer_teams,
              records: Object.fromEntries(group.records),
            })),
          folders: [...org.folders.values()],
          manuscripts: org.manuscripts.size,
        }));
      return json({ orgs });
    },
  },
  {
    method: 'POST',
    pattern: '/_emulator/reset',
    auth: 'none',
    handle({ world, runtime, query }) {
      world.reset();
      if (query.get('keep_stats') !== '1') runtime.stats.reset();
      return json({ ok: true });
    },
  },
  {
    method: 'GET',
    pattern: '/_emulator/faults',
    auth: 'none',
    handle: ({ runtime }) => json(runtime.describe()),
  },
  {
    method: 'POST',
    pattern: '/_emulator/faults',
    auth: 'none',
    handle(ctx) {
      const parsed = runtimePatchSchema.safeParse(ctx.jsonObject());
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw badRequest('validation_error', `${issue.path.join('.') || '(body)'}: ${issue.message}`);
      }
      return json(ctx.runtime.update(parsed.data));
    },
  },
];
