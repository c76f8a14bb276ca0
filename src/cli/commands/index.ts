/** Every CLI command, in the order `--help` lists them. */
import type { CommandFactory } from '../command.js';
import { emulatorCommand } from './emulator.js';

export const commandFactories: CommandFactory[] = [emulatorCommand];
