/**
 * What a route handler answers, and the emulator's error body.
 *
 * Error body shape: the spec (§ Errors, items 3 and 4) shows neither the error body nor the status
 * codes per failure. The emulator's choice — documented in docs/emulator.md — is
 * `{"ok": false, "error": {"code": "<snake_case>", "message": "<for a person>"}}`, with the status
 * codes listed there. Clients must not depend on the body shape beyond "non-200 means failure".
 */

/** A handler's answer. `body` is sent as JSON unless `raw` is given. */
export interface Reply {
  status: number;
  body?: unknown;
  /** Sent as-is instead of `body`, with `contentType` (e.g. the HTML login page). */
  raw?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

export type ErrorCode =
  | 'bad_request'
  | 'invalid_json'
  | 'validation_error'
  | 'unknown_field'
  | 'unknown_option'
  | 'unknown_team'
  | 'unauthorized'
  | 'plan_feature_missing'
  | 'not_found'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'rate_limited'
  | 'internal_error'
  | 'bad_gateway'
  | 'service_unavailable'
  // Open for codes added by other route modules (manuscripts, journals, marking).
  | (string & {});

export interface ErrorBody {
  ok: false;
  error: { code: ErrorCode; message: string };
}

export function json(body: unknown, status = 200): Reply {
  return { status, body };
}

export function errorReply(status: number, code: ErrorCode, message: string, headers?: Record<string, string>): Reply {
  const body: ErrorBody = { ok: false, error: { code, message } };
  return headers ? { status, body, headers } : { status, body };
}

/**
 * Thrown by handlers (and helpers such as `ctx.json()`) to answer an error without threading a
 * Reply back through every helper. The server turns it into `errorReply(status, code, message)`.
 */
export class EmulatorHttpError extends Error {
  override name = 'EmulatorHttpError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }

  toReply(): Reply {
    return errorReply(this.status, this.code, this.message);
  }
}

export const badRequest = (code: ErrorCode, message: string): EmulatorHttpError => new EmulatorHttpError(400, code, message);
export const notFound = (message: string): EmulatorHttpError => new EmulatorHttpError(404, 'not_found', message);
export const forbiddenFeature = (feature: string): EmulatorHttpError =>
  new EmulatorHttpError(403, 'plan_feature_missing', `the organization's plan does not include the ${feature} feature`);

/** The page the real service can answer instead of JSON on routing or authentication mistakes. */
export const HTML_LOGIN_PAGE = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Log in | service</title></head>
<body><form method="post" action="/accounts/login/"><h1>Log in</h1>
<input name="username" placeholder="Email"><input name="password" type="password">
<button type="submit">Log in</button></form></body></html>
`;
