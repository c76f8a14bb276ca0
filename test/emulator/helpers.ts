/** Builders and a tiny HTTP helper for emulator tests (plain undici fetch, real HTTP on port 0). */
import { fetch } from 'undici';
import { ENDPOINTS, type Endpoint } from '../../src/client/endpoints.js';
import { fixtureSchema, type Fixture } from '../../src/emulator/fixture.js';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '../../src/emulator/server.js';

export const KEY = 'test-key-org-one';
export const KEY_NO_GROUPS = 'test-key-org-two';

export const FIELD = {
  level: 'f-single-level',
  areas: 'f-multi-areas',
  reviews: 'f-number-reviews',
  lastReview: 'f-date-last-review',
  notes: 'f-str-notes',
} as const;
export const OPTION = {
  junior: 'o-level-junior',
  senior: 'o-level-senior',
  oncology: 'o-area-oncology',
  cardiology: 'o-area-cardiology',
} as const;

export const PRESET_GROUP_ID = 77;

/** Two orgs: one with every feature and a pre-existing group, one without the Authors groups feature. */
export function buildFixture(): Fixture {
  return fixtureSchema.parse({
    orgs: [
      {
        id: 1,
        name: 'Org One',
        api_keys: [KEY, 'test-key-org-one-second'],
        teams: ['Editors', 'Reviewers', 'Board'],
        custom_fields: {
          author_from_group: [
            {
              api_id: FIELD.level,
              data_kind: 'single_option',
              name: 'Level',
              options: [
                { api_id: OPTION.junior, option: 'Junior' },
                { api_id: OPTION.senior, option: 'Senior' },
              ],
            },
            {
              api_id: FIELD.areas,
              data_kind: 'multi_option',
              name: 'Areas',
              description: 'Subject areas',
              options: [
                { api_id: OPTION.oncology, option: 'Oncology' },
                { api_id: OPTION.cardiology, option: 'Cardiology' },
              ],
            },
            { api_id: FIELD.reviews, data_kind: 'number', name: 'Reviews' },
            { api_id: FIELD.lastReview, data_kind: 'date', name: 'Last review' },
            { api_id: FIELD.notes, data_kind: 'str', name: 'Notes' },
          ],
          folder: [{ api_id: 'f-folder-code', data_kind: 'str', name: 'Code' }],
          proposal: [],
        },
        groups: [
          {
            id: PRESET_GROUP_ID,
            name: 'Preset board',
            label: 'board',
            owner_team: 'Editors',
            records: { 'pre-1': { name: 'Preset Person', emails: ['preset@example.org'] } },
          },
        ],
      },
      {
        id: 2,
        name: 'Org Two',
        api_keys: [KEY_NO_GROUPS],
        plan_features: { referee_finder: true, recommend_journals: true, authors_groups: false },
        teams: ['Editors'],
        custom_fields: {},
      },
    ],
    authors: [
      { id: 11, first_name: 'Ada', last_name: 'Lovelace', emails: ['Ada@Example.org'], orcid: '0000-0002-1825-0097', h_index: 12, citations: 300 },
      { id: 12, first_name: 'Alan', last_name: 'Turing', emails: ['alan@example.org'], h_index: 30, citations: 900 },
    ],
    articles: [
      { id: 1, title: 'Oldest', year: 2001, author_ids: [11] },
      { id: 2, title: 'Newest', year: 2023, author_ids: [11, 12] },
      { id: 3, title: 'Middle', year: 2015, author_ids: [11] },
      { id: 4, title: 'Recent', year: 2020, author_ids: [11] },
    ],
    journals: [],
  });
}

export function startTestEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  return startEmulator({ fixture: buildFixture(), ...options });
}

export interface CallResult {
  status: number;
  headers: Headers;
  /** Parsed JSON body, or the text when the answer is not JSON. */
  body: any;
}

export async function call(
  emulator: { url: string },
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: string; key?: string | null; headers?: Record<string, string> } = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? KEY : options.key;
  if (key !== null && !Object.keys(headers).some((h) => h.toLowerCase() === 'x-apikey')) headers['X-ApiKey'] = key;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${emulator.url}${path}`, { method, headers, body });
  const text = await response.text();
  const isJson = (response.headers.get('content-type') ?? '').includes('application/json');
  return { status: response.status, headers: response.headers as unknown as Headers, body: isJson ? JSON.parse(text) : text };
}

/**
 * A path of an endpoint of the client's table with the values put in as given, percent-encoded:
 * also values the client refuses to send (`.`, a group id that is not a number), to see how the
 * emulator answers them.
 */
export const rawPath = (endpoint: Pick<Endpoint, 'route'>, values: Record<string, string | number> = {}): string =>
  endpoint.route.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(String(values[name])));

export const recordPath = (groupId: number | string, clientId: string, partial = false): string =>
  rawPath(partial ? ENDPOINTS.patchAuthor : ENDPOINTS.getAuthor, { group_id: groupId, client_id: clientId });
