/**
 * The one reading of a log level: `--log-level`, else `ROSTERSYNC_LOG_LEVEL`, else the command's
 * default. A value that is not a level is a usage error naming the levels, not a silent default.
 */
import { EXIT, UserFacingError } from '../errors.js';
import type { LogLevel } from './logger.js';

export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function resolveLogLevel(input: { flag?: string | undefined; env: NodeJS.ProcessEnv; fallback: LogLevel }): LogLevel {
  const [text, source] = input.flag !== undefined ? [input.flag, '--log-level'] : [input.env.ROSTERSYNC_LOG_LEVEL, 'ROSTERSYNC_LOG_LEVEL'];
  if (text === undefined || text.trim() === '') return input.fallback;
  const level = LOG_LEVELS.find((l) => l === text.trim().toLowerCase());
  if (level) return level;
  throw new UserFacingError(`${source} "${text}" is not a log level.`, { hint: `Use one of ${LOG_LEVELS.join(', ')}.`, exitCode: EXIT.usage });
}
