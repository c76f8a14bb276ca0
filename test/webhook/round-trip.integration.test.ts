/**
 * The full round trip over real HTTP: upload in the emulator → `/_emulator/mark` (the user's
 * click) → webhook delivery with retries → receiver store → `rostersync webhook referees` output.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { webhookEnvelopeSchema, type Candidate, type UploadResponse, type WebhookEnvelope } from '../../src/client/index.js';
import { main } from '../../src/cli/main.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { StoredSelection } from '../../src/webhook/index.js';
import { startWebhookReceiver, type RunningWebhookReceiver } from '../../src/webhook/index.js';
import { clientFor, emulatorWith, manuscript } from '../manuscripts/helpers.js';
import { runCli } from '../support/cli.js';
import { waitFor } from '../support/wait-for.js';

const WEBHOOK_KEY = 'round-trip-webhook-key';

async function postJson(url: string, body: unknown): Promise<{ status: number; body: { order: number } & Record<string, unknown> }> {
  const response = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.statusCode, body: (await response.body.json()) as { order: number } & Record<string, unknown> };
}

async function waitForDeliveries(emulator: RunningEmulator): Promise<{ idle: boolean; deliveries: { order: number; status: string; attempts: number; url: string }[] }> {
  const response = await request(`${emulator.url}/_emulator/webhooks?wait_ms=10000`);
  return (await response.body.json()) as never;
}

async function mark(emulator: RunningEmulator, originId: string, authorId: number, marked: boolean, userEmail = 'editor@office.example') {
  return postJson(`${emulator.url}/_emulator/mark`, { origin_id: originId, author_id: authorId, marked, user_email: userEmail });
}

function cli(args: string[]) {
  return runCli(args, { env: { SERVICE_WEBHOOK_KEY: WEBHOOK_KEY } });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let emulator: RunningEmulator;
let storePath: string;
let receiver: RunningWebhookReceiver | undefined;
beforeEach(async () => {
  emulator = await emulatorWith();
  storePath = join(mkdtempSync(join(tmpdir(), 'rostersync-roundtrip-')), 'referees.json');
  // Scaled-down backoff: "1 s" retries take 10 ms.
  await postJson(`${emulator.url}/_emulator/webhooks`, { retry: { baseDelayMs: 10, maxDelayMs: 40, maxAttempts: 200 } });
});
afterEach(async () => {
  await emulator.close();
  await receiver?.close();
  receiver = undefined;
});

async function uploadCardiology(originId: string, folder = 'JCARD'): Promise<UploadResponse> {
  return clientFor(emulator).uploadManuscript(manuscript({ originId, folder }));
}

describe('mark → webhook → receiver → webhook referees', () => {
  it('keeps the receiver’s selection equal to the marked candidates, with score and concepts frozen at first marking', async () => {
    receiver = await startWebhookReceiver({ port: 0, apiKey: WEBHOOK_KEY, storePath });
    await postJson(`${emulator.url}/_emulator/webhooks`, { url: receiver.url, api_key: WEBHOOK_KEY });
    const upload = await uploadCardiology('RT-1');
    const [a, b] = upload.candidates as [Candidate, Candidate];

    const first = await mark(emulator, 'RT-1', a.author_id, true, 'alice@office.example');
    expect(first.status).toBe(200);
    const second = await mark(emulator, 'RT-1', b.author_id, true, 'bob@office.example');
    expect(second.body.order).toBeGreaterThan(first.body.order);
    expect((await waitForDeliveries(emulator)).idle).toBe(true);

    let referees = await cli(['webhook', 'referees', '--store', storePath, '--json']);
    expect(referees.code).toBe(0);
    let selections = JSON.parse(referees.stdout) as StoredSelection[];
    expect(selections).toHaveLength(1);
    expect(selections[0]).toMatchObject({ origin_id: 'RT-1', manuscript_id: upload.manuscript_id, order: second.body.order });
    expect(selections[0]!.authors_groups_settings).toEqual({ authors_groups: upload.authors_groups_settings!.authors_groups, effect: 'highlight' });
    expect(selections[0]!.referees.map((r) => [r.author_id, r.marked_by, r.score, r.relevant_concepts])).toEqual(
      [
        [a.author_id, 'alice@office.example', a.score, a.relevant_concepts],
        [b.author_id, 'bob@office.example', b.score, b.relevant_concepts],
      ].sort((x, y) => (x[0] as number) - (y[0] as number)),
    );

    // The upload now shows them marked; a re-upload with another title changes A's live score…
    const reuploaded = await clientFor(emulator).uploadManuscript(manuscript({ originId: 'RT-1', folder: 'JCARD', title: 'Hypertension and statin therapy' }));
    const liveA = reuploaded.candidates!.find((c) => c.author_id === a.author_id);
    expect(liveA?.marked).toBe(true);
    expect(liveA?.marked_by).toBe('alice@office.example');
    expect(liveA?.score).not.toBe(a.score);
    // …but the webhook keeps the score from the first marking.
    await mark(emulator, 'RT-1', b.author_id, false);
    await waitForDeliveries(emulator);
    selections = JSON.parse((await cli(['webhook', 'referees', '--store', storePath, '--json'])).stdout) as StoredSelection[];
    expect(selections[0]!.referees.map((r) => [r.author_id, r.score])).toEqual([[a.author_id, a.score]]);

    // Human-readable and CSV listings carry the same selection.
    const text = await cli(['webhook', 'referees', '--store', storePath, '--origin-id', 'RT-1']);
    expect(text.stdout).toContain(a.name);
    expect(text.stdout).not.toContain(b.name);
    const csv = await cli(['webhook', 'referees', '--store', storePath, '--csv']);
    const lines = csv.stdout.trim().split('\r\n');
    expect(lines[0]).toBe('origin_id,manuscript_id,order,author_id,name,email,orcid,score,marked_by,groups');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`RT-1,${upload.manuscript_id}`);
  });

  it('delivers every envelope with the webhook’s own key and a schema-valid body', async () => {
    const received: WebhookEnvelope[] = [];
    const sink = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        received.push(webhookEnvelopeSchema.parse(JSON.parse(body)));
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    try {
      await postJson(`${emulator.url}/_emulator/webhooks`, { url: `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook`, api_key: 'sink-key' });
      const upload = await uploadCardiology('RT-KEY', 'METHODS');
      await mark(emulator, 'RT-KEY', upload.candidates![0]!.author_id, true);
      await waitForDeliveries(emulator);
      expect(received).toHaveLength(1);
      expect(received[0]!.api_key).toBe('sink-key');
      expect(received[0]!.payload.candidates).toHaveLength(1);
      expect(received[0]!.payload.candidates[0]!.marked).toBe(true);
      // boost is not a webhook effect: authors_groups_settings is null.
      expect(received[0]!.payload.authors_groups_settings).toBeNull();
    } finally {
      await new Promise<void>((resolve) => sink.close(() => resolve()));
    }
  });

  it('retries while the receiver is down, and the selection arrives once it is up', async () => {
    const port = await freePort();
    await postJson(`${emulator.url}/_emulator/webhooks`, { url: `http://127.0.0.1:${port}/`, api_key: WEBHOOK_KEY });
    const upload = await uploadCardiology('RT-DOWN');
    const clicked = await mark(emulator, 'RT-DOWN', upload.candidates![0]!.author_id, true);
    // The click is answered whatever the receiver's state: the delivery, still pending below, waits.
    expect(clicked.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const pending = (await (await request(`${emulator.url}/_emulator/webhooks`)).body.json()) as { deliveries: { status: string; attempts: number }[] };
    expect(pending.deliveries[0]!.status).toBe('pending');
    expect(pending.deliveries[0]!.attempts).toBeGreaterThan(1);

    receiver = await startWebhookReceiver({ port, apiKey: WEBHOOK_KEY, storePath });
    const done = await waitForDeliveries(emulator);
    expect(done.idle).toBe(true);
    expect(done.deliveries[0]!.status).toBe('delivered');
    const selections = JSON.parse((await cli(['webhook', 'referees', '--store', storePath, '--json'])).stdout) as StoredSelection[];
    expect(selections[0]!.referees.map((r) => r.author_id)).toEqual([upload.candidates![0]!.author_id]);
  });

  it('converges through out-of-order and duplicate deliveries', async () => {
    receiver = await startWebhookReceiver({ port: 0, apiKey: WEBHOOK_KEY, storePath });
    const target = receiver.url;
    // A flaky front, told apart by payload: the first event (one marked referee) is held until
    // the second event (two referees) has reached the receiver twice, then answered 503 without
    // forwarding, so its retry arrives last (out of order); the second event's first attempt is
    // forwarded but answered 500, so the emulator delivers it again (a duplicate).
    const attempts = new Map<number, number>();
    const forwardedOrders: number[] = [];
    const front: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', async () => {
        const envelope = JSON.parse(body) as WebhookEnvelope;
        const isFirstEvent = envelope.payload.candidates.length === 1;
        const attempt = (attempts.get(envelope.order) ?? 0) + 1;
        attempts.set(envelope.order, attempt);
        if (isFirstEvent && attempt === 1) {
          for (let i = 0; i < 300 && forwardedOrders.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
          res.writeHead(503).end();
          return;
        }
        const forwarded = await request(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        await forwarded.body.dump();
        forwardedOrders.push(envelope.order);
        res.writeHead(!isFirstEvent && attempt === 1 ? 500 : forwarded.statusCode).end();
      });
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    try {
      await postJson(`${emulator.url}/_emulator/webhooks`, { url: `http://127.0.0.1:${(front.address() as AddressInfo).port}/`, api_key: WEBHOOK_KEY });
      const upload = await uploadCardiology('RT-ORDER');
      const [a, b] = upload.candidates as [Candidate, Candidate];
      const e1 = await mark(emulator, 'RT-ORDER', a.author_id, true);
      const e2 = await mark(emulator, 'RT-ORDER', b.author_id, true);
      expect((await waitForDeliveries(emulator)).idle).toBe(true);
      // Event 2 reached the receiver twice, both before event 1.
      expect(forwardedOrders).toEqual([e2.body.order, e2.body.order, e1.body.order]);
      const selection = (JSON.parse((await cli(['webhook', 'referees', '--store', storePath, '--json'])).stdout) as StoredSelection[])[0]!;
      expect(selection.order).toBe(e2.body.order);
      expect(selection.referees.map((r) => r.author_id).sort()).toEqual([a.author_id, b.author_id].sort());
    } finally {
      await new Promise<void>((resolve) => front.close(() => resolve()));
    }
  });

  it('refuses a click on an author who is not a candidate, and an unmark of someone not marked', async () => {
    await uploadCardiology('RT-BAD');
    expect((await mark(emulator, 'RT-BAD', 999_999, true)).status).toBe(404);
    const upload = await uploadCardiology('RT-BAD');
    expect((await mark(emulator, 'RT-BAD', upload.candidates![0]!.author_id, false)).status).toBe(409);
    expect((await mark(emulator, 'NO-SUCH-MANUSCRIPT', 1, true)).status).toBe(404);
    expect((await postJson(`${emulator.url}/_emulator/mark`, { origin_id: 'RT-BAD' })).status).toBe(400);
  });
});

describe('rostersync webhook serve and send-test', () => {
  it('serves until stopped, accepts the verification request and refuses a wrong key', async () => {
    const controller = new AbortController();
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (d) => (out += d));
    stderr.on('data', (d) => (err += d));
    const serving = main(['webhook', 'serve', '--port', '0', '--store', storePath], {
      stdout,
      stderr,
      env: { SERVICE_WEBHOOK_KEY: WEBHOOK_KEY },
      cwd: process.cwd(),
      signal: controller.signal,
    });
    const url = await waitFor(() => /listening on (\S+)/.exec(out)?.[1], { what: 'the receiver to print its address', timeoutMs: 2000, everyMs: 20 });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);

    const ok = await cli(['webhook', 'send-test', url!]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('answered 200');
    const wrong = (await runCli(['webhook', 'send-test', url!], { env: { SERVICE_WEBHOOK_KEY: 'wrong' } })).code;
    expect(wrong).toBe(4);
    const remote = await cli(['webhook', 'send-test', 'http://hooks.example.org/referees']);
    expect(remote.code).toBe(1);
    expect(remote.stderr).toContain('refusing plain http:// to hooks.example.org');

    controller.abort();
    expect(await serving).toBe(0);
    expect(err).toContain('webhook 200 test');
    expect(err).not.toContain(WEBHOOK_KEY);
    // The verification request is never stored.
    expect((await cli(['webhook', 'referees', '--store', storePath])).stdout).toContain('no referee selections');
  });

  it('without a key it explains where the key comes from', async () => {
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (d) => (err += d));
    const code = await main(['webhook', 'serve', '--port', '0', '--store', storePath], { stdout: new PassThrough(), stderr, env: {}, cwd: process.cwd() });
    expect(code).toBe(1);
    expect(err).toContain('SERVICE_WEBHOOK_KEY');
  });
});
