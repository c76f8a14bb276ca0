/**
 * One HTTP exchange with the service over undici: the per-attempt timeout, the caller's abort
 * signal, the cap on the answer's size, and the body always read to its end or destroyed, so no
 * connection is left busy. What the answer means is `answer.ts`'s business.
 */
import { request, type Dispatcher, type FormData } from 'undici';
import { NetworkError, RequestAbortedError, TimeoutError, UnexpectedResponseError, redactSecret } from './errors.js';
import type { EndpointMethod } from './endpoints.js';
import type { AttemptFailure } from './retry-loop.js';

export interface TransportSettings {
  /** Base URL without trailing slash (config.ts `checkBaseUrl`). */
  baseUrl: string;
  apiKey: string;
  dispatcher: Dispatcher | undefined;
  /** Largest answer read, in bytes. */
  maxResponseBytes: number;
}

export interface Exchange {
  method: EndpointMethod;
  /** Encoded path under the base URL. */
  path: string;
  query?: Record<string, string> | undefined;
  payload?: { body: string | FormData; contentType?: string | undefined } | undefined;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** An answer as it came: any status, the body read whole as UTF-8. */
export interface RawAnswer {
  status: number;
  /** Empty when the answer named none. */
  contentType: string;
  text: string;
  retryAfter: string | undefined;
  location: string | undefined;
}

/**
 * Sends one request. Answers the raw answer, or the failure of a timeout, a network error or an
 * oversized answer; throws RequestAbortedError when the caller's signal stopped it.
 */
export async function exchange(settings: TransportSettings, sent: Exchange): Promise<{ ok: true; answer: RawAnswer } | AttemptFailure> {
  const { method, path, timeoutMs } = sent;
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), timeoutMs);
  const userSignal = sent.signal;
  const signal = userSignal ? AbortSignal.any([timeout.signal, userSignal]) : timeout.signal;
  const headers: Record<string, string> = { 'x-apikey': settings.apiKey, accept: 'application/json' };
  if (sent.payload?.contentType) headers['content-type'] = sent.payload.contentType;
  const query = sent.query ? `?${new URLSearchParams(sent.query).toString()}` : '';
  try {
    const response = await request(`${settings.baseUrl}${path}${query}`, {
      method,
      headers,
      body: sent.payload?.body ?? null,
      signal,
      ...(settings.dispatcher ? { dispatcher: settings.dispatcher } : {}),
    });
    const status = response.statusCode;
    const contentType = headerValue(response.headers['content-type']) ?? '';
    // Always consume the body, or undici keeps the connection busy; a body past the cap is
    // destroyed instead (the service's answers are small: a huge one is a proxy or a fault).
    const text = await readCapped(response.body, settings.maxResponseBytes);
    if (text === undefined) {
      const message = `${method} ${path} answered ${status} with more than ${settings.maxResponseBytes} bytes; refusing to read it`;
      return { ok: false, error: new UnexpectedResponseError(message, { method, path, status, contentType: contentType || undefined }), outcome: { kind: 'status', status } };
    }
    return {
      ok: true,
      answer: { status, contentType, text, retryAfter: headerValue(response.headers['retry-after']), location: headerValue(response.headers.location) },
    };
  } catch (cause) {
    if (userSignal?.aborted) {
      throw new RequestAbortedError(`${method} ${path} was aborted`, { method, path, cause: userSignal.reason });
    }
    if (timeout.signal.aborted) {
      const error = new TimeoutError(`${method} ${path} got no complete answer within ${timeoutMs} ms`, { method, path, timeoutMs, cause });
      return { ok: false, error, outcome: { kind: 'timeout' } };
    }
    const code = errorCode(cause);
    const reason = cause instanceof Error ? cause.message : String(cause);
    const error = new NetworkError(`${method} ${path} failed: ${redactSecret(reason, settings.apiKey)}`, { method, path, code, cause });
    return { ok: false, error, outcome: { kind: 'network', code } };
  } finally {
    clearTimeout(timer);
  }
}

/** Reads a response body as UTF-8 text, or destroys it and answers undefined past `maxBytes`. */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The system or undici code of a network failure (also inside AggregateError from happy eyeballs). */
function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const cause = (error as { cause?: unknown }).cause;
  if (cause !== undefined && cause !== error) return errorCode(cause);
  const errors = (error as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.length > 0) return errorCode(errors[0]);
  return undefined;
}
