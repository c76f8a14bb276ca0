/**
 * E-mail through SMTP with nodemailer (loaded when a pipeline sends mail, not at start-up).
 */
import type { NotifyConfig } from '../config/pipeline.js';
import { DeliveryError, type DeliveryOptions } from './deliver.js';

export type EmailConfig = NonNullable<NotifyConfig['email']>;

export interface Mail {
  subject: string;
  text: string;
}

export async function sendEmail(config: EmailConfig, password: string | undefined, mail: Mail, options: DeliveryOptions): Promise<void> {
  const { createTransport } = await import('nodemailer');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const smtp = config.smtp;
  const transport = createTransport({
    host: smtp.host,
    port: smtp.port ?? (smtp.secure ? 465 : 587),
    secure: smtp.secure,
    ...(smtp.user ? { auth: { user: smtp.user, pass: password ?? '' } } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  try {
    await transport.sendMail({ from: config.from, to: config.to, subject: mail.subject, text: mail.text });
  } catch (error) {
    throw smtpFailure(error);
  } finally {
    transport.close();
  }
}

/** What went wrong in words without the settings, and whether to try again: a 4xx answer or a lost connection may pass; a refused login or a 5xx will not. */
function smtpFailure(error: unknown): DeliveryError {
  const code = error instanceof Error && 'code' in error ? String(error.code) : '';
  const responseCode = error instanceof Error && 'responseCode' in error ? Number(error.responseCode) : undefined;
  if (code === 'EAUTH') return new DeliveryError(`the SMTP server refused the login${responseCode ? ` (${responseCode})` : ''}`, false);
  if (responseCode !== undefined && responseCode >= 500) return new DeliveryError(`the SMTP server answered ${responseCode}`, false);
  if (responseCode !== undefined) return new DeliveryError(`the SMTP server answered ${responseCode}`, true);
  return new DeliveryError(`SMTP ${code || 'error'}${code === 'ETIMEDOUT' ? ' (no answer in time)' : ''}`, code !== 'EENVELOPE');
}
