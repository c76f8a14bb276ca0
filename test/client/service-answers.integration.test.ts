/**
 * the client against an emulator that behaves the inconvenient way
 * (docs/emulator.md, "Quirks"). Each test fails without the matching fix in src/client/.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  AuthError,
  createClient,
  InvalidRequestError,
  NotFoundError,
  RefusedError,
  UnexpectedResponseError,
  type ServiceClient,
} from '../../src/client/index.js';
import type { QuirksPatch } from '../../src/emulator/quirks.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { KEY, PRESET_GROUP_ID, startTestEmulator } from '../emulator/helpers.js';
import { startTinyServer, type TinyServer } from './helpers.js';
import { testClient } from '../support/client.js';

let emulator: RunningEmulator | undefined;
let tiny: TinyServer | undefined;
afterEach(async () => {
  await emulator?.close();
  await tiny?.close();
  emulator = undefined;
  tiny = undefined;
});

async function clientWith(quirks: QuirksPatch): Promise<ServiceClient> {
  emulator = await startTestEmulator({ quirks });
  return testClient(emulator, { apiKey: KEY, retry: { baseDelayMs: 1, maxAttempts: 2 } });
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a failure, got ${JSON.stringify(outcome.value)}`);
  return outcome.error as Error;
}

describe('200 with {"ok": false}', () => {
  it('is a RefusedError for delete, full and partial writes, and nothing changed', async () => {
    const client = await clientWith({ okFalse: ['pre-1'] });
    for (const attempt of [
      () => client.deleteAuthor(PRESET_GROUP_ID, 'pre-1'),
      () => client.putAuthor(PRESET_GROUP_ID, 'pre-1', { name: 'X' }),
      () => client.patchAuthor(PRESET_GROUP_ID, 'pre-1', { name: 'X' }),
    ]) {
      const error = await rejection(attempt());
      expect(error).toBeInstanceOf(RefusedError);
      expect(error.message).toMatch(/answered 200 with \{"ok": false\}/);
      expect((error as RefusedError).attempts).toBe(1);
    }
    expect((await client.getAuthor(PRESET_GROUP_ID, 'pre-1')).name).toBe('Preset Person');
  });
});

describe('error bodies in other shapes reach the message', () => {
  it('{"detail": ...}', async () => {
    const client = await clientWith({ errorShape: 'detail' });
    const error = await rejection(client.getAuthor(PRESET_GROUP_ID, 'nobody'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toMatch(/answered 404 Not Found: no author with client_id "nobody"/);
  });

  it('{field: [messages]} reads as "field: message", without JSON punctuation', async () => {
    const client = await clientWith({ errorShape: 'field-errors' });
    const error = await rejection(client.createGroup({ group_name: 'G', owner_team: 'Nope', editor_teams: [], viewer_teams: [] }));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.message).toMatch(/answered 400 Bad Request: team "Nope" does not exist/);
    expect(error.message).not.toContain('["');
  });

  it('an HTML page on a 4xx gives its text, not its markup', async () => {
    const client = await clientWith({ errorShape: 'html' });
    const error = await rejection(client.createGroup({ group_name: 'G', owner_team: 'Nope', editor_teams: [], viewer_teams: [] }));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.message).toContain('team "Nope" does not exist in this organization');
    expect(error.message).toContain('Error 400');
    expect(error.message).not.toMatch(/<[a-z!]/i);
  });

  it('an HTML page on a 5xx (after retries) gives its text', async () => {
    const client = await clientWith({ errorShape: 'html' });
    await fetch(`${emulator!.url}/_emulator/faults`, { method: 'POST', body: JSON.stringify({ faults: { status502: 1 } }) });
    const error = await rejection(client.getAuthor(PRESET_GROUP_ID, 'pre-1'));
    expect(error.message).toContain('answered 502 Bad Gateway: HTML page');
    expect(error.message).toContain('injected fault: bad gateway');
    expect(error.message).not.toMatch(/<[a-z!]/i);
  });

  it('an HTML 401 from a strict service is an AuthError with the page text', async () => {
    emulator = await startTestEmulator({ quirks: { errorShape: 'html' } });
    const client = createClient({ baseUrl: emulator.url, apiKey: 'wrong-key-123', retry: { maxAttempts: 1 } });
    const error = await rejection(client.listCustomFields());
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toContain('the X-ApiKey header does not match any organization key');
  });

  it('201 on group creation is a success', async () => {
    const client = await clientWith({ groupCreatedStatus: 201 });
    const created = await client.createGroup({ group_name: 'G', owner_team: 'Editors', editor_teams: [], viewer_teams: [] });
    expect(created.authors_group_id).toBeGreaterThan(0);
  });

  it('a 301 to the slashed path names the Location and says what to check', async () => {
    tiny = await startTinyServer((req, res) => {
      res.writeHead(301, { location: `http://user:pw@127.0.0.1${req.url}/`, 'content-type': 'text/html' });
      res.end('<html><body>Moved</body></html>');
    });
    const client = createClient({ baseUrl: tiny.url, apiKey: KEY, retry: { maxAttempts: 1 } });
    const error = await rejection(client.listCustomFields());
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error.message).toContain('answered 301 Moved Permanently, redirecting to http://127.0.0.1/api/external/custom-fields/all//');
    expect(error.message).not.toContain('pw');
    expect((error as UnexpectedResponseError).hint).toMatch(/trailing slash/);
  });

  it('a Location whose password holds "@" is shown without any of it, as a URL parser reads it', async () => {
    tiny = await startTinyServer((_req, res) => {
      res.writeHead(302, { location: 'https://user:pa@ss@service.example.org/api/', 'content-type': 'text/html' });
      res.end();
    });
    const client = createClient({ baseUrl: tiny.url, apiKey: KEY, retry: { maxAttempts: 1 } });
    const error = await rejection(client.listCustomFields());
    expect(error.message).toContain('redirecting to https://service.example.org/api/');
    expect(error.message).not.toMatch(/pa|ss@/);
  });
});

describe('custom fields of unknown kinds', () => {
  it('are listed, not a broken contract', async () => {
    const client = await clientWith({ unknownKindField: true });
    const listing = await client.listCustomFields();
    expect(listing.author_from_group).toContainEqual(expect.objectContaining({ name: 'Notes (rich text)', data_kind: 'rich_text' }));
  });
});
