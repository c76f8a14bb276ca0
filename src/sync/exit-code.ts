/**
 * The exit code of a run that ended in an error, and the one error that says writes happened.
 */
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';
import { fileSystemHint, fileSystemProblem } from '../errors/file-system-problem.js';

/** The exit code an error carries (UserFacingError and its subclasses), else a usage error's. */
export function exitCodeOf(error: unknown): number {
  return error instanceof UserFacingError ? error.exitCode : EXIT.usage;
}

/**
 * An unexpected failure (not an error meant for the operator) once apply began: exit 1 would
 * claim "nothing was written", which may be false, so it says so and exits 7.
 */
export class FailedAfterWritesError extends UserFacingError {
  override name = 'FailedAfterWritesError';

  constructor(cause: unknown) {
    const message = cause instanceof Error ? cause.message : String(cause);
    super(`unexpected failure after writes began: ${message}. Some writes may have reached the service.`, {
      hint: 'The journal and the report record every write that finished; the next run converges. This is a bug in rostersync: rerun with ROSTERSYNC_DEBUG=1 and report the output.',
      exitCode: EXIT.failedAfterWrites,
      cause,
    });
    // ROSTERSYNC_DEBUG prints this stack: let it lead to the bug, not to this wrapper.
    if (cause instanceof Error && cause.stack) this.stack = `${this.name}: ${this.message}\ncaused by ${cause.stack}`;
  }
}

/** The error to raise for a failure during apply: operator-facing errors as they are, others wrapped. */
export function failureDuringApply(error: unknown): UserFacingError {
  if (error instanceof UserFacingError) return error;
  // A full disk or a read-only state mid-run is not a bug: say which, and what to do.
  const problem = fileSystemProblem(error);
  if (problem) {
    return new UserFacingError(`the run stopped after writes began: ${problem.words} (${problem.code}). Some writes may have reached the service.`, {
      hint: `${fileSystemHint(problem, '--state-dir / --report-dir')} The journal records every write that finished; the next run converges.`,
      exitCode: EXIT.failedAfterWrites,
      cause: error,
    });
  }
  return new FailedAfterWritesError(error);
}
