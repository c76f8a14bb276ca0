/** Every CLI command, in the order `--help` lists them. */
import type { CommandFactory } from '../command.js';

export const commandFactories: CommandFactory[] = [];
