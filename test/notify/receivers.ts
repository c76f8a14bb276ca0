/**
 * Real local receivers for alert tests: an HTTP server on 127.0.0.1:0 that records each POST
 * (and can answer 500, or hang), and an SMTP server (the smtp-server package) that records each
 * message. Both are started by the test and closed after it.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedPost {
  headers: IncomingMessage['headers'];
  body: string;
}

export interface HttpReceiver {
  url: string;
  posts: ReceivedPost[];
  /** How the next requests are answered. */
  mode: 'ok' | 'error500' | 'hang';
  close(): Promise<void>;
}

export async function startHttpReceiver(): Promise<HttpReceiver> {
  const posts: ReceivedPost[] = [];
  const hanging = new Set<import('node:http').ServerResponse>();
  const receiver = { posts, mode: 'ok' as HttpReceiver['mode'] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      posts.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (receiver.mode === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(receiver.mode === 'ok' ? 200 : 500, { 'content-type': 'text/plain' }).end(receiver.mode === 'ok' ? 'ok' : 'boom');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hooks/T000/secret-path-token`,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  });
}

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  user: string | undefined;
  /** The Subject header and the body, decoded (RFC 2047 Q words, quoted-printable). */
  subject: string;
  text: string;
}

/** Quoted-printable to text: soft line breaks joined, `=XX` bytes decoded as UTF-8. */
function decodeQuotedPrintable(text: string): string {
  const joined = text.replace(/=\r?\n/g, '');
  return Buffer.from(joined.replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');
}

function parseMail(raw: string): { subject: string; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]/g, ' ');
  const body = raw.slice(split + 4);
  const subjectLine = /^Subject: (.*)$/m.exec(head)?.[1] ?? '';
  const subject = subjectLine.replace(/=\?UTF-8\?Q\?([^?]*)\?=\s*/gi, (_m, word: string) => decodeQuotedPrintable(word.replace(/_/g, ' ')));
  const text = /quoted-printable/i.test(head) ? decodeQuotedPrintable(body) : body;
  return { subject: subject.trim(), text: text.replace(/\r\n/g, '\n') };
}

export interface SmtpReceiver {
  port: number;
  mails: ReceivedMail[];
  close(): Promise<void>;
}

/** Accepts the login `rostersync` / `password`, as a relay that wants one would. */
export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    // Plain SMTP on loopback: no certificate to make, and the login allowed without TLS for the test.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === 'rostersync' && auth.password === 'smtp-password-1234') callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          user: typeof session.user === 'string' ? session.user : undefined,
          ...parseMail(Buffer.concat(chunks).toString('utf8')),
        });
        callback();
      });
    },
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.server.address() as AddressInfo;
  return { port, mails, close: () => new Promise<void>((done) => server.close(() => done())) };
}
