/**
 * Alerts never hold a run, and never send the SMTP password in clear. Real local peers: a raw SMTP
 * peer that answers EHLO with a `250-` continuation line every 50 ms and never ends it (each line
 * resets nodemailer's idle timeouts), and smtp-server with and without STARTTLS (its certificate
 * made by openssl in the test, trusted through the injected CA option). Time is scaled down by the
 * injected delivery limits; the CLI's own SIGTERM path runs as a child process.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SMTPServer } from 'smtp-server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { DeliveryOptions } from '../../src/notify/deliver.js';
import type { RunReport } from '../../src/report/types.js';
import { runSync } from '../../src/sync/run-sync.js';
import { API_KEY, emulator, makeProject, people, type Project } from '../support/project.js';
import { waitFor } from '../support/wait-for.js';

const BIN = fileURLToPath(new URL('../../bin/rostersync-dev.js', import.meta.url));
const SMTP_PASSWORD = 'smtp-password-1234';

/** An SMTP peer that greets, then answers EHLO with `250-` lines every 50 ms, for ever. */
async function startTrickler(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.write('220 slow.example ESMTP\r\n');
    socket.once('data', () => {
      let n = 0;
      const timer = setInterval(() => socket.write(`250-still-thinking-${++n}\r\n`), 50);
      socket.on('close', () => clearInterval(timer));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

interface Relay {
  port: number;
  logins: { user: string; secure: boolean }[];
  mails: number;
  close(): Promise<void>;
}

/** smtp-server that accepts `rostersync`/SMTP_PASSWORD, with STARTTLS (given a key and certificate) or without it. */
async function startRelay(tls?: { key: string; cert: string }): Promise<Relay> {
  const relay = { logins: [] as Relay['logins'], mails: 0 };
  const server = new SMTPServer({
    ...(tls ? { key: tls.key, cert: tls.cert } : { disabledCommands: ['STARTTLS'] }),
    // The relay would take a login in clear: only the client can keep the password safe.
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, session, callback) {
      relay.logins.push({ user: auth.username ?? '', secure: session.secure });
      if (auth.username === 'rostersync' && auth.password === SMTP_PASSWORD) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => {
        relay.mails += 1;
        callback();
      });
    },
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return Object.assign(relay, {
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise<void>((done) => server.close(() => done())),
  });
}

/** A self-signed certificate for 127.0.0.1, made here: the key, the certificate, and the certificate as the CA to trust. */
async function selfSigned(): Promise<{ key: string; cert: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'rostersync-tls-'));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], {
    stdio: 'ignore',
  });
  return { key: await readFile(key, 'utf8'), cert: await readFile(cert, 'utf8') };
}

function emailBlock(port: number, extra = ''): string {
  return ['notify:', '  on: [success]', '  email:', `    smtp: { host: 127.0.0.1, port: ${port}${extra} }`, '    from: rostersync@example.org', '    to: [office@example.org]', ''].join('\n');
}

async function addNotify(project: Project, block: string): Promise<void> {
  await writeFile(project.pipeline, `${await readFile(project.pipeline, 'utf8')}${block}`);
}

let emu: RunningEmulator;
let runs = 0;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

async function sync(project: Project, delivery: DeliveryOptions, signal?: AbortSignal): Promise<{ exitCode: number; report: RunReport; reportDir: string }> {
  const reportDir = join(project.dir, `run-${++runs}`);
  const result = await runSync({
    pipelinePath: project.pipeline,
    service: { baseUrl: emu.url, apiKey: API_KEY },
    reportDir,
    createGroup: true,
    env: { TEST_SMTP_PASSWORD: SMTP_PASSWORD },
    notify: delivery,
    ...(signal ? { signal } : {}),
  });
  return { exitCode: result.exitCode, report: JSON.parse(await readFile(join(reportDir, 'report.json'), 'utf8')) as RunReport, reportDir };
}

