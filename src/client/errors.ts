/**
 * Errors of the service client. One base class, `ServiceError`, with a typed subclass per kind of
 * failure (in the manner of stripe-node's `Error.ts`), and one factory, `errorFromStatus`, that maps an
 * HTTP status to its class. Every error carries method, path, status and a short body excerpt, an
 * exit code from `EXIT` and a hint, so the CLI prints it as a clean message. The API key is never part
 * of any of them: callers scrub excerpts with `redactSecret` before building an error.
 */
import { EXIT, UserFacingError, type ExitCode } from '../errors/user-facing-error.js';
import { redactSecrets } from '../logging/redact.js';

export interface ServiceErrorDetails {
  /** HTTP method, e.g. `POST`. */
  method: string;
  /** Request path (URL-encoded, without the base URL and without the query string). */
  path: string;
  /** HTTP status; undefined when no answer arrived (network failure, timeout). */
  status?: number | undefined;
  /** First characters of the response body, with the API key scrubbed. */
  bodyExcerpt?: string | undefined;
  /** Content type of the answer, when there was one. */
  contentType?: string | undefined;
  /** Code from the error body (`{"ok": false, "error": {"code", "message"}}`, the emulator's shape). */
  serviceCode?: string | undefined;
  hint?: string | undefined;
  exitCode?: ExitCode | undefined;
  cause?: unknown;
}

/** Base of every failure of a service call. */
export class ServiceError extends UserFacingError {
  override name = 'ServiceError';
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  readonly bodyExcerpt: string | undefined;
  readonly contentType: string | undefined;
  readonly serviceCode: string | undefined;
  /** Attempts made, the first included, when the client's retry loop gave up (apply journals it). */
  attempts: number | undefined;

  constructor(message: string, details: ServiceErrorDetails) {
    super(message, {
      hint: details.hint,
      exitCode: details.exitCode ?? EXIT.unavailable,
      cause: details.cause,
    });
    this.method = details.method;
    this.path = details.path;
    this.status = details.status;
    this.bodyExcerpt = details.bodyExcerpt;
    this.contentType = details.contentType;
    this.serviceCode = details.serviceCode;
  }
}

/** 401: the API key is missing or wrong (design.md, "Facts about the real service"). */
export class AuthError extends ServiceError {
  override name = 'AuthError';
  constructor(message: string, details: ServiceErrorDetails) {
    super(message, withDefaults(details, EXIT.auth, 'Check the API key: set SERVICE_API_KEY or pass --api-key-file with the key of your organization.'));
  }
}

/** 403: the key is valid but the organization's plan lacks the feature (docs/service-contract.md, Endpoints). */
export class ForbiddenError extends ServiceError {
  override name = 'ForbiddenError';
  constructor(message: string, details: ServiceErrorDetails) {
    super(message, withDefaults(details, EXIT.auth, "The organization's plan or this key does not allow the operation; ask an admin to enable the plan feature."));
  }
}

/** 404: the group, record or manuscript does not exist (or the base URL is wrong). */
export class NotFoundError extends ServiceError {
  override name = 'NotFoundError';
  constructor(message: string, details: ServiceErrorDetails) {
    super(message, withDefaults(details, EXIT.usage, 'Check the group id / client id / origin id, and that --base-url points at the service.'));
  }
}

/** 400 or 422: the service refused the request body or parameters. */
export class InvalidRequestError extends ServiceError {
  override name = 'InvalidRequestError';
  constructor(message: string, details: ServiceErrorDetails) {
    super(message, withDefaults(details, EXIT.usage, 'Fix the request data named in the message (field names, custom field keys, value types) and retry.'));
  }
}

