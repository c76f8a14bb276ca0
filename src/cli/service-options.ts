/**
 * The connection options shared by every command that talks to the service (declared here once),
 * and the one place a command resolves them into a service config, a logger and a client. The API
 * key has no plain flag on purpose: it comes from `SERVICE_API_KEY` or `--api-key-file` (see
 * `resolveServiceConfig`).
 */
import type { Argv } from 'yargs';
import { createClient, resolveServiceConfig, type ServiceClient, type ServiceConfig } from '../client/index.js';
import { resolveLogLevel, stderrFormat } from '../logging/level.js';
import { createLogger, type Logger, type LogLevel } from '../logging/logger.js';
import { useColor } from './color.js';
import type { CliIo } from './io.js';

/** Connection flags (`--log-level` is global); optional because yargs hands handlers an index-signature object. */
export interface ConnectionArgs {
  'base-url'?: string;
  'api-key-file'?: string;
  'log-level'?: string;
  [flag: string]: unknown;
}

/** Flags added by `withServiceOptions`. */
export interface ServiceArgs extends ConnectionArgs {
  json?: boolean;
}

/** Adds `--base-url` and `--api-key-file` (`--log-level` is global: cli/main.ts). */
export function withConnectionOptions<T>(yargs: Argv<T>): Argv<T> {
  return yargs
    .option('base-url', { type: 'string', describe: 'Service base URL (default: $SERVICE_BASE_URL); http:// only on loopback' })
    .option('api-key-file', { type: 'string', describe: 'File holding only the API key (default: $SERVICE_API_KEY)' }) as unknown as Argv<T>;
}

/** Adds the connection options and `--json`. */
export function withServiceOptions<T>(yargs: Argv<T>): Argv<T> {
  return withConnectionOptions(yargs).option('json', { type: 'boolean', default: false, describe: 'Print JSON for machines instead of text' }) as unknown as Argv<T>;
}

/** The service's base URL and key from the flags and the environment. */
export function serviceConfigFrom(args: ConnectionArgs, io: CliIo): ServiceConfig {
  return resolveServiceConfig({ env: io.env, baseUrlFlag: args['base-url'], apiKeyFile: args['api-key-file'], cwd: io.cwd });
}

/** A logger on stderr at the level asked for (`--log-level`, `ROSTERSYNC_LOG_LEVEL`, else `fallback`), the key redacted. */
export function cliLogger(args: ConnectionArgs, io: CliIo, input: { apiKey: string; fallback: LogLevel }): Logger {
  const level = resolveLogLevel({ flag: args['log-level'], env: io.env, fallback: input.fallback });
  return createLogger({ level, destination: io.stderr, pretty: stderrFormat(io.env, io.stderr) === 'human', color: useColor(io.stderr, io.env), secrets: [input.apiKey] });
}

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
  const config = serviceConfigFrom(args, io);
  const logger = cliLogger(args, io, { apiKey: config.apiKey, fallback: 'warn' });
  const client = createClient({ baseUrl: config.baseUrl, apiKey: config.apiKey, logger });
  return { client, logger, config };
}

/** Call options carrying the CLI's stop signal (SIGINT/SIGTERM), when there is one. */
export function callOptions(io: CliIo): { signal?: AbortSignal } {
  return io.signal ? { signal: io.signal } : {};
}
