/**
 * rostersync's command line. Every command lives in `commands/` and is imported only when it is
 * the one being run (see commands/index.ts); this file wires them, owns the global flags
 * (-q, -v, --log-level, completion, help) and turns errors into a one-paragraph message and an exit
 * code (never a stack trace, unless ROSTERSYNC_DEBUG=1 asks for one). Under --json the error is a
 * JSON object on stderr, so scripts that read JSON never have to parse prose.
 */
import yargs, { type Argv } from 'yargs';
import { EXIT, UserFacingError } from '../errors.js';
import { fileSystemHint, fileSystemProblem } from '../file-system-problem.js';
import { LOG_LEVELS } from '../logging/level.js';
import type { LogLevel } from '../logging/logger.js';
import type { CommandContext } from './command.js';
import { processIo, type CliIo } from './io.js';
import { commandName, lazyCommands } from './commands/index.js';

/** -v, -vv, -vvv. */
const VERBOSE_LEVELS: readonly LogLevel[] = ['info', 'debug', 'trace'];
/** Global options that take a value: their value is not the command name. */
const GLOBAL_VALUE_OPTIONS = new Set(['--log-level']);

const USAGE = '$0 <command> [options]\n\nKeep referee-finder authors groups in step with CSV and Excel rosters.';

export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  let exitCode: number = EXIT.ok;
  const ctx: CommandContext = { io, setExitCode: (code) => (exitCode = code) };
  const json = wantsJson(argv);
  try {
    const parser = await buildParser(argv, ctx);
    if (argv.length === 0) {
      // No arguments: the overview of commands, as `--help` prints it.
      io.stdout.write(`${await parser.getHelp()}\n`);
      return EXIT.ok;
    }
    await parser.parseAsync();
    return exitCode;
  } catch (error) {
    return reportError(error, io, { json });
  }
}

async function buildParser(argv: string[], ctx: CommandContext): Promise<Argv> {
  const invoked = invokedCommand(argv);
  let parser: Argv = yargs(argv)
    .scriptName('rostersync')
    .usage(USAGE)
    .strict()
    .demandCommand(1, 'Name a command; `rostersync --help` lists them.')
    .recommendCommands()
    .wrap(Math.min(110, process.stdout.columns ?? 100))
    .exitProcess(false)
    .option('quiet', { alias: 'q', type: 'boolean', global: true, describe: 'Log errors only (same as --log-level error)' })
    .option('verbose', { alias: 'v', type: 'count', global: true, describe: 'Log more: -v info, -vv debug, -vvv trace' })
    .option('log-level', { type: 'string', choices: LOG_LEVELS, global: true, describe: 'Log level on stderr (default: $ROSTERSYNC_LOG_LEVEL, else the command\'s own)' })
    .middleware((args) => {
      // -q and -v are spellings of --log-level: fold them into it, which every command's logger
      // reads (src/logging/level.ts resolveLogLevel, the one reading of a level).
      const level = logLevelFromFlags(args);
      if (level !== undefined) args['log-level'] = args.logLevel = level;
    })
    .example('$0 validate pipelines/reviewers.yaml', 'read and map the roster, explain every rejected row')
    .example('$0 plan pipelines/reviewers.yaml', 'show what a sync would change, field by field')
    .example('$0 sync pipelines/reviewers.yaml --dry-run', 'run every check and write the report, but nothing else')
    .example('$0 emulator --port 4010', 'run the local emulator of the service')
    .epilogue('Exit codes: 0 done, 1 usage/input error, 2 some rows or records failed, 3 a guard refused, 4 auth/permission, 5 service unavailable, 130 stopped.')
    .fail((message, error) => {
      // An unknown flag can swallow the next argument as its value, so yargs would complain about
      // a missing argument instead; name the flag first, whatever yargs noticed.
      if (invoked !== undefined && invoked !== 'completion' && !lazyCommands.some((entry) => commandName(entry) === invoked)) {
        throw new UserFacingError(`unknown command "${invoked}"`, {
          hint: message?.startsWith('Did you mean') ? message : 'Run `rostersync --help` to list the commands.',
        });
      }
      const unknown = unknownFlags(argv, parser);
      if (unknown.length > 0) {
        throw new UserFacingError(`unknown option${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`, {
          hint: `Run \`rostersync ${invoked ? `${invoked} ` : ''}--help\` to see the options it takes.`,
        });
      }
      throw error ?? new UserFacingError(message, { hint: 'Run the command with --help to see its options.' });
    })
    .help()
    .alias('help', 'h');
  for (const entry of lazyCommands) {
    if (commandName(entry) === invoked) {
      const factory = await entry.load();
      parser = parser.command(factory(ctx));
    } else {
      // Listed in the help and known to suggestions and completion, not loaded.
      parser = parser.command(entry.command, entry.describe, {}, () => {});
    }
  }
  // After the commands, so it comes last in the list.
  return parser.completion('completion', 'Print a shell completion script (bash, zsh): rostersync completion >> ~/.bashrc');
}

