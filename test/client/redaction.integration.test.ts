/**
 * the API key is redacted also URL-encoded and with its
 * case changed; credentials in a base URL are never echoed, whatever else is wrong with the URL.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { checkBaseUrl, createClient, resolveServiceConfig, ServiceError } from '../../src/client/index.js';
import { createLogger } from '../../src/logging/logger.js';
import { redactSecrets } from '../../src/logging/redact.js';
import { UserFacingError } from '../../src/errors/user-facing-error.js';
import { sendJson, startTinyServer, type TinyServer } from './helpers.js';
import { runCli } from '../support/cli.js';

/** A key with characters that URL encoding changes, and letters whose case can change. */
const KEY = 'Key/With+Plus=And Space&Amp-0123';

let server: TinyServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const FORMS = [
  KEY,
  encodeURIComponent(KEY),
  encodeURIComponent(KEY).replace(/%20/g, '+'),
  encodeURIComponent(KEY).toLowerCase(),
  KEY.toUpperCase(),
  KEY.toLowerCase(),
  encodeURI(KEY),
];

describe('the API key in its echoed forms', () => {
  it.each(FORMS)('redactSecrets removes %s', (form) => {
    const out = redactSecrets(`before ${form} after`, [KEY]);
    expect(out).toBe('before [redacted] after');
  });

  it('a service echoing the key URL-encoded or upper-cased leaks it into no error message and no log line', async () => {
    server = await startTinyServer((req, res, index) => {
      const key = String(req.headers['x-apikey']);
      const echoed = index % 2 === 0 ? `your key ${encodeURIComponent(key)} is not valid` : `KEY: ${key.toUpperCase()}`;
      sendJson(res, index % 2 === 0 ? 401 : 400, { detail: echoed });
    });
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({ level: 'trace', destination, secrets: [KEY] });
    const client = createClient({ baseUrl: server.url, apiKey: KEY, logger, retry: { maxAttempts: 1 } });
    const errors: ServiceError[] = [];
    for (let i = 0; i < 2; i += 1) errors.push((await client.listCustomFields().catch((e: unknown) => e)) as ServiceError);
    for (const error of errors) logger.error({ error }, `failed: ${error.message}`);
    const everything = [...errors.flatMap((e) => [e.message, e.bodyExcerpt ?? '', e.hint ?? '']), ...lines].join('\n');
    expect(everything).toContain('[redacted]');
    for (const form of FORMS) expect(everything.toLowerCase()).not.toContain(form.toLowerCase());
  });
});

describe('credentials in a base URL are never echoed', () => {
  const messageOf = (fn: () => unknown): string => {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(UserFacingError);
      const e = error as UserFacingError;
      return [e.message, e.hint, String(e.cause ?? '')].join('\n');
    }
    throw new Error('expected a refusal');
  };

  it.each([
    ['a bad port', 'https://alice:s3cr3tpw@service.example.org:99999/'],
    ['a bad scheme', 'ftp://alice:s3cr3tpw@service.example.org/'],
    ['no scheme', 'alice:s3cr3tpw@service.example.org'],
    ['plain http off loopback', 'http://alice:s3cr3tpw@service.example.org/'],
    ['credentials on an otherwise good URL', 'https://alice:s3cr3tpw@service.example.org/'],
    ['a space in the host', 'https://alice:s3cr3tpw@service example.org/'],
  ])('%s', (_what, url) => {
    const text = messageOf(() => checkBaseUrl(url));
    expect(text).not.toContain('s3cr3tpw');
    expect(text).not.toContain('alice');
  });

  it('nor through SERVICE_BASE_URL', () => {
    const text = messageOf(() => resolveServiceConfig({ env: { SERVICE_BASE_URL: 'https://bob:hunter2@h:70000', SERVICE_API_KEY: 'k' } }));
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('bob');
    expect(text).toContain('[credentials]@h:70000');
  });
});

describe('through the CLI', () => {
  it.each([
    ['fields with a bad port in SERVICE_BASE_URL', ['fields'], { SERVICE_BASE_URL: 'https://alice:s3cr3tpw@service.example.org:99999', SERVICE_API_KEY: 'k' }],
    ['fields with a bad scheme in --base-url', ['fields', '--base-url', 'ftp://alice:s3cr3tpw@service.example.org/'], { SERVICE_API_KEY: 'k' }],
    ['webhook send-test to a URL with a bad port', ['webhook', 'send-test', 'https://alice:s3cr3tpw@hooks.example.org:99999/x'], { SERVICE_WEBHOOK_KEY: 'k' }],
  ])('%s: exit 1, no credentials, no stack', async (_what, argv, env) => {
    const run = await runCli(argv, { env });
    expect(run.code).toBe(1);
    expect(`${run.stdout}${run.stderr}`).toMatch(/\[credentials\]@/);
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/s3cr3tpw|alice|this is a bug/);
  });
});
