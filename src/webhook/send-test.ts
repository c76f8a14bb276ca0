/**
 * The verification request of docs/service-contract.md, The webhook: "the client can check its endpoint by sending a POST
 * with a body of the same shape, with `test` set to true". Works against any URL.
 */
import { request } from 'undici';
import type { WebhookEnvelope } from '../client/schemas.js';

export interface SendTestOptions {
  /** Time allowed for the answer. @default 10000 */
  timeoutMs?: number;
  /** Clock for `timestamp` (ms since epoch). @default Date.now */
  now?: () => number;
}

export interface SendTestResult {
  status: number;
  /** The first 200 characters of the answer. */
  bodySnippet: string;
}

export function testEnvelope(apiKey: string, nowMs: number): WebhookEnvelope {
  return {
    action: 'mark_as_proposal_referee',
    timestamp: Math.floor(nowMs / 1000),
    order: 0,
    api_key: apiKey,
    test: true,
    payload: { version: 1, manuscript_id: 0, origin_id: null, candidates: [], authors_groups_settings: null },
  };
}

export async function sendTestWebhook(url: string, apiKey: string, options: SendTestOptions = {}): Promise<SendTestResult> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(testEnvelope(apiKey, (options.now ?? Date.now)())),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const text = await response.body.text();
  return { status: response.statusCode, bodySnippet: text.slice(0, 200) };
}
