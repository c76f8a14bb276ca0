/**
 * Errors in the operator's own files (pipeline and mapping files): the file is wrong, nothing
 * was read or written, exit code 1. Each problem carries the dot-path inside the file, in the
 * manner of changesets' config parser, so the operator can go straight to the offending key.
 */
import { EXIT, UserFacingError } from './user-facing-error.js';

export interface ConfigProblem {
  /** Dot-path inside the file, e.g. `fields.emails.split`; empty for the whole document. */
  path: string;
  message: string;
}

export interface ConfigErrorOptions {
  hint?: string;
  cause?: unknown;
}

/** A pipeline or mapping file that cannot be used as written. */
export class ConfigError extends UserFacingError {
  override name = 'ConfigError';
  readonly file: string;
  readonly problems: ConfigProblem[];

  constructor(file: string, problems: ConfigProblem[], options: ConfigErrorOptions = {}) {
    super(formatProblems(file, problems), { exitCode: EXIT.usage, ...options });
    this.file = file;
    this.problems = problems;
  }
}

function formatProblems(file: string, problems: ConfigProblem[]): string {
  if (problems.length === 1) {
    const only = problems[0]!;
    return `${file}: ${only.path ? `${only.path}: ` : ''}${only.message}`;
  }
  const lines = problems.map((p) => `  - ${p.path ? `${p.path}: ` : ''}${p.message}`);
  return `${file}: ${problems.length} problems:\n${lines.join('\n')}`;
}
