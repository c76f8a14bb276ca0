/**
 * rostersync's command line. Every command lives in `commands/`; this file only wires them and
 * turns errors into a one-paragraph message and an exit code (never a stack trace, unless
 * ROSTERSYNC_DEBUG=1 asks for one).
 */
import yargs from 'yargs';
import { EXIT, UserFacingError } from '../errors.js';
import type { CommandContext, CommandFactory } from './command.js';
import { processIo, type CliIo } from './io.js';
import { commandFactories } from './commands/index.js';

export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  let exitCode: number = EXIT.ok;
  const ctx: CommandContext = { io, setExitCode: (code) => (exitCode = code) };
  let parser = yargs(argv)
    .scriptName('rostersync')
    .usage('$0 <command> [options]\n\nKeep referee-finder authors groups in step with CSV and Excel rosters.')
    .strict()
    .demandCommand(1, 'Name a command; `rostersync --help` lists them.')
    .recommendCommands()
    .wrap(Math.min(110, process.stdout.columns ?? 100))
    .exitProcess(false)
    .fail((message, error) => {
      throw error ?? new UserFacingError(message, { hint: 'Run the command with --help to see its options.' });
    })
    .help();
  for (const factory of commandFactories as CommandFactory[]) parser = parser.command(factory(ctx));
  try {
    await parser.parseAsync();
    return exitCode;
  } catch (error) {
    return reportError(error, io);
  }
}

/** Prints an error for a person and picks its exit code. */
export function reportError(error: unknown, io: CliIo): number {
  const debug = io.env.ROSTERSYNC_DEBUG === '1';
  if (error instanceof UserFacingError || isExitCoded(error)) {
    const e = error as Error & { hint?: string; exitCode: number };
    io.stderr.write(`error: ${e.message}\n`);
    if (e.hint) io.stderr.write(`hint: ${e.hint}\n`);
    if (debug && e.stack) io.stderr.write(`${e.stack}\n`);
    return e.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(`error: unexpected failure: ${message}\n`);
  io.stderr.write('hint: this is a bug in rostersync; rerun with ROSTERSYNC_DEBUG=1 and report the output.\n');
  if (debug && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
  return EXIT.usage;
}

function isExitCoded(error: unknown): boolean {
  return error instanceof Error && typeof (error as { exitCode?: unknown }).exitCode === 'number';
}
