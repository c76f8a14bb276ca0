/**
 * An HTTP receiver for the service's `mark_as_proposal_referee` webhook (docs/service-contract.md, The webhook).
 *
 * Per request: method must be POST (405) → body read up to `maxBodyBytes` (413) → JSON (400) →
 * `api_key` compared in constant time with the webhook's key (401) → envelope validated with
 * `webhookEnvelopeSchema` (400, naming the field) → `test: true` answered 200 and not stored →
 * otherwise applied to the store unless its `order` is stale (200 either way, so the service stops
 * retrying). Every answer is JSON; nothing about a request can crash the process.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { isIP } from 'node:net';
import { webhookEnvelopeSchema } from '../client/schemas.js';
import { openSelectionStore, type SelectionStore } from './selection-store.js';
import type { ApplyResult } from './store.js';

export interface WebhookReceiverOptions {
  /** TCP port; 0 picks a free one. @default 0 */
  port?: number;
  /** Interface to bind. @default '127.0.0.1' */
  host?: string;
  /** The webhook's own key, expected as `api_key` in every body. Never logged. */
  apiKey: string;
  /**
   * Where the referee selections are kept: a SQLite file (mode 0600), a postgres:// URL shared by
   * several replicas, or the `.json` file of earlier versions (see selection-store.ts).
   */
  storePath?: string;
  /** An open store instead of `storePath` (the caller closes it). */
  store?: SelectionStore;
  /** Where ROSTERSYNC_STATE_URL and the database password are read (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Largest accepted body in bytes; larger → 413. @default 1 MiB */
  maxBodyBytes?: number;
  /** Called after each answered request, e.g. for logging (no key, no personal data in `event`). */
  onRequest?: (event: ReceiverEvent) => void;
}

export interface ReceiverEvent {
  status: number;
  outcome: 'applied' | 'stale' | 'test' | 'rejected';
  order?: number;
  manuscriptId?: number;
  reason?: string;
}

export interface RunningWebhookReceiver {
  /** e.g. `http://127.0.0.1:40123/` */
  url: string;
  port: number;
  store: SelectionStore;
  close(): Promise<void>;
}

export const DEFAULT_MAX_WEBHOOK_BODY = 1024 * 1024;

/** Constant-time comparison of two secrets of any length (hashing first equalises lengths). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export async function startWebhookReceiver(options: WebhookReceiverOptions): Promise<RunningWebhookReceiver> {
  if (!options.apiKey) throw new Error('startWebhookReceiver: apiKey is required');
  const host = options.host ?? '127.0.0.1';
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_WEBHOOK_BODY;
  const ownStore = options.store === undefined;
  const store = options.store ?? (await openSelectionStore(options.storePath, options.env ? { env: options.env } : {}));
  const sockets = new Set<Socket>();

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      answer(res, 500, { ok: false, error: 'internal error' }, { outcome: 'rejected', reason: (error as Error).message });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });

  function answer(res: ServerResponse, status: number, body: unknown, event: Omit<ReceiverEvent, 'status'>, close = false): void {
    if (!res.headersSent && !res.destroyed) {
      const text = JSON.stringify(body);
      const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
      if (status === 405) headers.allow = 'POST';
      if (close) headers.connection = 'close';
      res.writeHead(status, headers);
      res.end(text);
    }
    options.onRequest?.({ status, ...event });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      req.resume();
      answer(res, 405, { ok: false, error: 'use POST' }, { outcome: 'rejected', reason: 'method' });
      return;
    }
    const body = await readBody(req, maxBodyBytes);
    if (body === 'too-large') {
      answer(res, 413, { ok: false, error: `body larger than ${maxBodyBytes} bytes` }, { outcome: 'rejected', reason: 'too large' }, true);
      return;
    }
    if (body === 'aborted') return;
    let doc: unknown;
    try {
      doc = JSON.parse(body.toString('utf8'));
    } catch {
      answer(res, 400, { ok: false, error: 'body is not valid JSON' }, { outcome: 'rejected', reason: 'json' });
      return;
    }
    const key = doc !== null && typeof doc === 'object' ? (doc as { api_key?: unknown }).api_key : undefined;
    if (typeof key !== 'string' || !secretsEqual(key, options.apiKey)) {
      answer(res, 401, { ok: false, error: 'api_key does not match this webhook' }, { outcome: 'rejected', reason: 'key' });
      return;
    }
    const parsed = webhookEnvelopeSchema.safeParse(doc);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const error = `${issue.path.join('.') || '(body)'}: ${issue.message}`;
      answer(res, 400, { ok: false, error }, { outcome: 'rejected', reason: error });
      return;
    }
    const envelope = parsed.data;
    const ids = { order: envelope.order, manuscriptId: envelope.payload.manuscript_id };
    if (envelope.test === true) {
      answer(res, 200, { ok: true, test: true }, { outcome: 'test', ...ids });
      return;
    }
    let result: ApplyResult;
    try {
      result = await store.apply(envelope);
    } catch (error) {
      // Not stored: a non-200 makes the service retry later.
      answer(res, 500, { ok: false, error: 'could not write the store' }, { outcome: 'rejected', reason: (error as Error).message, ...ids });
      return;
    }
    answer(res, 200, { ok: true, applied: result === 'applied' }, { outcome: result, ...ids });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = isIP(host) === 6 ? `[${host}]` : host;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${urlHost}:${port}/`,
    port,
    store,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        for (const socket of sockets) socket.destroy();
      }).then(() => (ownStore ? store.close() : undefined))),
  };
}

/** Reads the body, stopping at the limit (then draining a little so the client sees the 413). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large' | 'aborted'> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.resolve('too-large');
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        tooLarge = true;
        if (size > limit * 4) req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', () => resolve(tooLarge ? 'too-large' : 'aborted'));
    req.on('close', () => {
      if (!req.complete) resolve(tooLarge ? 'too-large' : 'aborted');
    });
  });
}
