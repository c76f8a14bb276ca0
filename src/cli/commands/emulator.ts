/**
 * `rostersync emulator`: serves the local emulator of the service until SIGINT/SIGTERM.
 * Prints `listening on http://HOST:PORT` on stdout once it accepts calls (scripts read that line),
 * then the API keys each fixture organization accepts.
 */
import { resolve } from 'node:path';
import type { CommandFactory } from '../command.js';
import { action } from '../command.js';
import { untilStopped } from '../until-stopped.js';
import { EXIT, UserFacingError } from '../../errors/user-facing-error.js';
import { loadFixture, type Fixture } from '../../emulator/fixture.js';
import { RATE_LIMIT_KINDS, type RateLimitKind } from '../../emulator/rate-limits.js';
import { startEmulator } from '../../emulator/server.js';
import { quirksPatchSchema, type QuirksPatch } from '../../emulator/quirks.js';
import { EmulatorFixtureError } from '../../emulator/world.js';

/** Parsed flags; optional in the type because yargs hands handlers an index-signature object. */
interface EmulatorArgs {
  port?: number;
  host?: string;
  fixture?: string;
  rps?: number;
  'rate-limit-kind'?: RateLimitKind;
  'window-ms'?: number;
  'fault-rate'?: number;
  'latency-ms'?: number;
  seed?: number;
  'allow-remote'?: boolean;
  'html-errors'?: boolean;
  quirks?: string;
  [flag: string]: unknown;
}

