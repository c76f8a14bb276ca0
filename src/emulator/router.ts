/**
 * A tiny router: routes are plain data (`Route`), matched segment by segment. Route modules in
 * `routes/` each export `routes: Route[]`; `routes/index.ts` concatenates them.
 *
 * Patterns are literal paths with `:name` segments, e.g.
 * `/api/external/author-from-group/:group_id/:client_id/`. The trailing slash is significant, as in
 * the spec's paths: `/api/external/custom-fields/all` (no slash) is a 404.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Endpoint } from '../client/endpoints.js';
import type { Reply } from './reply.js';
import { badRequest } from './reply.js';
import type { OrgState, World } from './world.js';
import type { EmulatorRuntime } from './runtime.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Everything a handler may look at. Built once per request; `json()` parses lazily. */
export interface RouteContext {
  method: string;
  /** The raw pathname (not decoded); `params` are decoded. */
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The raw request body (empty Buffer when none), e.g. for multipart parsing. */
  body: Buffer;
  /** The body parsed as JSON; throws a 400 `invalid_json` error when it is not JSON. */
  json(): unknown;
  /** The body parsed as a JSON object; throws a 400 when it is not JSON or not an object. */
  jsonObject(): Record<string, unknown>;
  /** The organization whose API key authenticated the call; null for `auth: 'none'` routes. */
  org: OrgState | null;
  world: World;
  /** Run-time settings, stats, clock and close hooks of this emulator instance. */
  runtime: EmulatorRuntime;
}

export type AuthenticatedContext = RouteContext & { org: OrgState };

interface RouteBase {
  method: HttpMethod;
  pattern: string;
}

/** A route that needs a valid `X-ApiKey` header (docs/service-contract.md, Authentication, item 1). */
export interface ApiKeyRoute extends RouteBase {
  auth: 'api-key';
  handle(ctx: AuthenticatedContext): Reply | Promise<Reply>;
}

/**
 * A route without header authentication. Routes under `/_emulator/` are test controls: never
 * rate limited, faulted or counted in stats. A service route may also use `auth: 'none'` and check
 * credentials itself (e.g. the upload's `api_key` form field via `world.orgByApiKey`).
 */
export interface OpenRoute extends RouteBase {
  auth: 'none';
  handle(ctx: RouteContext): Reply | Promise<Reply>;
}

export type Route = ApiKeyRoute | OpenRoute;

/** The method and pattern of a service endpoint, from the client's table (`client/endpoints.ts`). */
export function servedAt(endpoint: Pick<Endpoint, 'method' | 'route'>): RouteBase {
  return { method: endpoint.method, pattern: endpoint.route };
}

interface CompiledRoute {
  route: Route;
  /** Literal segment text, or null for a parameter. */
  segments: Array<{ literal: string } | { param: string }>;
}

export type MatchResult =
  | { kind: 'match'; route: Route; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: HttpMethod[]; pattern: string }
  | { kind: 'none' };

export class Router {
  /** Compiled routes grouped by segment count, so a lookup scans only same-length patterns. */
  private readonly bySegmentCount = new Map<number, CompiledRoute[]>();

  constructor(routes: readonly Route[]) {
    for (const route of routes) {
      if (!route.pattern.startsWith('/')) throw new Error(`route pattern must start with "/": ${route.pattern}`);
      const segments = route.pattern
        .split('/')
        .map((part) => (part.startsWith(':') ? { param: part.slice(1) } : { literal: part }));
      const list = this.bySegmentCount.get(segments.length) ?? [];
      const duplicate = list.find(
        (other) => other.route.method === route.method && other.route.pattern === route.pattern,
      );
      if (duplicate) throw new Error(`duplicate route ${route.method} ${route.pattern}`);
      list.push({ route, segments });
      this.bySegmentCount.set(segments.length, list);
    }
  }

  match(method: string, pathname: string): MatchResult {
    const parts = pathname.split('/');
    const candidates = this.bySegmentCount.get(parts.length);
    if (!candidates) return { kind: 'none' };
    let allowed: HttpMethod[] | null = null;
    let allowedPattern = '';
    for (const candidate of candidates) {
      const params = matchSegments(candidate.segments, parts);
      if (!params) continue;
      if (candidate.route.method === method) return { kind: 'match', route: candidate.route, params };
      (allowed ??= []).push(candidate.route.method);
      allowedPattern = candidate.route.pattern;
    }
    return allowed ? { kind: 'method-not-allowed', allowed, pattern: allowedPattern } : { kind: 'none' };
  }
}

function matchSegments(segments: CompiledRoute['segments'], parts: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const part = parts[i]!;
    if ('literal' in segment) {
      if (segment.literal !== part) return null;
    } else {
      if (part === '') return null;
      try {
        params[segment.param] = decodeURIComponent(part);
      } catch {
        throw badRequest('bad_request', `path segment "${part}" is not valid percent-encoding`);
      }
    }
  }
  return params;
}
