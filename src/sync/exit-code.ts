import { EXIT } from '../errors.js';

/** The exit code an error carries (UserFacingError and its subclasses), else a usage error's. */
export function exitCodeOf(error: unknown): number {
  const code = (error as { exitCode?: unknown }).exitCode;
  return typeof code === 'number' ? code : EXIT.usage;
}
