import { EXIT, UserFacingError } from '../errors/user-facing-error.js';

/**
 * A roster file that cannot be read at all: missing, empty, not the format it claims, a sheet or
 * header row that does not exist, unusable header names. Row-level problems are not errors of this
 * kind; they travel as `{ kind: 'error' }` items so the rest of the file still reads.
 * The message names the file (and sheet, row, column where relevant); the hint says how to fix it.
 */
export class SourceError extends UserFacingError {
  override name = 'SourceError';
  /** The roster file, as resolved on disk. */
  readonly file: string;

  constructor(file: string, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, { ...options, exitCode: EXIT.usage });
    this.file = file;
  }
}
