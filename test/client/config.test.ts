import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient, isLoopback, resolveServiceConfig } from '../../src/client/index.js';
import { UserFacingError } from '../../src/errors/user-facing-error.js';

const dir = mkdtempSync(join(tmpdir(), 'rostersync-config-'));
const keyFile = join(dir, 'key.txt');
writeFileSync(keyFile, 'file-key-123\n', { mode: 0o600 });

describe('resolveServiceConfig', () => {
  it('reads both from the environment', () => {
    const env = { SERVICE_BASE_URL: 'https://service.example.org/', SERVICE_API_KEY: 'env-key' };
    expect(resolveServiceConfig({ env })).toEqual({ baseUrl: 'https://service.example.org', apiKey: 'env-key' });
  });

  it('flags win over the environment', () => {
    const env = { SERVICE_BASE_URL: 'https://a.example.org', SERVICE_API_KEY: 'env-key' };
    expect(resolveServiceConfig({ env, baseUrlFlag: 'https://b.example.org/api', apiKeyFile: keyFile })).toEqual({
      baseUrl: 'https://b.example.org/api',
      apiKey: 'file-key-123',
    });
  });

  it('resolves a relative key file against cwd', () => {
    expect(resolveServiceConfig({ env: { SERVICE_BASE_URL: 'http://127.0.0.1:9' }, apiKeyFile: 'key.txt', cwd: dir }).apiKey).toBe('file-key-123');
  });

  it.each([
    [{}, /no service base URL and no API key/],
    [{ SERVICE_API_KEY: 'k' }, /no service base URL configured/],
    [{ SERVICE_BASE_URL: 'https://x.example.org' }, /no service API key configured/],
  ])('explains how to set what is missing (%j)', (env, message) => {
    const error = (() => {
      try {
        resolveServiceConfig({ env });
      } catch (e) {
        return e;
      }
    })() as UserFacingError;
    expect(error).toBeInstanceOf(UserFacingError);
    expect(error.message).toMatch(message);
    expect(error.hint).toMatch(/SERVICE_BASE_URL/);
    expect(error.hint).toMatch(/--api-key-file/);
  });

  it.each([
    ['http://service.example.org', /refusing plain http/],
    ['http://10.0.0.5:8080', /refusing plain http/],
    ['ftp://service.example.org', /must use https/],
    ['not a url', /not a valid URL/],
    ['https://user:pw@service.example.org', /credentials/],
  ])('refuses base URL %s', (baseUrlFlag, message) => {
    expect(() => resolveServiceConfig({ env: { SERVICE_API_KEY: 'k' }, baseUrlFlag })).toThrow(message);
    expect(() => createClient({ baseUrl: baseUrlFlag, apiKey: 'k' })).toThrow(UserFacingError);
  });

  it.each(['http://127.0.0.1:8080', 'http://localhost:1', 'http://[::1]:3000', 'http://127.1.2.3'])('accepts loopback %s over http', (url) => {
    expect(() => resolveServiceConfig({ env: { SERVICE_API_KEY: 'k' }, baseUrlFlag: url })).not.toThrow();
  });

  it.each([
    ['a missing key file', join(dir, 'nope.txt'), /cannot read API key file/],
    ['an empty key file', (() => { const f = join(dir, 'empty.txt'); writeFileSync(f, '\n'); return f; })(), /exactly one key/],
  ])('refuses %s', (_name, file, message) => {
    expect(() => resolveServiceConfig({ env: { SERVICE_BASE_URL: 'https://x.example.org' }, apiKeyFile: file })).toThrow(message);
  });

  it.each([
    ['127.0.0.1', true],
    ['localhost', true],
    ['[::1]', true],
    ['128.0.0.1', false],
    ['example.org', false],
    ['127.0.0.1.example.org', false],
  ])('isLoopback(%s) = %s', (host, expected) => {
    expect(isLoopback(host)).toBe(expected);
  });
});
