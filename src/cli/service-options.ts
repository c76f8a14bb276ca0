/**
 * The connection options shared by every command that talks to the service, and the one place a
 * command turns them into a client. The API key has no plain flag on purpose: it comes from
 * `SERVICE_API_KEY` or `--api-key-file` (see `resolveServiceConfig`).
 */
import type { Argv } from 'yargs';
import { createClient, resolveServiceConfig, type ServiceClient, type ServiceConfig } from '../client/index.js';
import { createLogger, type Logger, type LogLevel } from '../logging/logger.js';
import type { CliIo } from './io.js';

/** Flags added by `withServiceOptions`; optional because yargs hands handlers an index-signature object. */
export interface ServiceArgs {
  'base-url'?: string;
  'api-key-file'?: string;
  json?: boolean;
  [flag: string]: unknown;
}

/** Adds `--base-url`, `--api-key-file` and `--json`. */
export function withServiceOptions<T>(yargs: Argv<T>): Argv<T> {
  return yargs
    .option('base-url', { type: 'string', describe: 'Service base URL (default: $SERVICE_BASE_URL); http:// only on loopback' })
    .option('api-key-file', { type: 'string', describe: 'File holding only the API key (default: $SERVICE_API_KEY)' })
    .option('json', { type: 'boolean', default: false, describe: 'Print JSON for machines instead of text' }) as unknown as Argv<T>;
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface ServiceConnection {
  client: ServiceClient;
  logger: Logger;
  config: ServiceConfig;
}

/**
 * Resolves the connection and builds a client whose logs go to stderr (level from
 * `ROSTERSYNC_LOG_LEVEL`, default `warn`), with the key redacted.
 */
export function connectService(args: ServiceArgs, io: CliIo): ServiceConnection {
  const config = resolveServiceConfig({
    env: io.env,
    baseUrlFlag: args['base-url'],
    apiKeyFile: args['api-key-file'],
    cwd: io.cwd,
  });
  const requested = io.env.ROSTERSYNC_LOG_LEVEL?.toLowerCase();
  const level = LOG_LEVELS.find((l) => l === requested) ?? 'warn';
  const logger = createLogger({ level, destination: io.stderr, secrets: [config.apiKey] });
  const client = createClient({ baseUrl: config.baseUrl, apiKey: config.apiKey, logger });
  return { client, logger, config };
}

/** Call options carrying the CLI's stop signal (SIGINT/SIGTERM), when there is one. */
export function callOptions(io: CliIo): { signal?: AbortSignal } {
  return io.signal ? { signal: io.signal } : {};
}
