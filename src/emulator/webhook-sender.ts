/**
 * Delivery of `mark_as_proposal_referee` webhooks (docs/service-contract.md, The webhook) from the emulator.
 *
 * The spec leaves the expected answer and the retry behaviour open ("Gaps"); the design brief says
 * the receiver must answer 200 and other answers count as failed delivery. So each delivery is
 * retried while the answer is not 200 (or there is none), with exponential backoff
 * `min(maxDelayMs, baseDelayMs · 2^(attempt-1))`, up to `maxAttempts`. Deliveries run in the
 * background: the user's click (`POST /_emulator/mark`) never waits for them. Each delivery is
 * independent, so a retried event can arrive after a later one — receivers order by `order`.
 */
import { request } from 'undici';
import type { WebhookEnvelope } from '../client/schemas.js';
import type { EmulatorRuntime } from './runtime.js';

export interface WebhookRetryPolicy {
  /** Delay before the second attempt, doubled for each further one. @default 1000 */
  baseDelayMs: number;
  /** Upper bound of one delay. @default 60000 */
  maxDelayMs: number;
  /** Attempts per delivery, the first included. @default 12 */
  maxAttempts: number;
  /** Time allowed for one attempt (headers and body). @default 10000 */
  timeoutMs: number;
}

export const DEFAULT_WEBHOOK_RETRY: WebhookRetryPolicy = { baseDelayMs: 1000, maxDelayMs: 60_000, maxAttempts: 12, timeoutMs: 10_000 };

/** Pure: the wait before attempt `attempt + 1` after `attempt` failed ones (1-based). */
export function retryDelayMs(policy: WebhookRetryPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
}

export interface DeliveryRecord {
  id: number;
  url: string;
  order: number;
  manuscriptId: number;
  test: boolean;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  /** HTTP status of the last attempt, or the network error code. */
  lastResult: number | string | null;
}

export class WebhookSender {
  policy: WebhookRetryPolicy;
  private readonly records: DeliveryRecord[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly timers = new Set<{ timer: NodeJS.Timeout; wake: () => void }>();
  private nextId = 1;
  private closed = false;

  constructor(policy: Partial<WebhookRetryPolicy> = {}) {
    this.policy = { ...DEFAULT_WEBHOOK_RETRY, ...policy };
  }

  /** Starts delivering in the background and returns its record at once. */
  send(url: string, envelope: WebhookEnvelope): DeliveryRecord {
    const record: DeliveryRecord = {
      id: this.nextId++,
      url,
      order: envelope.order,
      manuscriptId: envelope.payload.manuscript_id,
      test: envelope.test === true,
      status: 'pending',
      attempts: 0,
      lastResult: null,
    };
    this.records.push(record);
    const running = this.deliver(record, JSON.stringify(envelope)).finally(() => this.inFlight.delete(running));
    this.inFlight.add(running);
    return record;
  }

  deliveries(): DeliveryRecord[] {
    return this.records.map((r) => ({ ...r }));
  }

  /** Resolves when no delivery is pending, or after `timeoutMs`; true when idle. */
  async idle(timeoutMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((resolve) => setTimeout(resolve, left))]);
    }
    return true;
  }

  /** Stops retrying: pending deliveries end as failed. */
  async close(): Promise<void> {
    this.closed = true;
    for (const entry of this.timers) {
      clearTimeout(entry.timer);
      entry.wake();
    }
    await Promise.allSettled([...this.inFlight]);
  }

  private async deliver(record: DeliveryRecord, body: string): Promise<void> {
    while (!this.closed && record.attempts < this.policy.maxAttempts) {
      record.attempts++;
      record.lastResult = await this.attempt(record.url, body);
      if (record.lastResult === 200) {
        record.status = 'delivered';
        return;
      }
      if (record.attempts < this.policy.maxAttempts) await this.wait(retryDelayMs(this.policy, record.attempts));
    }
    record.status = 'failed';
  }

  private async attempt(url: string, body: string): Promise<number | string> {
    try {
      const response = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'rostersync-emulator-webhook' },
        body,
        headersTimeout: this.policy.timeoutMs,
        bodyTimeout: this.policy.timeoutMs,
      });
      await response.body.dump();
      return response.statusCode;
    } catch (error) {
      return (error as { code?: string }).code ?? (error as Error).name;
    }
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.timers.delete(entry);
          resolve();
        }, ms),
        wake: () => resolve(),
      };
      this.timers.add(entry);
    });
  }
}

const senders = new WeakMap<EmulatorRuntime, WebhookSender>();

/** The webhook sender of one emulator instance, stopped when the emulator closes. */
export function webhookSenderOf(runtime: EmulatorRuntime): WebhookSender {
  let sender = senders.get(runtime);
  if (!sender) {
    const created = new WebhookSender();
    runtime.onClose(() => created.close());
    senders.set(runtime, created);
    sender = created;
  }
  return sender;
}
