/**
 * The one way rostersync logs: pino on stderr (stdout is for command output), JSON when stderr is
 * not a terminal (cron, CI, Kubernetes), pretty on a terminal. Personal data rule (design.md,
 * decision 9): logs never carry the API key or an email address. Known secret-bearing keys are
 * redacted by path, and every logged string is scrubbed of the given secrets and of anything that
 * looks like an email, so a stray value in a message or error cannot leak either.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { redactSecrets } from './redact.js';

export type { Logger };

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface CreateLoggerOptions {
  /**
   * Minimum level written.
   * @default 'info'
   */
  level?: LogLevel;
  /**
   * Where log lines go; tests pass a collecting stream.
   * @default process.stderr
   */
  destination?: NodeJS.WritableStream;
  /**
   * Pretty, human-oriented lines instead of JSON.
   * @default true when `destination` is a TTY
   */
  pretty?: boolean;
  /**
   * ANSI colours in pretty lines (the CLI decides by FORCE_COLOR / NO_COLOR, src/cli/color.ts).
   * @default true when `destination` is a TTY
   */
  color?: boolean;
  /** Strings that must never appear in a log line, e.g. the API key. */
  secrets?: readonly (string | undefined)[];
}

/** Keys whose values are always replaced, wherever pino finds them. */
const REDACTED_PATHS = [
  'apiKey',
  'api_key',
  'key',
  'headers["x-apikey"]',
  'headers["X-ApiKey"]',
  'headers["X-APIKEY"]',
  '*.apiKey',
  '*.api_key',
  '*.headers["x-apikey"]',
  '*.headers["X-ApiKey"]',
  'email',
  'emails',
  '*.email',
  '*.emails',
];

/** An email, also URL-encoded (`alice%40example.org`, as in request paths of error messages). */
const EMAIL_PATTERN = /[^\s@"'<>(),;:%/]+(?:@|%40)[^\s@"'<>(),;:/]+\.[^\s@"'<>(),;:/]+/gi;

/** Removes secrets (in any echoed form, see redact.ts) and email addresses from one string. */
export function scrubText(text: string, secrets: readonly string[]): string {
  return redactSecrets(text, secrets).replace(EMAIL_PATTERN, '[email]');
}

function scrubValue(value: unknown, secrets: readonly string[], depth = 0): unknown {
  if (typeof value === 'string') return scrubText(value, secrets);
  if (value === null || typeof value !== 'object') return value;
  // Deeper than anything rostersync logs: dropped rather than let through unscrubbed.
  if (depth > 8) return '[truncated]';
  if (value instanceof Error) {
    return { type: value.name, message: scrubText(value.message, secrets), ...scrubObject({ ...value }, secrets, depth) };
  }
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, secrets, depth + 1));
  return scrubObject(value as Record<string, unknown>, secrets, depth);
}

function scrubObject(value: Record<string, unknown>, secrets: readonly string[], depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = scrubValue(item, secrets, depth + 1);
  return out;
}

export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const destination = options.destination ?? process.stderr;
  const secrets = (options.secrets ?? []).filter((s): s is string => typeof s === 'string' && s.length > 0);
  const isTty = 'isTTY' in destination && destination.isTTY === true;
  const usePretty = options.pretty ?? isTty;
  const stream: DestinationStream = usePretty
    ? pretty({ destination, colorize: options.color ?? isTty, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true })
    : (destination as DestinationStream);
  return pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: {
        log: (object) => scrubObject(object, secrets, 0),
      },
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((arg) => scrubValue(arg, secrets)) as Parameters<typeof method>;
          method.apply(this, scrubbed);
        },
      },
    },
    stream,
  );
}
