/**
 * What an answer of the service means (pure): an error status becomes its typed error, a 2xx must
 * be JSON of the endpoint's schema, and a `{"ok": false}` where `{"ok": true}` is promised is a
 * refusal. Every text that may reach a message is scrubbed of the API key.
 */
import type { z } from 'zod';
import { urlForMessage } from './config.js';
import { describeErrorBody, excerpt } from './error-body.js';
import { RefusedError, ResponseShapeError, UnexpectedResponseError, errorFromStatus, redactSecret } from './errors.js';
import { parseRetryAfter, type AttemptOutcome } from './retry-policy.js';
import type { AttemptResult } from './retry-loop.js';
import type { RawAnswer } from './transport.js';

/** What the answer is read against. */
export interface AnswerExpectation<T> {
  /** Client method name, quoted when the answer breaks the contract. */
  endpoint: string;
  method: string;
  /** Encoded path, for messages. */
  path: string;
  schema: z.ZodType<T>;
  okRequired: boolean;
  apiKey: string;
  /** Now, in milliseconds, to read a `Retry-After` date against. */
  nowMs: number;
}

export function readAnswer<T>(answer: RawAnswer, expected: AnswerExpectation<T>): AttemptResult<T> {
  const { method, path, apiKey } = expected;
  const { status, contentType, text } = answer;
  const bodyExcerpt = excerpt(redactSecret(text, apiKey));
  const isJson = /^application\/([\w.+-]*\+)?json\b/i.test(contentType);
  const details = { method, path, status, bodyExcerpt, contentType: contentType || undefined };

  if (status < 200 || status >= 300) {
    const described = describeErrorBody(text, contentType, isJson);
    const serviceMessage = described.message !== undefined ? excerpt(redactSecret(described.message, apiKey)) : undefined;
    const retryAfterMs = parseRetryAfter(answer.retryAfter, expected.nowMs);
    // Without credentials, as the user could give it to --base-url.
    const location = answer.location === undefined ? undefined : redactSecret(urlForMessage(answer.location, ''), apiKey);
    const error = errorFromStatus({ ...details, serviceMessage, serviceCode: described.code, retryAfterMs, location });
    return { ok: false, error, outcome: { kind: 'status', status, retryAfterMs } };
  }
  const outcome: AttemptOutcome = { kind: 'status', status };
  if (!isJson) {
    const message = `${method} ${path} answered ${status} with ${contentType || 'no content type'} instead of JSON: ${bodyExcerpt || '(empty body)'}`;
    return { ok: false, error: new UnexpectedResponseError(message, details), outcome };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    const message = `${method} ${path} answered ${status} with invalid JSON: ${bodyExcerpt || '(empty body)'}`;
    return { ok: false, error: new UnexpectedResponseError(message, { ...details, cause }), outcome };
  }
  const parsed = expected.schema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => ({
      path: issue.path.map(String).join('.') || '(root)',
      message: issue.message,
    }));
    const listed = problems.slice(0, 5).map((p) => `${p.path}: ${p.message}`).join('; ');
    const message = `${method} ${path} (${expected.endpoint}) answered a response that breaks the contract: ${listed}`;
    const error = new ResponseShapeError(message, { ...details, fieldPaths: problems.map((p) => p.path), cause: parsed.error });
    return { ok: false, error, outcome };
  }
  if (expected.okRequired && (parsed.data as { ok?: unknown }).ok !== true) {
    const said = describeErrorBody(text, contentType, true);
    const reason = said.message !== undefined && said.message !== '' ? `: ${excerpt(redactSecret(said.message, apiKey))}` : '';
    const message = `${method} ${path} answered ${status} with {"ok": false}; the service refused it and changed nothing${reason}`;
    return { ok: false, error: new RefusedError(message, { ...details, serviceCode: said.code }), outcome };
  }
  return { ok: true, value: parsed.data };
}
