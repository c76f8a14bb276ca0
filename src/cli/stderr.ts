/**
 * Lines the CLI itself writes to stderr (warnings, the final error), in the one format the logs
 * use there (src/logging/level.ts stderrFormat): JSON lines shaped like pino's off a terminal,
 * human lines on one. So a log collector never meets prose, nor a person a stray JSON line.
 */
import { stderrFormat, type StderrFormat } from '../logging/level.js';
import type { CliIo } from './io.js';

/** pino's numeric levels. */
const LEVEL = { info: 30, warn: 40, error: 50 } as const;
const PREFIX = { info: '', warn: 'warning: ', error: 'error: ' } as const;

/** The stderr format; a bad ROSTERSYNC_LOG_FORMAT (itself reported as an error) falls back to JSON lines. */
export function formatOf(io: CliIo): StderrFormat {
  try {
    return stderrFormat(io.env, io.stderr);
  } catch {
    return 'json';
  }
}

/** One line: `warning: ...` for a person, `{"level":40,"time":...,"msg":"..."}` for a collector. */
export function writeNotice(io: CliIo, level: keyof typeof LEVEL, message: string, fields: Record<string, unknown> = {}): void {
  if (formatOf(io) === 'json') io.stderr.write(`${JSON.stringify({ level: LEVEL[level], time: Date.now(), msg: message, ...fields })}\n`);
  else io.stderr.write(`${PREFIX[level]}${message}\n`);
}
