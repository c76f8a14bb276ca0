/**
 * rostersync's command line. Every command lives in `commands/` and is imported only when it is
 * the one being run (see commands/index.ts); this file wires them, owns the global flags
 * (-q, -v, --log-level, completion, help) and turns errors into a one-paragraph message and an exit
 * code (never a stack trace, unless ROSTERSYNC_DEBUG=1 asks for one). Under --json the error is a
 * JSON object on stderr, so scripts that read JSON never have to parse prose; off a terminal it is
 * a JSON line like the logs there (see reportError).
 */
import yargs, { type Argv } from 'yargs';
import { closestMatch } from '../errors/did-you-mean.js';
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';
import { fileSystemHint, fileSystemProblem } from '../errors/file-system-problem.js';
import { LOG_LEVELS } from '../logging/level.js';
import type { LogLevel } from '../logging/logger.js';
import type { CommandContext } from './command.js';
import { processIo, type CliIo } from './io.js';
import { formatOf, writeNotice } from './stderr.js';
import { commandName, lazyCommands } from './commands/index.js';
import { maskText } from '../report/mask.js';

/** -v, -vv, -vvv. */
const VERBOSE_LEVELS: readonly LogLevel[] = ['info', 'debug', 'trace'];
/** Global options that take a value: their value is not the command name. */
const GLOBAL_VALUE_OPTIONS = new Set(['--log-level']);
/** What yargs' completion script passes first. */
const COMPLETION_REQUEST = '--get-yargs-completions';

