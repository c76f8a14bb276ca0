/** The client against the emulator over real HTTP: every endpoint the emulator serves so far. */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AmbiguousGroupCreationError,
  AuthError,
  createClient,
  InvalidRequestError,
  NotFoundError,
  type ServiceClient,
} from '../../src/client/index.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { DEMO_API_KEY } from '../support/cli.js';

const KEY = DEMO_API_KEY;
const NOTES = '4f0b1e7c-5061-4293-8edf-4a5b6c7d8e95';
const REVIEWS = '2d8f9c5a-3e4f-4071-8cbd-2e3f4a5b6c73';
const SUBJECTS = '1c7e8b4f-2d3e-4f60-9bac-1d2e3f4a5b62';
const ONCOLOGY = '6b2f1a7d-0002-4b00-8000-000000000001';

let emulator: RunningEmulator;
let client: ServiceClient;

beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(async () => {
  await emulator.close();
});
beforeEach(async () => {
  await fetch(`${emulator.url}/_emulator/reset`, { method: 'POST' });
  client = createClient({ baseUrl: emulator.url, apiKey: KEY, rateLimit: { rps: 500, burst: 50 }, retry: { baseDelayMs: 1 } });
});

async function stateOf(groupId: number) {
  const res = await fetch(`${emulator.url}/_emulator/state?group=${groupId}`);
  const body = (await res.json()) as { orgs: Array<{ groups: Array<{ id: number; name: string; records: Record<string, Record<string, unknown>> }> }> };
  return body.orgs.flatMap((org) => org.groups).find((g) => g.id === groupId);
}

describe('custom fields', () => {
  it('lists the three owners with options for option kinds', async () => {
    const listing = await client.listCustomFields();
    expect(listing.author_from_group.map((f) => f.name)).toContain('Expertise level');
    const subjects = listing.author_from_group.find((f) => f.api_id === SUBJECTS)!;
    expect(subjects.data_kind).toBe('multi_option');
    expect(subjects.options?.map((o) => o.option)).toContain('Oncology');
    expect(listing.author_from_group.find((f) => f.api_id === NOTES)!.options).toBeUndefined();
    expect(listing.folder.length).toBeGreaterThan(0);
    expect(listing.proposal.length).toBeGreaterThan(0);
  });
});