export const emulatorCommand: CommandFactory = (ctx) => ({
  command: 'emulator',
  describe: 'Run the local emulator of the service (for tests, demos and benchmarks)',
  builder: (yargs) =>
    yargs
      .option('port', { type: 'number', default: 0, describe: 'TCP port; 0 picks a free one' })
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'Interface to bind (loopback only unless --allow-remote)' })
      .option('fixture', { type: 'string', describe: 'Fixture file (YAML or JSON); default: the built-in demo org' })
      .option('rps', { type: 'number', describe: 'Requests per second admitted; over it the emulator answers 429 with Retry-After' })
      .option('rate-limit-kind', {
        choices: RATE_LIMIT_KINDS,
        default: 'token-bucket' as RateLimitKind,
        describe: 'Shape of the --rps limit: token bucket (bursts pass), fixed or sliding window, or hidden (a sliding window whose 429 has no Retry-After)',
      })
      .option('window-ms', { type: 'number', describe: 'Window of the window kinds, in ms (default 1000)' })
      .option('fault-rate', { type: 'number', describe: 'Probability 0..1 that a call fails (500/502/503 or connection reset)' })
      .option('latency-ms', { type: 'number', describe: 'Latency added to every call, in ms' })
      .option('seed', { type: 'number', describe: 'Seed of the fault dice (same seed, same faults)' })
      .option('allow-remote', { type: 'boolean', default: false, describe: 'Allow binding a non-loopback interface' })
      .option('html-errors', { type: 'boolean', default: false, describe: 'Answer an HTML login page on unknown paths and bad keys, as the real service can' })
      .option('quirks', { type: 'string', describe: 'Inconvenient behaviours as JSON, e.g. \'{"okFalse":["*"],"errorShape":"html"}\' (docs/emulator.md, "Quirks")' })
      .example('$0 emulator --port 4010', 'then SERVICE_BASE_URL=http://127.0.0.1:4010 SERVICE_API_KEY=demo-key-0123456789')
      .example('$0 emulator --rps 5 --fault-rate 0.1 --seed 7', 'a busy, flaky service, the same faults on every run'),
  handler: action(ctx, async (args: EmulatorArgs) => {
    const port = args.port ?? 0;
    const host = args.host ?? '127.0.0.1';
    checkNumber('--port', port, { min: 0, max: 65535, integer: true });
    checkNumber('--rps', args.rps, { min: Number.MIN_VALUE });
    checkNumber('--window-ms', args['window-ms'], { min: Number.MIN_VALUE });
    checkNumber('--fault-rate', args['fault-rate'], { min: 0, max: 1 });
    checkNumber('--latency-ms', args['latency-ms'], { min: 0 });
    checkNumber('--seed', args.seed, { integer: true });

    const quirks = args.quirks === undefined ? undefined : parseQuirks(args.quirks);
    let fixture: Fixture | undefined;
    if (args.fixture !== undefined) {
      const path = resolve(ctx.io.cwd, args.fixture);
      try {
        fixture = loadFixture(path);
      } catch (error) {
        const message = (error as NodeJS.ErrnoException).code === 'ENOENT' ? `fixture file ${path} does not exist` : (error as Error).message;
        throw new UserFacingError(message, {
          hint: 'Fix the fixture file (samples/fixture.yaml shows every key), or omit --fixture to use the built-in demo org.',
          cause: error,
        });
      }
    }

    let emulator;
    try {
      emulator = await startEmulator({
        port,
        host,
        allowRemote: args['allow-remote'] ?? false,
        ...(fixture ? { fixture } : {}),
        ...(args.rps !== undefined ? { rps: args.rps } : {}),
        ...(args['rate-limit-kind'] !== undefined ? { rateLimitKind: args['rate-limit-kind'] } : {}),
        ...(args['window-ms'] !== undefined ? { windowMs: args['window-ms'] } : {}),
        ...(args['fault-rate'] !== undefined ? { faultRate: args['fault-rate'] } : {}),
        ...(args['latency-ms'] !== undefined ? { latencyMs: args['latency-ms'] } : {}),
        ...(args.seed !== undefined ? { seed: args.seed } : {}),
        htmlLoginPage: args['html-errors'] ?? false,
        ...(quirks ? { quirks } : {}),
      });
    } catch (error) {
      if (error instanceof EmulatorFixtureError) {
        throw new UserFacingError(error.message, { hint: 'Fix the record in the fixture file: values must match the custom field data_kind and options.', cause: error });
      }
      const code = (error as NodeJS.ErrnoException).code;
      const message = code === 'EADDRINUSE' ? `port ${port} on ${host} is already in use` : (error as Error).message;
      throw new UserFacingError(`cannot start the emulator: ${message}`, {
        hint: code === 'EADDRINUSE' ? 'Pick another --port, or --port 0 for a free one.' : 'Check --host and --port.',
        cause: error,
      });
    }

    ctx.io.stdout.write(`listening on ${emulator.url}\n`);
    // The keys are the fixture's, not secrets: printing them saves a look into the fixture file.
    for (const org of emulator.world.orgs) {
      ctx.io.stdout.write(`organization "${org.name}" accepts X-ApiKey: ${[...org.apiKeys].join(', ')}\n`);
    }
    await untilStopped(ctx.io.signal);
    await emulator.close();
    return EXIT.ok;
  }),
});

function parseQuirks(text: string): QuirksPatch {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UserFacingError(`--quirks must be a JSON object, got ${text}`, { hint: `Example: --quirks '{"optionOrder":"service"}'. Keys: ${Object.keys(quirksPatchSchema.shape).join(', ')}.` });
  }
  const parsed = quirksPatchSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UserFacingError(`--quirks: ${issue.path.join('.') || '(object)'}: ${issue.message}`, { hint: `Keys: ${Object.keys(quirksPatchSchema.shape).join(', ')} (docs/emulator.md, "Quirks").` });
  }
  return parsed.data;
}

function checkNumber(flag: string, value: number | undefined, rule: { min?: number; max?: number; integer?: boolean }): void {
  if (value === undefined) return;
  const ok =
    Number.isFinite(value) &&
    (rule.min === undefined || value >= rule.min) &&
    (rule.max === undefined || value <= rule.max) &&
    (!rule.integer || Number.isInteger(value));
  if (!ok) {
    const range = [rule.integer ? 'an integer' : 'a number', rule.min !== undefined ? `>= ${rule.min === Number.MIN_VALUE ? '0 (exclusive)' : rule.min}` : '', rule.max !== undefined ? `<= ${rule.max}` : '']
      .filter(Boolean)
      .join(' ');
    throw new UserFacingError(`${flag} must be ${range}, got ${String(value)}`);
  }
}
