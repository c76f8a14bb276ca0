/**
 * The service's endpoints as data (`docs/service-contract.md` §§ 1–8), in the manner of
 * stripe-node's method specs (`stripeMethod({method, fullPath})`): each names its method, its
 * route, the schema of its answer, the `{"ok": false}` rule and whether a repeat is safe. The client
 * builds its calls from this table, the emulator's router serves the same routes, and tests name
 * routes and paths through it, so a path is written once.
 */
import type { z } from 'zod';
import { ClientInputError } from './errors.js';
import type { RetryMode } from './retry-policy.js';
import {
  authorFromGroupSchema,
  authorPatchSchema,
  authorWriteSchema,
  createGroupRequestSchema,
  createGroupResponseSchema,
  customFieldsListingSchema,
  okResponseSchema,
  recommendJournalsResponseSchema,
  uploadResponseSchema,
} from './schemas.js';

export type EndpointMethod = 'GET' | 'POST' | 'DELETE';

export interface Endpoint {
  method: EndpointMethod;
  /**
   * Path under the base URL with `:name` parameters, as the spec writes them. Its trailing slash
   * is significant: the service answers the slashless path with a redirect or a 404.
   */
  route: string;
  /** Schema of a 2xx answer. */
  answer: z.ZodType;
  /** `{ok: boolean}` answers: 200 with `{"ok": false}` is a refusal, not a success (docs/service-contract.md, What the contract leaves open). */
  okRequired: boolean;
  /** Whether a repeat is safe (retry-policy.ts). */
  mode: RetryMode;
  /** Schema of a JSON request body, checked before sending, and what it is called in messages. */
  body?: { schema: z.ZodType; what: string };
}

const AUTHOR = '/api/external/author-from-group/:group_id/:client_id/';

export const ENDPOINTS = {
  /** docs/service-contract.md, call 1. */
  getAuthor: { method: 'GET', route: AUTHOR, answer: authorFromGroupSchema, okRequired: false, mode: 'idempotent' },
  /** docs/service-contract.md, call 2: create or fully replace a record. */
  putAuthor: {
    method: 'POST',
    route: AUTHOR,
    answer: okResponseSchema,
    okRequired: true,
    mode: 'idempotent',
    body: { schema: authorWriteSchema, what: 'author record (full POST)' },
  },
  /** docs/service-contract.md, call 3: update the fields sent. */
  patchAuthor: {
    method: 'POST',
    route: `${AUTHOR}partial/`,
    answer: okResponseSchema,
    okRequired: true,
    mode: 'idempotent',
    body: { schema: authorPatchSchema, what: 'author record (partial POST)' },
  },
  /** docs/service-contract.md, call 4. */
  deleteAuthor: { method: 'DELETE', route: AUTHOR, answer: okResponseSchema, okRequired: true, mode: 'idempotent' },
  /** docs/service-contract.md, call 5. Not idempotent (design decision 3): retried only when provably never processed. */
  createGroup: {
    method: 'POST',
    route: '/api/external/authors-group/create/',
    answer: createGroupResponseSchema,
    okRequired: false,
    mode: 'unsent-only',
    body: { schema: createGroupRequestSchema, what: 'group creation request' },
  },
  /** docs/service-contract.md, call 6, multipart. "States and transitions" rule 1: the same origin_id updates, so a repeat is safe. */
  uploadManuscript: { method: 'POST', route: '/api/external/proposal/', answer: uploadResponseSchema, okRequired: false, mode: 'idempotent' },
  /** docs/service-contract.md, call 7. */
  recommendJournals: {
    method: 'GET',
    route: '/api/external/recommend-journals/:origin_id/',
    answer: recommendJournalsResponseSchema,
    okRequired: false,
    mode: 'idempotent',
  },
  /** docs/service-contract.md, call 8. */
  listCustomFields: { method: 'GET', route: '/api/external/custom-fields/all/', answer: customFieldsListingSchema, okRequired: false, mode: 'idempotent' },
} as const satisfies Record<string, Endpoint>;

export type EndpointName = keyof typeof ENDPOINTS;

/** `METHOD route`, e.g. `GET /api/external/custom-fields/all/`: how logs and the emulator's stats name an endpoint. */
export function routeKey(endpoint: { method: string; route: string }): string {
  return `${endpoint.method} ${endpoint.route}`;
}

/** How each route parameter travels in a path: group ids are positive integers, other ids any text. */
const PARAMETERS: Record<string, (value: string | number, name: string) => string> = {
  group_id: integerSegment,
  client_id: textSegment,
  origin_id: textSegment,
};

/**
 * The encoded path of an endpoint, e.g. `pathOf(ENDPOINTS.getAuthor, { group_id: 7, client_id: 'a b' })`
 * is `/api/external/author-from-group/7/a%20b/`. Refuses, before anything is sent, a value that
 * cannot name what it should.
 */
export function pathOf(endpoint: Pick<Endpoint, 'route'>, values: Readonly<Record<string, string | number>> = {}): string {
  return endpoint.route.replace(/:(\w+)/g, (_, name: string) => {
    const encode = PARAMETERS[name];
    if (encode === undefined || !(name in values)) throw new Error(`route ${endpoint.route}: no value or encoding for :${name}`);
    return encode(values[name]!, name);
  });
}

function integerSegment(value: string | number, name: string): string {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new ClientInputError(`${name.replace('_', ' ')} must be a positive integer, got ${String(value)}`);
  }
  return String(value);
}

function textSegment(value: string | number, name: string): string {
  return pathSegment(value as string, name);
}

/**
 * Encodes one path segment. Ids may hold anything (slashes, spaces, unicode), which
 * encodeURIComponent covers; `.` and `..` would be collapsed by URL normalization, so they are refused.
 */
export function pathSegment(value: string, name: string): string {
  if (typeof value !== 'string' || value === '' || value === '.' || value === '..') {
    throw new ClientInputError(`${name} "${String(value)}" cannot be used in a URL path`, {
      hint: `Give a non-empty ${name} other than "." or "..".`,
    });
  }
  return encodeURIComponent(value);
}
