/**
 * How a CLI command is declared. The CLI stays thin: a command parses flags, calls the library
 * and returns an exit code; errors are turned into messages and exit codes by `main`.
 */
import type { Argv, CommandModule } from 'yargs';
import type { CliIo } from './io.js';

export interface CommandContext {
  io: CliIo;
  /** Records the exit code of the command that ran. */
  setExitCode(code: number): void;
}

export type CommandFactory = (ctx: CommandContext) => CommandModule<object, any>;

/** Wraps an async command body so its returned exit code reaches `main`. */
export function action<A>(ctx: CommandContext, body: (args: A) => Promise<number>): (args: A) => Promise<void> {
  return async (args) => {
    ctx.setExitCode(await body(args));
  };
}

export type { Argv };
