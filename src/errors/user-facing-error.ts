/**
 * Exit codes of the CLI (README.md, "Exit codes") and the base of every error a person
 * is expected to read. Such errors are printed as message + hint, never with a stack trace.
 */
export const EXIT = {
  /** Done; everything applied, or nothing to do. */
  ok: 0,
  /** Usage, configuration or input error: nothing was written. */
  usage: 1,
  /** The run finished but some records failed, listed in the report. */
  partial: 2,
  /** A safety guard refused the run: nothing was written. */
  guard: 3,
  /** Authentication, permission or plan-feature refusal from the service. */
  auth: 4,
  /** The service was unreachable or kept failing past the retry budget. */
  unavailable: 5,
  /** The state database (PostgreSQL) went away mid-run: no write was sent after that; rerun converges. */
  stateUnavailable: 6,
  /**
   * An unexpected failure (a bug) stopped a run after it began writing: writes may have reached
   * the service. The journal and the report record each one; the next run converges.
   */
  failedAfterWrites: 7,
  /** Stopped by SIGINT/SIGTERM after finishing in-flight calls. */
  interrupted: 130,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export interface UserFacingErrorOptions {
  /** What to do about it. */
  hint?: string;
  exitCode?: ExitCode;
  cause?: unknown;
}

/** An error whose message is meant for the operator: it says what failed, where, and what to do. */
export class UserFacingError extends Error {
  override name = 'UserFacingError';
  readonly hint: string | undefined;
  readonly exitCode: ExitCode;

  constructor(message: string, options: UserFacingErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.hint = options.hint;
    this.exitCode = options.exitCode ?? EXIT.usage;
  }
}
