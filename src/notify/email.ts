/**
 * E-mail through SMTP with nodemailer (loaded when a pipeline sends mail, not at start-up).
 *
 * TLS: `secure: true` speaks TLS from the first byte (port 465); otherwise the session must be
 * upgraded with STARTTLS before the login or the message, and a server that offers no STARTTLS is
 * refused, so neither the password nor the message crosses the network in clear. Two exceptions,
 * both stated in the pipeline: a relay on this machine's loopback without a login (a local MTA),
 * and `allow_plaintext: true` for a relay the operator trusts the network to.
 */
import { isIP } from 'node:net';
import type { NotifyConfig } from '../config/pipeline.js';
import { attemptSignal, cutOff, DeliveryError, type DeliveryOptions } from './deliver.js';

export type EmailConfig = NonNullable<NotifyConfig['email']>;

export interface Mail {
  subject: string;
  text: string;
}

/** 127.0.0.0/8, ::1 and `localhost`: a relay on this machine. */
function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

/** Whether this session must be encrypted before anything is sent (see the header). */
export function smtpNeedsTls(smtp: EmailConfig['smtp']): boolean {
  if (smtp.secure || smtp.allow_plaintext) return false;
  return !isLoopback(smtp.host) || smtp.user !== undefined;
}

export async function sendEmail(config: EmailConfig, password: string | undefined, mail: Mail, options: DeliveryOptions): Promise<void> {
  const { createTransport } = await import('nodemailer');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const smtp = config.smtp;
  const transport = createTransport({
    host: smtp.host,
    port: smtp.port ?? (smtp.secure ? 465 : 587),
    secure: smtp.secure,
    ...(smtpNeedsTls(smtp) ? { requireTLS: true } : {}),
    ...(options.tlsCa ? { tls: { ca: options.tlsCa } } : {}),
    ...(smtp.user ? { auth: { user: smtp.user, pass: password ?? '' } } : {}),
    // Idle timeouts; the attempt's deadline below bounds the whole session.
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  const deadline = attemptSignal(timeoutMs, options.signal);
  try {
    await transport.sendMail({ from: config.from, to: config.to, subject: mail.subject, text: mail.text, signal: deadline });
  } catch (error) {
    throw cutOff(deadline, options.signal, timeoutMs) ?? smtpFailure(error);
  } finally {
    transport.close();
  }
}

/** What went wrong in words without the settings, and whether to try again: a 4xx answer or a lost connection may pass; a refused login or a 5xx will not. */
function smtpFailure(error: unknown): DeliveryError {
  const code = error instanceof Error && 'code' in error ? String(error.code) : '';
  const responseCode = error instanceof Error && 'responseCode' in error ? Number(error.responseCode) : undefined;
  if (code === 'ETLS') {
    return new DeliveryError(
      'the SMTP server offers no TLS (STARTTLS), so nothing was sent, the password included; use a relay with STARTTLS, `secure: true` for TLS on port 465, or `allow_plaintext: true` for a relay you trust the network to',
      false,
    );
  }
  if (error instanceof Error && /certificate/i.test(error.message)) return new DeliveryError(`the SMTP server's TLS certificate was not accepted (${error.message})`, false);
  if (code === 'EAUTH') return new DeliveryError(`the SMTP server refused the login${responseCode ? ` (${responseCode})` : ''}`, false);
  if (responseCode !== undefined && responseCode >= 500) return new DeliveryError(`the SMTP server answered ${responseCode}`, false);
  if (responseCode !== undefined) return new DeliveryError(`the SMTP server answered ${responseCode}`, true);
  return new DeliveryError(`SMTP ${code || 'error'}${code === 'ETIMEDOUT' ? ' (no answer in time)' : ''}`, code !== 'EENVELOPE');
}
