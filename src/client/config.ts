/**
 * Where the service is and which key to use. The API key comes from `SERVICE_API_KEY` or a key file
 * (`--api-key-file`), never from a plain flag, so it stays out of shell history and process lists.
 * A base URL off loopback must use https (design.md, decision 9).
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { UserFacingError } from '../errors/user-facing-error.js';

export interface ServiceConfig {
  /** Base URL without a trailing slash, e.g. `https://service.example.org`. */
  baseUrl: string;
  apiKey: string;
}

export interface ResolveServiceConfigInput {
  /** Environment to read `SERVICE_API_KEY` and `SERVICE_BASE_URL` from. */
  env: NodeJS.ProcessEnv;
  /** Value of `--base-url`; wins over `SERVICE_BASE_URL`. */
  baseUrlFlag?: string | undefined;
  /** Value of `--api-key-file`; wins over `SERVICE_API_KEY`. */
  apiKeyFile?: string | undefined;
  /** Directory a relative key file is resolved against. @default process.cwd() */
  cwd?: string | undefined;
}

const HOW_TO_SET =
  'Set SERVICE_BASE_URL and SERVICE_API_KEY in the environment, or pass --base-url URL and --api-key-file FILE ' +
  '(a file holding only the key). For the local emulator: SERVICE_BASE_URL=http://127.0.0.1:PORT SERVICE_API_KEY=demo-key-0123456789.';

export function resolveServiceConfig(input: ResolveServiceConfigInput): ServiceConfig {
  const rawBaseUrl = nonEmpty(input.baseUrlFlag) ?? nonEmpty(input.env.SERVICE_BASE_URL);
  const apiKey = input.apiKeyFile !== undefined ? readKeyFile(input.apiKeyFile, input.cwd) : nonEmpty(input.env.SERVICE_API_KEY);
  const missing = [rawBaseUrl === undefined ? 'base URL' : undefined, apiKey === undefined ? 'API key' : undefined].filter(Boolean);
  if (rawBaseUrl === undefined || apiKey === undefined) {
    throw new UserFacingError(`no service ${missing.join(' and no ')} configured`, { hint: HOW_TO_SET });
  }
  return { baseUrl: checkBaseUrl(rawBaseUrl), apiKey };
}

/** Validates a base URL: http(s) only, and plain http only on loopback. Returns it without trailing slash. */
export function checkBaseUrl(raw: string): string {
  let url: URL;
  const shown = urlForMessage(raw);
  try {
    url = new URL(raw);
  } catch {
    // No `cause`: the URL parser's own error repeats the input, credentials included.
    throw new UserFacingError(`base URL "${shown}" is not a valid URL`, {
      hint: 'Give an absolute URL such as https://service.example.org (a port, when given, is a number up to 65535).',
    });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UserFacingError(`base URL "${shown}" must use https:// (or http:// on loopback)`, { hint: HOW_TO_SET });
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new UserFacingError(`refusing plain http:// to ${url.hostname}: the API key would travel unencrypted`, {
      hint: 'Use an https:// base URL; http:// is accepted only for loopback hosts (127.0.0.1, ::1, localhost).',
    });
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new UserFacingError(`base URL "${url.origin}${url.pathname}" must not carry credentials, a query or a fragment`, {
      hint: 'Give only scheme, host, port and an optional path prefix.',
    });
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

/**
 * A URL as it may appear in a message: any `user:password@` (up to the last `@` before the first
 * `/`, `?` or `#` after the scheme, as URL parsers read it) is replaced by `shownAs`, whether or not
 * the URL is otherwise valid. The base URL the user gave is shown with a `[credentials]@` mark; a
 * redirect's `Location` without them (`''`), as an address to give to `--base-url`.
 */
export function urlForMessage(raw: string, shownAs = '[credentials]@'): string {
  const withScheme = /^(\s*[a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;
  if (withScheme.test(raw)) return raw.replace(withScheme, (_, scheme: string) => `${scheme}${shownAs}`);
  return raw.replace(/^[^/?#]*@/, shownAs);
}

export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

function readKeyFile(file: string, cwd: string | undefined): string {
  const path = resolve(cwd ?? process.cwd(), file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new UserFacingError(`cannot read API key file ${path} (${code})`, {
      hint: 'Pass --api-key-file with a readable file that holds only the key, or set SERVICE_API_KEY.',
      cause: error,
    });
  }
  const key = text.trim();
  if (key === '' || /\s/.test(key)) {
    throw new UserFacingError(`API key file ${path} must hold exactly one key on one line`, {
      hint: 'Write only the key into the file, e.g. `printf %s "$KEY" > key.txt && chmod 600 key.txt`.',
    });
  }
  return key;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
