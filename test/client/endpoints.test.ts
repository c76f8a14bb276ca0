/**
 * The endpoint table (src/client/endpoints.ts) is the one place a route is written: it must say
 * what docs/service-contract.md says, the emulator must serve every entry of it, and `pathOf`
 * must refuse, before sending, a value that cannot name what it should.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ClientInputError } from '../../src/client/errors.js';
import { ENDPOINTS, pathOf, routeKey } from '../../src/client/endpoints.js';
import { Router } from '../../src/emulator/router.js';
import { allRoutes } from '../../src/emulator/routes/index.js';

const contract = readFileSync(new URL('../../docs/service-contract.md', import.meta.url), 'utf8');

/** The endpoints table of the contract: `| 1 | \`GET /api/external/.../{group_id}/\` | ...`, as `METHOD /path/:param/`. */
function contractRoutes(): string[] {
  return [...contract.matchAll(/^\| \d \| `(GET|POST|DELETE) (\/api\/[^`?\s]+)[^`]*`/gm)].map(
    ([, method, path]) => `${method} ${path!.replace(/\{(\w+)\}/g, ':$1')}`,
  );
}

describe('the endpoint table', () => {
  it('holds the eight endpoints of docs/service-contract.md, in its order', () => {
    const documented = contractRoutes();
    expect(documented).toHaveLength(8);
    expect(Object.values(ENDPOINTS).map(routeKey)).toEqual(documented);
  });

  it('is what the emulator serves: each route matches, with its parameters decoded', () => {
    const router = new Router(allRoutes);
    for (const endpoint of Object.values(ENDPOINTS)) {
      const match = router.match(endpoint.method, pathOf(endpoint, { group_id: 12, client_id: 'a/b c', origin_id: 'M-1' }));
      expect(match.kind, routeKey(endpoint)).toBe('match');
      if (match.kind !== 'match') continue;
      expect(routeKey({ method: match.route.method, route: match.route.pattern })).toBe(routeKey(endpoint));
      for (const [name, value] of Object.entries(match.params)) expect(value).toBe({ group_id: '12', client_id: 'a/b c', origin_id: 'M-1' }[name]);
    }
  });

  it('writes ids each into one percent-encoded segment', () => {
    expect(pathOf(ENDPOINTS.patchAuthor, { group_id: 7, client_id: 'ä b/c?d#e' })).toBe('/api/external/author-from-group/7/%C3%A4%20b%2Fc%3Fd%23e/partial/');
    expect(pathOf(ENDPOINTS.recommendJournals, { origin_id: '..x' })).toBe('/api/external/recommend-journals/..x/');
    expect(pathOf(ENDPOINTS.listCustomFields)).toBe('/api/external/custom-fields/all/');
  });

  it.each([
    [{ group_id: 0, client_id: 'x' }, 'group id must be a positive integer, got 0'],
    [{ group_id: -3, client_id: 'x' }, 'group id must be a positive integer, got -3'],
    [{ group_id: 1.5, client_id: 'x' }, 'group id must be a positive integer, got 1.5'],
    [{ group_id: '12', client_id: 'x' }, 'group id must be a positive integer, got 12'],
    [{ group_id: 1, client_id: '..' }, 'client_id ".." cannot be used in a URL path'],
    [{ group_id: 1, client_id: '' }, 'client_id "" cannot be used in a URL path'],
  ])('refuses %o before sending: %s', (values, message) => {
    const thrown = ((): unknown => {
      try {
        return pathOf(ENDPOINTS.getAuthor, values);
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(ClientInputError);
    expect((thrown as Error).message).toBe(message);
  });

  it('names a parameter left without a value (a programming error, not user input)', () => {
    expect(() => pathOf(ENDPOINTS.getAuthor, { group_id: 1 })).toThrow(/no value or encoding for :client_id/);
  });
});
