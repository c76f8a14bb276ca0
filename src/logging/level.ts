/**
 * The one reading of a log level: `--log-level`, else `ROSTERSYNC_LOG_LEVEL`, else the command's
 * default. A value that is not a level is a usage error naming the levels, not a silent default.
 */
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';
import type { LogLevel } from './logger.js';

export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function resolveLogLevel(input: { flag?: string | undefined; env: NodeJS.ProcessEnv; fallback: LogLevel }): LogLevel {
  const [text, source] = input.flag !== undefined ? [input.flag, '--log-level'] : [input.env.ROSTERSYNC_LOG_LEVEL, 'ROSTERSYNC_LOG_LEVEL'];
  if (text === undefined || text.trim() === '') return input.fallback;
  const level = LOG_LEVELS.find((l) => l === text.trim().toLowerCase());
  if (level) return level;
  throw new UserFacingError(`${source} "${text}" is not a log level.`, { hint: `Use one of ${LOG_LEVELS.join(', ')}.`, exitCode: EXIT.usage });
}

export type StderrFormat = 'json' | 'human';

/**
 * How stderr is written, logs and the final error alike, so one stream never mixes JSON lines
 * and prose: `ROSTERSYNC_LOG_FORMAT` (`json` or `human`), else JSON lines off a terminal (cron,
 * CI, a file: machines collect them) and human lines on one.
 */
export function stderrFormat(env: NodeJS.ProcessEnv, stderr: NodeJS.WritableStream): StderrFormat {
  const text = env.ROSTERSYNC_LOG_FORMAT?.trim().toLowerCase();
  if (text === 'json' || text === 'human') return text;
  if (text !== undefined && text !== '') {
    throw new UserFacingError(`ROSTERSYNC_LOG_FORMAT "${env.ROSTERSYNC_LOG_FORMAT}" is not a format.`, { hint: 'Use json or human (unset: JSON lines off a terminal, human lines on one).', exitCode: EXIT.usage });
  }
  return (stderr as NodeJS.WriteStream).isTTY === true ? 'human' : 'json';
}