/** 429: over the service's rate limit, after the retry budget was spent. */
export class RateLimitedError extends ServiceError {
  override name = 'RateLimitedError';
  /** Delay the service asked for (`Retry-After`), when it sent one. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, details: ServiceErrorDetails & { retryAfterMs?: number | undefined }) {
    super(message, withDefaults(details, EXIT.unavailable, 'The service kept answering 429; lower --max-rps or run again later.'));
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** 5xx (and 408) answers, after the retry budget was spent. */
export class ServerError extends ServiceError {
  override name = 'ServerError';
  constructor(message: string, details: ServiceErrorDetails) {
    super(message, withDefaults(details, EXIT.unavailable, 'The service kept failing; run again later. Rerunning is safe for record writes.'));
  }
}

/** No answer: connection refused, reset, DNS failure. */
export class NetworkError extends ServiceError {
  override name = 'NetworkError';
  /** The system or undici error code (`ECONNREFUSED`, `ECONNRESET`, `UND_ERR_SOCKET`, ...). */
  readonly code: string | undefined;
  constructor(message: string, details: ServiceErrorDetails & { code?: string | undefined }) {
    super(message, withDefaults(details, EXIT.unavailable, 'Check --base-url / SERVICE_BASE_URL and the network; the service could not be reached.'));
    this.code = details.code;
  }
}

/** No answer within the per-request timeout. */
export class TimeoutError extends ServiceError {
  override name = 'TimeoutError';
  readonly timeoutMs: number;
  constructor(message: string, details: ServiceErrorDetails & { timeoutMs: number }) {
    super(message, withDefaults(details, EXIT.unavailable, 'The service did not answer in time; run again later or raise the request timeout.'));
    this.timeoutMs = details.timeoutMs;
  }
}

/** The caller's AbortSignal stopped the request (e.g. SIGINT). */
export class RequestAbortedError extends ServiceError {
  override name = 'RequestAbortedError';
  constructor(message: string, details: ServiceErrorDetails) {
    super(message, withDefaults(details, EXIT.interrupted, undefined));
  }
}

/**
 * An answer that is not the JSON the contract promises: an HTML login page, a redirect, a wrong
 * content type. Usually the base URL points at the web UI rather than the API.
 */
export class UnexpectedResponseError extends ServiceError {
  override name = 'UnexpectedResponseError';
  constructor(message: string, details: ServiceErrorDetails) {
    super(message, withDefaults(details, EXIT.usage, 'Check that --base-url / SERVICE_BASE_URL is the API base URL (not the web UI) and that the API key is valid.'));
  }
}

/** A JSON answer whose shape breaks the contract: a required field is missing or mistyped. */
export class ResponseShapeError extends ServiceError {
  override name = 'ResponseShapeError';
  /** Dot-paths of the offending fields, e.g. `author.last_articles.0.year`. */
  readonly fieldPaths: string[];
  constructor(message: string, details: ServiceErrorDetails & { fieldPaths: string[] }) {
    super(message, withDefaults(details, EXIT.unavailable, 'The service answered a shape rostersync does not know; check --base-url, or report it with the message above.'));
    this.fieldPaths = details.fieldPaths;
  }
}

/**
 * Group creation is not idempotent (design.md, decision 3): after an ambiguous failure (timeout after
 * sending, connection reset, 5xx) the group may exist, and retrying could create a second one.
 */
export class AmbiguousGroupCreationError extends ServiceError {
  override name = 'AmbiguousGroupCreationError';
  /** The group name that was being created. */
  readonly groupName: string;
  constructor(details: ServiceErrorDetails & { groupName: string }) {
    const reason = details.cause instanceof Error ? details.cause.message : 'no clear answer';
    super(
      `creating authors group "${details.groupName}" failed ambiguously (${reason}); a group may have been created`,
      withDefaults(
        details,
        EXIT.unavailable,
        'Check in the service UI whether the group exists. If it does, use its id instead of creating another; ' +
          'if not, run the command again.',
      ),
    );
    this.groupName = details.groupName;
  }
}

/**
 * The service answered 200 with `{"ok": false}`: it refused the operation without an error status
 * (docs/service-contract.md, the contract promises `{ok: true}` on success). Nothing was done; the caller must treat it as
 * a failure, never as a write that took effect.
 */
export class RefusedError extends ServiceError {
  override name = 'RefusedError';
  constructor(message: string, details: ServiceErrorDetails) {
    super(message, withDefaults(details, EXIT.partial, 'The service refused the operation and changed nothing; check the record in the service UI, then run again.'));
  }
}

/** A request the client refuses before sending it (invalid body, unsupported file). Nothing was sent. */
export class ClientInputError extends UserFacingError {
  override name = 'ClientInputError';
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, { exitCode: EXIT.usage, ...options });
  }
}