describe('alerts have a hard deadline', () => {
  it('an SMTP server that trickles 250- lines: each attempt ends at its deadline, the report is written, the lock released', async () => {
    const trickler = await startTrickler();
    try {
      const project = await makeProject(people(3));
      await addNotify(project, emailBlock(trickler.port));
      const run = await sync(project, { attempts: 2, baseDelayMs: 5, timeoutMs: 300 });
      expect(run.exitCode).toBe(0);
      expect(trickler.connections()).toBe(2);
      expect(run.report.notes).toContainEqual(expect.stringMatching(/^the notification by email via 127\.0\.0\.1 to 1 recipient failed after 2 attempts: no complete answer within 0\.3 s\./));
      // The lock was released: the next run takes it.
      expect((await sync(project, { attempts: 1, timeoutMs: 300 })).exitCode).toBe(0);
    } finally {
      await trickler.close();
    }
  });

  it('all alerts together end within their ceiling, whatever the attempts allow', async () => {
    const trickler = await startTrickler();
    try {
      const project = await makeProject(people(3));
      await addNotify(project, emailBlock(trickler.port));
      const run = await sync(project, { attempts: 3, baseDelayMs: 5, timeoutMs: 60_000, totalMs: 400 });
      expect(run.exitCode).toBe(0);
      expect(run.report.notes).toContainEqual(expect.stringMatching(/failed after 1 attempt: the alerts' time \(0\.4 s for all of them\) ran out\./));
    } finally {
      await trickler.close();
    }
  });

  it('SIGTERM while an alert trickles ends the CLI at once; the report is already written and the lock released', async () => {
    const trickler = await startTrickler();
    try {
      const project = await makeProject(people(3));
      await addNotify(project, emailBlock(trickler.port));
      const reportDir = join(project.dir, 'cli-run');
      const child = spawn(process.execPath, [BIN, 'sync', project.pipeline, '--create-group', '--report-dir', reportDir], {
        env: { ...process.env, SERVICE_BASE_URL: emu.url, SERVICE_API_KEY: API_KEY, ROSTERSYNC_LOG_LEVEL: 'error' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
      // The default limits (10 s an attempt): the alert is still trickling when the signal comes.
      await waitFor(() => trickler.connections() > 0, { what: 'the alert to reach the SMTP peer', timeoutMs: 25_000 });
      expect(existsSync(join(reportDir, 'report.json'))).toBe(true);
      child.kill('SIGTERM');
      let code: number | null | undefined;
      void exited.then((value) => (code = value));
      await waitFor(() => code !== undefined, { what: `the CLI to exit after one SIGTERM (stderr: ${stderr})`, timeoutMs: 5000 });
      expect(code).toBe(0);
      const report = JSON.parse(await readFile(join(reportDir, 'report.json'), 'utf8')) as RunReport;
      expect(report.notes).toContainEqual(expect.stringMatching(/failed after 1 attempt: the run was told to stop\./));
      expect(trickler.connections()).toBe(1);
      expect((await sync(project, { attempts: 1, timeoutMs: 300 })).exitCode).toBe(0);
    } finally {
      await trickler.close();
    }
  }, 40_000);
});

describe('SMTP requires TLS before the password', () => {
  it('a relay that offers no STARTTLS is refused: no login is sent, no message', async () => {
    const relay = await startRelay();
    try {
      const project = await makeProject(people(3));
      await addNotify(project, emailBlock(relay.port, ', user: rostersync, password_env: TEST_SMTP_PASSWORD'));
      const run = await sync(project, { attempts: 3, baseDelayMs: 5, timeoutMs: 2000 });
      expect(run.exitCode).toBe(0);
      expect(relay.logins).toEqual([]);
      expect(relay.mails).toBe(0);
      expect(run.report.notes).toContainEqual(expect.stringMatching(/failed after 1 attempt: the SMTP server offers no TLS \(STARTTLS\), so nothing was sent, the password included; .*allow_plaintext: true/));
    } finally {
      await relay.close();
    }
  });

  it('a relay with STARTTLS and a certificate of its own CA: the login and the message go over TLS', async () => {
    const tls = await selfSigned();
    const relay = await startRelay(tls);
    try {
      const project = await makeProject(people(3));
      await addNotify(project, emailBlock(relay.port, ', user: rostersync, password_env: TEST_SMTP_PASSWORD'));
      const run = await sync(project, { attempts: 1, timeoutMs: 5000, tlsCa: tls.cert });
      expect(run.report.notes).toContainEqual(expect.stringMatching(/^notified email via 127\.0\.0\.1 to 1 recipient \(success\)\.$/));
      expect(relay.logins).toEqual([{ user: 'rostersync', secure: true }]);
      expect(relay.mails).toBe(1);
    } finally {
      await relay.close();
    }
  });

  it('allow_plaintext: true, the documented opt-out for a trusted relay, sends without TLS', async () => {
    const relay = await startRelay();
    try {
      const project = await makeProject(people(3));
      await addNotify(project, emailBlock(relay.port, ', user: rostersync, password_env: TEST_SMTP_PASSWORD, allow_plaintext: true'));
      const run = await sync(project, { attempts: 1, timeoutMs: 5000 });
      expect(run.report.notes).toContainEqual(expect.stringMatching(/^notified email via 127\.0\.0\.1/));
      expect(relay.logins).toEqual([{ user: 'rostersync', secure: false }]);
    } finally {
      await relay.close();
    }
  });
});