describe('author-from-group records', () => {
  it('reads a fixture record with its linked author', async () => {
    const record = await client.getAuthor(501, 'onc-201');
    expect(record.name).toBe('Ada Okafor');
    expect(record.orcids).toEqual(['0000-0200-1591-7195']);
    if (record.author) {
      expect(record.author.last_articles.length).toBeLessThanOrEqual(3);
      expect(typeof record.author.h_index).toBe('number');
    }
  });

  it('creates, fully replaces (omitted fields become null), patches and deletes', async () => {
    const clientId = 'weird/id ?#%é';
    await expect(
      client.putAuthor(501, clientId, { name: 'Zoe Park', emails: ['zoe@example.org'], affiliations: ['Oslo'], [NOTES]: 'hello', [REVIEWS]: 3 }),
    ).resolves.toMatchObject({ ok: true });
    expect(await client.getAuthor(501, clientId)).toMatchObject({ name: 'Zoe Park', emails: ['zoe@example.org'], [NOTES]: 'hello', [REVIEWS]: 3 });
    expect(Object.keys((await stateOf(501))!.records)).toContain(clientId);

    await client.putAuthor(501, clientId, { name: 'Zoe Park' });
    const replaced = await client.getAuthor(501, clientId);
    expect(replaced.emails ?? null).toBeNull();
    expect(replaced.affiliations ?? null).toBeNull();
    expect(replaced[NOTES] ?? null).toBeNull();

    await client.patchAuthor(501, clientId, { affiliations: ['Bergen'], [SUBJECTS]: [ONCOLOGY] });
    expect(await client.getAuthor(501, clientId)).toMatchObject({ name: 'Zoe Park', affiliations: ['Bergen'], [SUBJECTS]: [ONCOLOGY] });

    await expect(client.deleteAuthor(501, clientId)).resolves.toMatchObject({ ok: true });
    await expect(client.getAuthor(501, clientId)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.deleteAuthor(501, clientId)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('a partial update of an absent record is a NotFoundError', async () => {
    await expect(client.patchAuthor(501, 'nobody', { name: 'X' })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('an unknown custom field key or a wrong value type is an InvalidRequestError with the service message', async () => {
    const unknownKey = await client.putAuthor(501, 'x1', { name: 'X', 'no-such-field': 'v' }).catch((e: unknown) => e);
    expect(unknownKey).toBeInstanceOf(InvalidRequestError);
    expect((unknownKey as Error).message).toContain('no-such-field');
    await expect(client.putAuthor(501, 'x2', { name: 'X', [REVIEWS]: 'many' })).rejects.toBeInstanceOf(InvalidRequestError);
  });

  it('a wrong key is an AuthError that does not show the key', async () => {
    const wrong = createClient({ baseUrl: emulator.url, apiKey: 'wrong-key-42' });
    const error = await wrong.getAuthor(501, 'onc-201').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthError);
    expect(JSON.stringify({ message: (error as Error).message, excerpt: (error as AuthError).bodyExcerpt })).not.toContain('wrong-key-42');
  });
});

describe('manuscripts and journals', () => {
  it('uploads a PDF, then recommends journals for the same origin_id', async () => {
    const pdf = readFileSync(new URL('../fixtures/manuscripts/manuscript.pdf', import.meta.url));
    const upload = await client.uploadManuscript({
      folder: 'JCARD',
      originId: 'client-test-1',
      title: 'Heart failure outcomes after cardiac surgery',
      abstract: 'We study heart failure and cardiology outcomes.',
      authors: [{ name: 'Ann Lee', email: 'ann@example.org' }],
      sourceFile: { filename: 'manuscript.pdf', data: pdf },
    });
    expect(upload.version).toBe(7);
    expect(upload.origin_id).toBe('client-test-1');
    expect(upload.debug_info.source_file).toBe('manuscript.pdf');
    expect(upload.debug_info.authors_info.authors_count).toBe(1);
    expect(Array.isArray(upload.candidates)).toBe(true);

    const journals = await client.recommendJournals('client-test-1', { corpus: 'all_journals' });
    expect(journals.recommended_journals.length).toBeGreaterThan(0);
    await expect(client.recommendJournals('never-uploaded')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('exclude_candidates gives candidates null', async () => {
    const upload = await client.uploadManuscript({ folder: 'JCARD', originId: 'client-test-2', title: 't', abstract: 'a', excludeCandidates: true });
    expect(upload.candidates).toBeNull();
  });
});

describe('HTML answers', () => {
  it('the HTML login page on a wrong key is an AuthError naming content type and snippet', async () => {
    const post = (body: unknown) =>
      fetch(`${emulator.url}/_emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await post({ htmlLoginPage: true });
    try {
      const wrong = createClient({ baseUrl: emulator.url, apiKey: 'wrong-key-42' });
      const error = await wrong.listCustomFields().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AuthError);
      expect((error as Error).message).toMatch(/401.*text\/html/);
      expect((error as AuthError).bodyExcerpt).toMatch(/<html|<!DOCTYPE/i);
    } finally {
      await post({ htmlLoginPage: false });
    }
  });
});

describe('authors groups', () => {
  it('creates a group with existing teams', async () => {
    const { authors_group_id } = await client.createGroup({
      group_name: 'Neurology pool',
      owner_team: 'Editorial Office',
      editor_teams: ['Reviewers Desk'],
      viewer_teams: [],
    });
    expect((await stateOf(authors_group_id))?.name).toBe('Neurology pool');
    await client.putAuthor(authors_group_id, 'n-1', { name: 'New Member' });
    expect((await client.getAuthor(authors_group_id, 'n-1')).name).toBe('New Member');
  });

  it('an unknown team is an InvalidRequestError', async () => {
    const error = await client
      .createGroup({ group_name: 'G', owner_team: 'Nope Team', editor_teams: [], viewer_teams: [] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as Error).message).toContain('Nope Team');
  });

  it('a 500 after the group was created surfaces as ambiguous, and no second group is made', async () => {
    const faulty = await startEmulator({ faults: { status500: 1 }, faultPhase: 'after' });
    try {
      const c = createClient({ baseUrl: faulty.url, apiKey: KEY, retry: { baseDelayMs: 1 } });
      const error = await c
        .createGroup({ group_name: 'Maybe created', owner_team: 'Editorial Office', editor_teams: [], viewer_teams: [] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AmbiguousGroupCreationError);
      const state = (await (await fetch(`${faulty.url}/_emulator/state`)).json()) as { orgs: Array<{ groups: Array<{ name: string }> }> };
      const made = state.orgs.flatMap((o) => o.groups).filter((g) => g.name === 'Maybe created');
      expect(made).toHaveLength(1);
      expect(c.stats().requests).toBe(1);
    } finally {
      await faulty.close();
    }
  });
});

describe('rate limiting and faults of the emulator', () => {
  it('recovers from seeded 5xx faults and resets for idempotent calls', async () => {
    const faulty = await startEmulator({ faultRate: 0.3, seed: 7 });
    try {
      // 503 faults carry Retry-After: 1; scale time down by capping sleeps in this test.
      const fast = createClient({
        baseUrl: faulty.url,
        apiKey: KEY,
        rateLimit: { rps: 1000, burst: 100 },
        retry: { baseDelayMs: 1, maxAttempts: 8 },
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, 5))),
      });
      for (let i = 0; i < 20; i += 1) await fast.putAuthor(501, `f-${i}`, { name: `Fault ${i}` });
      expect(fast.stats().retries).toBeGreaterThan(0);
      const res = await fetch(`${faulty.url}/_emulator/state?group=501`);
      const body = (await res.json()) as { orgs: Array<{ groups: Array<{ records: Record<string, unknown> }> }> };
      const written = Object.keys(body.orgs[0]!.groups[0]!.records).filter((id) => id.startsWith('f-'));
      expect(written).toHaveLength(20);
    } finally {
      await faulty.close();
    }
  });

  it('backs off on 429 from the emulator (shared fake clock) and counts them', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const limited = await startEmulator({ rps: 2, burst: 2, clock: () => now });
    try {
      const c = createClient({
        baseUrl: limited.url,
        apiKey: KEY,
        now: () => now,
        sleep: async (ms) => {
          now += ms;
        },
        rateLimit: { rps: 50, burst: 50 },
        retry: { maxAttempts: 10 },
      });
      for (let i = 0; i < 6; i += 1) await c.getAuthor(501, 'onc-201');
      const stats = c.stats();
      expect(stats.rateLimited).toBeGreaterThan(0);
      expect(stats.currentRate).toBeLessThan(50);
      expect(stats.requests).toBe(6 + stats.rateLimited);
    } finally {
      await limited.close();
    }
  });
});
