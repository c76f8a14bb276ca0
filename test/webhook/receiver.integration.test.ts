/** The webhook receiver over real HTTP on 127.0.0.1:0: bad input, verification, ordering, the store file. */
import { mkdtempSync, readFileSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { WebhookCandidate, WebhookEnvelope } from '../../src/client/index.js';
import { startWebhookReceiver, type RunningWebhookReceiver } from '../../src/webhook/index.js';

const KEY = 'whk-test-key-42';

function referee(authorId: number, overrides: Partial<WebhookCandidate> = {}): WebhookCandidate {
  return {
    name: `Referee ${authorId}`,
    first_name: 'Referee',
    last_name: String(authorId),
    middle_name: null,
    suffix: null,
    author_id: authorId,
    email: `r${authorId}@example.org`,
    orcid: null,
    affiliation: null,
    articlesCount: 3,
    citationsCount: 10,
    hIndex: 2,
    score: 1.5,
    relevant_concepts: ['oncology'],
    url: `https://service.example/authors/${authorId}/`,
    authors_groups: [],
    marked: true,
    marked_by: 'editor@office.example',
    ...overrides,
  };
}

function envelope(order: number, referees: WebhookCandidate[], overrides: Partial<WebhookEnvelope> = {}): WebhookEnvelope {
  return {
    action: 'mark_as_proposal_referee',
    timestamp: 1_780_000_000 + order,
    order,
    api_key: KEY,
    payload: { version: 1, manuscript_id: 7, origin_id: 'MS-7', candidates: referees, authors_groups_settings: null },
    ...overrides,
  };
}

async function post(receiver: RunningWebhookReceiver, body: string | object, method = 'POST') {
  const response = await request(receiver.url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: method === 'GET' ? null : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.body.text();
  return { status: response.statusCode, text };
}

let dir: string;
let storePath: string;
let receiver: RunningWebhookReceiver;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rostersync-webhook-'));
  storePath = join(dir, 'store.json');
  receiver = await startWebhookReceiver({ port: 0, apiKey: KEY, storePath, maxBodyBytes: 4096 });
});
afterEach(() => receiver.close());

const storeText = () => (existsSync(storePath) ? readFileSync(storePath, 'utf8') : null);

describe('webhook receiver', () => {
  it('stores the marked referees of the latest event per manuscript, in a 0600 file', async () => {
    expect((await post(receiver, envelope(1, [referee(11)]))).status).toBe(200);
    expect((await post(receiver, envelope(2, [referee(11), referee(12)]))).status).toBe(200);
    const store = JSON.parse(storeText()!);
    expect(store.manuscripts['7']).toMatchObject({ order: 2, origin_id: 'MS-7', manuscript_id: 7 });
    expect(store.manuscripts['7'].referees.map((r: WebhookCandidate) => r.author_id)).toEqual([11, 12]);
    expect(statSync(storePath).mode & 0o777).toBe(0o600);
  });

  it('acknowledges and ignores an out-of-order event and a duplicate', async () => {
    await post(receiver, envelope(5, [referee(11), referee(12)]));
    const before = storeText();
    const late = await post(receiver, envelope(4, [referee(99)]));
    expect(late.status).toBe(200);
    expect(JSON.parse(late.text)).toEqual({ ok: true, applied: false });
    const duplicate = await post(receiver, envelope(5, [referee(11), referee(12)]));
    expect(duplicate.status).toBe(200);
    expect(storeText()).toBe(before);
    // A later event replaces the selection, even when it is empty (everyone unmarked).
    await post(receiver, envelope(6, []));
    expect(JSON.parse(storeText()!).manuscripts['7'].referees).toEqual([]);
  });

  it('keeps manuscripts apart: order is compared per manuscript', async () => {
    await post(receiver, envelope(10, [referee(1)]));
    const other = envelope(3, [referee(2)]);
    other.payload = { ...other.payload, manuscript_id: 8, origin_id: 'MS-8' };
    expect(JSON.parse((await post(receiver, other)).text)).toEqual({ ok: true, applied: true });
    expect(Object.keys(JSON.parse(storeText()!).manuscripts).sort()).toEqual(['7', '8']);
  });

  it('answers 200 to the verification request without storing it', async () => {
    const result = await post(receiver, envelope(1, [referee(1)], { test: true }));
    expect(result.status).toBe(200);
    expect(storeText()).toBeNull();
  });

  it('stays up under concurrent deliveries and applies the highest order', async () => {
    const orders = Array.from({ length: 20 }, (_, i) => i + 1).reverse();
    const results = await Promise.all(orders.map((order) => post(receiver, envelope(order, [referee(order)]))));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const stored = JSON.parse(storeText()!).manuscripts['7'];
    expect(stored.order).toBe(20);
    expect(stored.referees[0].author_id).toBe(20);
  });

  const valid = envelope(1, [referee(1)]);
  const { payload: _payload, ...withoutPayload } = valid;
  it.each([
    ['wrong key', { ...valid, api_key: 'not-the-key' }, 401],
    ['missing key', { ...valid, api_key: undefined }, 401],
    ['malformed JSON', '{"action": "mark_as_proposal_referee", ', 400],
    ['a JSON array', '[1, 2]', 401],
    ['oversized body', { ...valid, padding: 'x'.repeat(5000) }, 413],
    ['wrong action', { ...valid, action: 'delete_everything' }, 400],
    ['missing payload', withoutPayload, 400],
    ['missing order', { ...valid, order: undefined }, 400],
    ['a candidate not marked', envelope(1, [{ ...referee(1), marked: false } as unknown as WebhookCandidate]), 400],
    ['order as text', { ...valid, order: '1' }, 400],
  ])('%s → %i, store unchanged', async (_label, body, status) => {
    await post(receiver, envelope(0, [referee(500)]));
    const before = storeText();
    const result = await post(receiver, body as object);
    expect(result.status).toBe(status);
    expect(storeText()).toBe(before);
    // Still serving afterwards.
    expect((await post(receiver, envelope(1, [referee(1)], { test: true }))).status).toBe(200);
  });

  it('answers 405 to other methods', async () => {
    const result = await post(receiver, '', 'GET');
    expect(result.status).toBe(405);
  });

  it('never echoes the key in its answers', async () => {
    const result = await post(receiver, { ...valid, api_key: 'wrong' });
    expect(result.text).not.toContain(KEY);
    expect(result.text).not.toContain('wrong');
  });
});
