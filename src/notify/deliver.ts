/**
 * Sending one notification: a webhook POST signed with HMAC-SHA256, or an e-mail through SMTP
 * (nodemailer). Each is retried briefly: a nightly job's alert is worth a few seconds, not a
 * run held up for minutes by a channel that is down.
 */
import { createHmac } from 'node:crypto';
import { request, type Dispatcher } from 'undici';

export interface DeliveryOptions {
  /** Attempts, the first included. @default 3 */
  attempts?: number;
  /** Wait before attempt n+1, doubled each time. @default 1000 */
  baseDelayMs?: number;
  /** Time allowed for one attempt. @default 10000 */
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  dispatcher?: Dispatcher;
}

export interface Delivered {
  attempts: number;
}

/** An attempt that failed, and whether another attempt could succeed. */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

export const SIGNATURE_HEADER = 'x-rostersync-signature-256';

/** `sha256=<hex>`: the HMAC-SHA256 of the exact body bytes, as GitHub signs its webhooks. */
export function signBody(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export async function postWebhook(url: string, body: string, secret: string | undefined, options: DeliveryOptions): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  let response: Dispatcher.ResponseData;
  try {
    response = await request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'rostersync',
        ...(secret ? { [SIGNATURE_HEADER]: signBody(body, secret) } : {}),
      },
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : '';
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError' || /TIMEOUT/.test(code));
    throw new DeliveryError(timedOut ? `no answer within ${timeoutMs / 1000} s` : `cannot connect (${code || (error instanceof Error ? error.name : 'error')})`, true);
  }
  // Always consume the body, or undici keeps the connection busy.
  await response.body.dump();
  if (response.statusCode >= 200 && response.statusCode < 300) return;
  const retryable = response.statusCode >= 500 || response.statusCode === 408 || response.statusCode === 429;
  throw new DeliveryError(`HTTP ${response.statusCode}`, retryable);
}

/** Runs `attempt` until it succeeds, fails for good, or the attempts are spent. */
export async function withRetries(attempt: () => Promise<void>, options: DeliveryOptions): Promise<Delivered> {
  const attempts = options.attempts ?? 3;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)));
  for (let n = 1; ; n++) {
    try {
      await attempt();
      return { attempts: n };
    } catch (error) {
      const retryable = !(error instanceof DeliveryError) || error.retryable;
      if (!retryable || n >= attempts) throw Object.assign(error instanceof Error ? error : new Error(String(error)), { attempts: n });
      await sleep((options.baseDelayMs ?? 1000) * 2 ** (n - 1));
    }
  }
}
