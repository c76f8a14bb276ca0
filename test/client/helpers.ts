/** Test helpers: a tiny real HTTP server on 127.0.0.1:0 and a fake clock whose sleep advances time. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export type TinyHandler = (req: SeenRequest, res: ServerResponse, index: number) => void | Promise<void>;

export interface TinyServer {
  url: string;
  port: number;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/** Starts a node:http server whose handler sees each request with its whole body. */
export async function startTinyServer(handler: TinyHandler): Promise<TinyServer> {
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      requests.push(seen);
      void Promise.resolve(handler(seen, res, requests.length - 1)).catch(() => res.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A port on 127.0.0.1 that nothing listens on (connection refused). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A clock whose sleep returns at once and moves time forward, recording every sleep. */
export function fakeClock(startMs = Date.parse('2030-01-01T00:00:00Z')) {
  let current = startMs;
  const slept: number[] = [];
  return {
    now: () => current,
    sleep: async (ms: number, signal?: AbortSignal) => {
      signal?.throwIfAborted();
      slept.push(ms);
      current += ms;
    },
    advance: (ms: number) => {
      current += ms;
    },
    slept,
  };
}

export const API_KEY = 'test-key-SECRET-4f1c9a';
