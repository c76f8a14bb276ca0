/** design.md, decision 9: the API key never appears in logs or error messages; emails never in logs. */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, ServiceError } from '../../src/client/index.js';
import { createLogger } from '../../src/logging/logger.js';
import { API_KEY, closedPort, sendJson, startTinyServer, type TinyServer } from './helpers.js';

function collector() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

let server: TinyServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function everythingAbout(error: unknown): string {
  const e = error as ServiceError;
  const causes: string[] = [];
  for (let c: unknown = e.cause; c instanceof Error; c = c.cause) causes.push(c.message);
  return [e.message, e.hint, e.bodyExcerpt, String(e), JSON.stringify(e), ...causes].join('\n');
}

describe('the API key stays secret', () => {
  it('never appears in error messages or logs, even when the service echoes it back', async () => {
    // A hostile or buggy service that echoes the request headers in every kind of answer.
    server = await startTinyServer((req, res, index) => {
      const echoed = `key was ${String(req.headers['x-apikey'])}`;
      const kind = index % 5;
      if (kind === 0) sendJson(res, 401, { ok: false, error: { code: 'bad_key', message: echoed } });
      else if (kind === 1) {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<html>${echoed}</html>`);
      } else if (kind === 2) sendJson(res, 400, { detail: echoed });
      else if (kind === 3) sendJson(res, 200, { unexpected: echoed });
      else sendJson(res, 503, { detail: echoed });
    });
    const log = collector();
    const logger = createLogger({ level: 'trace', destination: log.stream, secrets: [API_KEY] });
    const client = createClient({ baseUrl: server.url, apiKey: API_KEY, logger, retry: { maxAttempts: 1 } });
    const errors: unknown[] = [];
    for (let i = 0; i < 5; i += 1) errors.push(await client.listCustomFields().catch((e: unknown) => e));
    const port = await closedPort();
    const offline = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: API_KEY, logger, retry: { maxAttempts: 2, baseDelayMs: 1 } });
    errors.push(await offline.getAuthor(1, 'x').catch((e: unknown) => e));

    expect(errors.every((e) => e instanceof ServiceError)).toBe(true);
    for (const error of errors) expect(everythingAbout(error)).not.toContain(API_KEY);
    expect(everythingAbout(errors[0])).toContain('key was [redacted]');
    expect(log.text()).toContain('retrying service call');
    expect(log.text()).not.toContain(API_KEY);
  });

  it('the logger redacts the key and emails wherever they appear', () => {
    const log = collector();
    const logger = createLogger({ destination: log.stream, secrets: [API_KEY] });
    logger.info({ apiKey: API_KEY, headers: { 'x-apikey': API_KEY }, email: 'ada@example.org', emails: ['b@example.org'] }, 'config loaded');
    logger.warn({ note: `contact ada.okafor@univ.example.org with ${API_KEY}` }, `sending to ben@example.org using ${API_KEY}`);
    logger.error({ err: new Error(`failed for carla@example.org key=${API_KEY}`) }, 'boom');
    const out = log.text();
    expect(out.split('\n').filter(Boolean)).toHaveLength(3);
    expect(out).not.toContain(API_KEY);
    expect(out).not.toMatch(/@example\.org/);
    expect(out).toContain('[redacted]');
    expect(out).toContain('[email]');
    // JSON lines when the destination is not a TTY.
    expect(() => out.split('\n').filter(Boolean).map((line) => JSON.parse(line))).not.toThrow();
  });

  it('pretty output when asked (as on a TTY) is redacted too', () => {
    const log = collector();
    const logger = createLogger({ destination: log.stream, secrets: [API_KEY], pretty: true });
    logger.info({ apiKey: API_KEY, email: 'ada@example.org' }, `hello ${API_KEY}`);
    const out = log.text();
    expect(out).toContain('hello');
    expect(() => JSON.parse(out)).toThrow();
    expect(out).not.toContain(API_KEY);
    expect(out).not.toContain('ada@example.org');
  });
});
