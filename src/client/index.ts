/** Public API of the service client. */
export { createClient } from './client.js';
export { pathSegment } from './endpoints.js';
export type { ClientOptions, CallOptions, ClientStats, ServiceClient } from './client.js';
export { resolveServiceConfig, checkBaseUrl, isLoopback } from './config.js';
export type { ServiceConfig, ResolveServiceConfigInput } from './config.js';
export {
  ServiceError,
  AuthError,
  ForbiddenError,
  NotFoundError,
  InvalidRequestError,
  RateLimitedError,
  ServerError,
  NetworkError,
  TimeoutError,
  RequestAbortedError,
  UnexpectedResponseError,
  ResponseShapeError,
  AmbiguousGroupCreationError,
  ClientInputError,
  RefusedError,
  errorFromStatus,
  redactSecret,
} from './errors.js';
export type { ServiceErrorDetails, StatusErrorInput } from './errors.js';
export {
  DEFAULT_RETRY_POLICY,
  decideRetry,
  isRetryableOutcome,
  provablyNotProcessed,
  backoffDelayMs,
  parseRetryAfter,
} from './retry-policy.js';
export type { RetryPolicy, RetryMode, RetryDecision, RetryDecisionInput, AttemptOutcome } from './retry-policy.js';
export { RateLimiter } from '../rate-limit/rate-limiter.js';
export type { RateLimiterOptions, RateLimiterStats, Clock, Sleep } from '../rate-limit/rate-limiter.js';
export { buildManuscriptForm, detectSourceFileKind, validateManuscriptInput } from './manuscript-form.js';
export type { ManuscriptUploadInput, ManuscriptAuthor, SourceFile, SourceFileKind, CandidateFilters } from './manuscript-form.js';
export * from './schemas.js';
