/**
 * Sending one notification: a webhook POST signed with HMAC-SHA256, or an e-mail through SMTP
 * (nodemailer). Each is retried briefly: a nightly job's alert is worth a few seconds, not a
 * run held up for minutes by a channel that is down. Every wait has a deadline: an attempt is cut
 * off `timeoutMs` after it starts however the peer trickles its answer (the libraries' own
 * timeouts only measure silence), and `signal` (the alerts' ceiling, the run's stop) ends any
 * attempt or wait at once.
 */
import { createHmac } from 'node:crypto';
import { request, type Dispatcher } from 'undici';

export interface DeliveryOptions {
  /** Attempts, the first included. @default 3 */
  attempts?: number;
  /** Wait before attempt n+1, doubled each time. @default 1000 */
  baseDelayMs?: number;
  /** Time allowed for one attempt, from its start to its last byte. @default 10000 */
  timeoutMs?: number;
  /** Time allowed for all of a run's alerts together (notify/index.ts). @default ALERTS_CEILING_MS */
  totalMs?: number;
  /** Ends every attempt and wait at once (set by notifyRun: the ceiling and the run's stop signal). */
  signal?: AbortSignal;
  /** CA certificates (PEM) trusted for SMTP TLS besides the system's: a relay with a private CA, or a test's own. */
  tlsCa?: string | undefined;
  sleep?: (ms: number) => Promise<void>;
  dispatcher?: Dispatcher;
}

/**
 * 3 attempts of at most 10 s with waits of 1 s and 2 s take at most 33 s; the channels are tried
 * side by side, so this ceiling is reached only by a peer that defeats the attempts' deadline.
 */
export const ALERTS_CEILING_MS = 40_000;

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
  const deadline = attemptSignal(timeoutMs, options.signal);
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
      signal: deadline,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    // Always consume the body, or undici keeps the connection busy; the deadline covers it too.
    await response.body.dump({ limit: 128 * 1024, signal: deadline });
  } catch (error) {
    const stopped = cutOff(deadline, options.signal, timeoutMs);
    if (stopped) throw stopped;
    const code = error instanceof Error && 'code' in error ? String(error.code) : '';
    const timedOut = error instanceof Error && /TIMEOUT/.test(code);
    throw new DeliveryError(timedOut ? `no answer within ${timeoutMs / 1000} s` : `cannot connect (${code || (error instanceof Error ? error.name : 'error')})`, true);
  }
  if (response.statusCode >= 200 && response.statusCode < 300) return;
  const retryable = response.statusCode >= 500 || response.statusCode === 408 || response.statusCode === 429;
  throw new DeliveryError(`HTTP ${response.statusCode}`, retryable);
}

/** One attempt's deadline: `timeoutMs` from now, or sooner when `outer` (the ceiling, the run's stop) aborts. */
export function attemptSignal(timeoutMs: number, outer: AbortSignal | undefined): AbortSignal {
  const own = AbortSignal.timeout(timeoutMs);
  return outer ? AbortSignal.any([own, outer]) : own;
}

/**
 * Why an attempt whose `deadline` aborted was cut off: its own time ran out (worth another try),
 * or `outer` ended the alerts (not). Undefined when the deadline has not aborted.
 */
export function cutOff(deadline: AbortSignal, outer: AbortSignal | undefined, timeoutMs: number): DeliveryError | undefined {
  if (!deadline.aborted) return undefined;
  if (outer?.aborted) return new DeliveryError(stopReason(outer), false);
  return new DeliveryError(`no complete answer within ${timeoutMs / 1000} s`, true);
}

/** The reason an alerts signal carries (notify/index.ts), in words. */
function stopReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error && reason.name !== 'TimeoutError' && reason.name !== 'AbortError' ? reason.message : 'the alerts were stopped';
}

/** Runs `attempt` until it succeeds, fails for good, the attempts are spent, or `options.signal` ends it. */
export async function withRetries(attempt: () => Promise<void>, options: DeliveryOptions): Promise<Delivered> {
  const attempts = options.attempts ?? 3;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms).unref()));
  for (let n = 1; ; n++) {
    try {
      if (options.signal?.aborted) throw new DeliveryError(stopReason(options.signal), false);
      await attempt();
      return { attempts: n };
    } catch (error) {
      const retryable = !(error instanceof DeliveryError) || error.retryable;
      if (!retryable || n >= attempts) throw Object.assign(error instanceof Error ? error : new Error(String(error)), { attempts: n });
      await untilAborted(sleep((options.baseDelayMs ?? 1000) * 2 ** (n - 1)), options.signal);
    }
  }
}

/** `wait`, or less when `signal` aborts first. */
function untilAborted(wait: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return wait;
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((done) => {
    const stop = () => done();
    signal.addEventListener('abort', stop, { once: true });
    void wait.then(() => {
      signal.removeEventListener('abort', stop);
      done();
    });
  });
}