/** Fills in a subclass's exit code and hint unless the caller gave its own. */
function withDefaults(details: ServiceErrorDetails, exitCode: ExitCode, hint: string | undefined): ServiceErrorDetails {
  return { ...details, exitCode: details.exitCode ?? exitCode, hint: details.hint ?? hint };
}

const STATUS_TEXT: Record<number, string> = {
  301: 'Moved Permanently',
  302: 'Found',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export interface StatusErrorInput extends ServiceErrorDetails {
  status: number;
  /** Message from the error body, when the body named one. */
  serviceMessage?: string | undefined;
  /** `Location` of a redirect, credentials removed. */
  location?: string | undefined;
  retryAfterMs?: number | undefined;
}

/**
 * Maps an HTTP status to its error class, falling back to the base `ServiceError` for statuses the
 * contract does not describe (as stripe-node's `generateV1Error` does).
 */
export function errorFromStatus(input: StatusErrorInput): ServiceError {
  const { status, method, path, serviceMessage } = input;
  const statusText = STATUS_TEXT[status] ?? '';
  const detail = serviceMessage ?? (input.bodyExcerpt ? `body: ${input.bodyExcerpt}` : 'empty body');
  const head = `${method} ${path} answered ${status}${statusText ? ` ${statusText}` : ''}`;
  if (status >= 300 && status < 400) {
    // The client never follows redirects: a write re-sent elsewhere could land twice, and the key
    // would travel to wherever the Location points.
    const where = input.location ? `redirecting to ${input.location}` : 'a redirect without a Location';
    const slashed = input.location !== undefined && isSlashedVariant(path, input.location);
    return new UnexpectedResponseError(`${head}, ${where}${serviceMessage !== undefined ? `: ${serviceMessage}` : ''}`, {
      ...input,
      hint: slashed
        ? 'The service wants the path with a trailing slash; a proxy in front of it is probably rewriting paths. Check --base-url / SERVICE_BASE_URL (scheme, host and path prefix exactly as the service documents them).'
        : 'rostersync does not follow redirects. Set --base-url / SERVICE_BASE_URL to the address the service redirects to, if you trust it.',
    });
  }
  const message = `${head}: ${detail}`;
  if (status === 400 || status === 422) return new InvalidRequestError(message, input);
  if (status === 401) return new AuthError(message, input);
  if (status === 403) return new ForbiddenError(message, input);
  if (status === 404) return new NotFoundError(message, input);
  if (status === 429) return new RateLimitedError(message, input);
  if (status === 408 || status >= 500) return new ServerError(message, input);
  return new ServiceError(message, withDefaults(input, EXIT.usage, undefined));
}

/** True when `location` is `path` (or a URL ending in it) with one more `/` somewhere, e.g. at the end. */
function isSlashedVariant(path: string, location: string): boolean {
  let target = location;
  try {
    target = new URL(location, 'http://placeholder').pathname;
  } catch {
    return false;
  }
  const norm = (p: string): string => p.replace(/\/+/g, '/').replace(/\/$/, '');
  return target !== path && !target.endsWith(path) && norm(target).endsWith(norm(path));
}

/**
 * Replaces every occurrence of the secret in `text`, also URL-encoded or case-changed (see
 * `logging/redact.ts`); used on anything that may reach a message or log.
 */
export function redactSecret(text: string, secret: string | undefined): string {
  return redactSecrets(text, [secret]);
}