/** Every exit code, as the README's "Exit codes" table lists them (test/first-hour checks they agree). */
export const EXIT_CODES_LINE =
  'Exit codes: 0 done, 1 usage/input error, 2 some rows or records failed, 3 a guard refused, 4 auth/permission, 5 service unavailable, 6 state database unreachable, 7 unexpected failure after writes began, 130 stopped.';

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
    return reportError(error, io, { json, mask: wantsMask(argv) });
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
    .epilogue(EXIT_CODES_LINE)
    .fail((message, error) => {
      // An unknown flag can swallow the next argument as its value, so yargs would complain about
      // a missing argument instead; name the flag first, whatever yargs noticed.
      if (invoked !== undefined && invoked !== 'completion' && !lazyCommands.some((entry) => commandName(entry) === invoked)) {
        throw new UserFacingError(`unknown command "${invoked}"`, {
          hint: message?.startsWith('Did you mean') ? message : 'Run `rostersync --help` to list the commands.',
        });
      }
      const { unknown, known } = unknownFlags(argv, parser);
      if (unknown.length > 0) {
        const suggestions = unknown.map((flag) => {
          const closest = flag.startsWith('--') ? closestMatch(flag.slice(2), known) : undefined;
          return closest ? `; did you mean --${closest}?` : '';
        });
        throw new UserFacingError(unknown.map((flag, i) => `unknown option ${flag}${suggestions[i]}`).join('; '), {
          hint: `Run \`rostersync ${invoked ? `${invoked} ` : ''}--help\` to see the options it takes.`,
        });
      }
      if (invoked !== undefined && /^Not enough non-option arguments/.test(message ?? '')) throw missingArgument(positionals(argv));
      // yargs' own refusals (a `.check`, `.conflicts`, a missing option) are usage errors; any other
      // error came from our code while parsing and keeps its own shape.
      // (A `.check` that returns a sentence hands it over as the "error", a plain string.)
      if (error instanceof Error && error.name !== 'YError') throw error;
      throw new UserFacingError(message ?? (error instanceof Error ? error.message : String(error ?? 'the command line is not valid')), { hint: 'Run the command with --help to see its options.' });
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

/**
 * The command named on the line: the first argument that is neither an option nor its value.
 * The completion script asks `rostersync --get-yargs-completions rostersync <words...>`: the
 * command is then among the words after the program's name, and it must be loaded so that its
 * own options are offered.
 */
export function invokedCommand(argv: readonly string[]): string | undefined {
  const start = argv[0] === COMPLETION_REQUEST ? 2 : 0;
  for (let i = start; i < argv.length; i++) {
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

/** What a command with no argument at all needs, said in words, with an example. */
const ARGUMENT_WORDS: Record<string, { what: string; example: string }> = {
  pipeline: { what: 'a pipeline file (the roster, its mapping and the target group)', example: 'pipelines/reviewers.yaml' },
  plan: { what: 'a plan file saved by `rostersync plan <pipeline> --out plan.json`', example: 'plan.json' },
  origin_id: { what: "the origin_id that `rostersync manuscript upload` printed", example: '<origin_id>' },
};

/** `rostersync sync` alone: name what is missing and show the line that works. */
function missingArgument(words: readonly string[]): UserFacingError {
  // The command and its subcommand; later words are the user's data.
  const line = `rostersync ${words.slice(0, 2).join(' ')}`;
  const entry = lazyCommands.find((candidate) => commandName(candidate) === words[0]);
  const argument = /<([a-z_]+)(?:\.\.)?>/.exec(entry?.command ?? '')?.[1];
  const help = `\`${line} --help\``;
  if (words.length > 1 || argument === undefined) return new UserFacingError(`${line} is missing an argument`, { hint: `${help} shows what it takes.` });
  const needed = ARGUMENT_WORDS[argument];
  if (needed === undefined) return new UserFacingError(`${line} needs a subcommand`, { hint: `${help} lists them.` });
  return new UserFacingError(`${line} needs ${needed.what}`, { hint: `For example \`${line} ${needed.example}\`; ${help} lists its options.` });
}

/** The words of the line that are not options (the command, its subcommand and arguments). */
function positionals(argv: readonly string[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (GLOBAL_VALUE_OPTIONS.has(arg)) i += 1;
    else if (!arg.startsWith('-')) words.push(arg);
  }
  return words;
}

/** Options on the line that the command being parsed does not declare (before any `--`), and the long options it does. */
function unknownFlags(argv: readonly string[], parser: Argv): { unknown: string[]; known: string[] } {
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
  return { unknown: [...new Set(unknown)], known: [...known].filter((name) => name.length > 1 && !/[A-Z]/.test(name)) };
}

/** `--json` anywhere on the line (also when parsing failed before it was read). */
function wantsJson(argv: readonly string[]): boolean {
  return hasFlag(argv, 'json');
}

/** `--mask` (plan, revert): the error that ends the command is masked as its report is. */
function wantsMask(argv: readonly string[]): boolean {
  return hasFlag(argv, 'mask');
}

function hasFlag(argv: readonly string[], name: string): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((arg) => arg === `--${name}` || arg === `--${name}=true`);
}

interface ErrorShape {
  message: string;
  hint: string | undefined;
  exitCode: number;
  unexpected: boolean;
}

/**
 * Prints an error and picks its exit code. stderr has one format per mode (src/logging/level.ts
 * stderrFormat), so a log collector or a person never gets a JSON line and prose for one failure:
 * - under --json: one JSON object, `{"error":{"message","hint","exitCode"}}`;
 * - JSON lines (off a terminal: cron, CI, a pipe or a file): a line shaped like the logs' own
 *   (pino: `level` 50, `time`, `msg`, plus `hint` and `exitCode`);
 * - human lines (on a terminal): `error: ...` and `hint: ...`, beside the logs' human lines.
 */
export function reportError(error: unknown, io: CliIo, options: { json?: boolean; mask?: boolean } = {}): number {
  const debug = io.env.ROSTERSYNC_DEBUG === '1';
  const shape = maskedShape(describeError(error), options.mask === true);
  const stack = debug && error instanceof Error && error.stack ? error.stack : undefined;
  const extra = { ...(shape.hint ? { hint: shape.hint } : {}), exitCode: shape.exitCode, ...(shape.unexpected ? { unexpected: true } : {}) };
  if (options.json) {
    io.stderr.write(`${JSON.stringify({ error: { message: shape.message, ...extra } })}\n`);
  } else if (formatOf(io) === 'json') {
    writeNotice(io, 'error', `${shape.unexpected ? 'unexpected failure: ' : ''}${shape.message}`, { ...extra, ...(stack ? { stack } : {}) });
    return shape.exitCode;
  } else {
    io.stderr.write(`error: ${shape.unexpected ? 'unexpected failure: ' : ''}${shape.message}\n`);
    if (shape.hint) io.stderr.write(`hint: ${shape.hint}\n`);
  }
  if (stack) io.stderr.write(`${stack}\n`);
  return shape.exitCode;
}

/** Under --mask, the roster values an error quotes (report/mask.ts maskText); the message is otherwise as built. */
function maskedShape(shape: ErrorShape, mask: boolean): ErrorShape {
  if (!mask) return shape;
  return { ...shape, message: maskText(shape.message), hint: shape.hint === undefined ? undefined : maskText(shape.hint) };
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