/** The command named on the line: the first argument that is neither an option nor its value. */
export function invokedCommand(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return undefined;
    if (GLOBAL_VALUE_OPTIONS.has(arg)) {
      i += 1;
      continue;
    }
    if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/** -q, -v and --log-level, checked against each other: the level they ask for, if any. */
export function logLevelFromFlags(args: { quiet?: unknown; verbose?: unknown; 'log-level'?: unknown }): LogLevel | undefined {
  const verbose = typeof args.verbose === 'number' ? args.verbose : 0;
  const given = [args.quiet === true ? '-q/--quiet' : '', verbose > 0 ? '-v/--verbose' : '', args['log-level'] !== undefined ? '--log-level' : ''].filter(Boolean);
  if (given.length > 1) {
    throw new UserFacingError(`${given.join(' and ')} contradict each other`, { hint: 'Give one of -q, -v (-vv, -vvv) or --log-level LEVEL.' });
  }
  if (args.quiet === true) return 'error';
  if (verbose > 0) return VERBOSE_LEVELS[Math.min(verbose, VERBOSE_LEVELS.length) - 1];
  return undefined;
}

/** Options on the line that the command being parsed does not declare (before any `--`). */
function unknownFlags(argv: readonly string[], parser: Argv): string[] {
  const options = (parser as unknown as { getOptions(): { key: Record<string, unknown>; alias: Record<string, string[]> } }).getOptions();
  const known = new Set<string>();
  for (const key of [...Object.keys(options.key), ...Object.values(options.alias).flat(), 'help', 'h', 'version']) {
    known.add(key);
    known.add(key.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()));
  }
  const unknown: string[] = [];
  for (const arg of argv) {
    if (arg === '--') break;
    if (arg.startsWith('--')) {
      const name = arg.slice(2).split('=')[0]!;
      if (!known.has(name) && !(name.startsWith('no-') && known.has(name.slice(3)))) unknown.push(`--${name}`);
    } else if (/^-[^\d-]/.test(arg)) {
      for (const letter of arg.slice(1).split('=')[0]!) if (!known.has(letter)) unknown.push(`-${letter}`);
    }
  }
  return [...new Set(unknown)];
}

/** `--json` anywhere on the line (also when parsing failed before it was read). */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((arg) => arg === '--json' || arg === '--json=true');
}

interface ErrorShape {
  message: string;
  hint: string | undefined;
  exitCode: number;
  unexpected: boolean;
}

/** Prints an error for a person (or, under --json, as one JSON object) and picks its exit code. */
export function reportError(error: unknown, io: CliIo, options: { json?: boolean } = {}): number {
  const debug = io.env.ROSTERSYNC_DEBUG === '1';
  const shape = describeError(error);
  if (options.json) {
    const body = { error: { message: shape.message, ...(shape.hint ? { hint: shape.hint } : {}), exitCode: shape.exitCode, ...(shape.unexpected ? { unexpected: true } : {}) } };
    io.stderr.write(`${JSON.stringify(body)}\n`);
  } else {
    io.stderr.write(`error: ${shape.unexpected ? 'unexpected failure: ' : ''}${shape.message}\n`);
    if (shape.hint) io.stderr.write(`hint: ${shape.hint}\n`);
  }
  if (debug && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
  return shape.exitCode;
}

function describeError(error: unknown): ErrorShape {
  if (error instanceof UserFacingError) return { message: error.message, hint: error.hint, exitCode: error.exitCode, unexpected: false };
  // A full disk or a read-only mount is not a bug (errors once writes began are named by the run).
  const problem = fileSystemProblem(error);
  if (problem) {
    return { message: `${problem.words} (${problem.code}): ${error instanceof Error ? error.message : String(error)}`, hint: fileSystemHint(problem, '--state-dir / --report-dir'), exitCode: EXIT.usage, unexpected: false };
  }
  return {
    message: error instanceof Error ? error.message : String(error),
    hint: 'this is a bug in rostersync; rerun with ROSTERSYNC_DEBUG=1 and report the output.',
    exitCode: EXIT.usage,
    unexpected: true,
  };
}
