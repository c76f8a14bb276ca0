/** Every CLI command, in the order `--help` lists them. */
import type { CommandFactory } from '../command.js';
import { authorCommand } from './author.js';
import { demoCommand } from './demo.js';
import { emulatorCommand } from './emulator.js';
import { fieldsCommand } from './fields.js';
import { groupCommand } from './group.js';
import { journalsCommand } from './journals.js';
import { manuscriptCommand } from './manuscript.js';
import { stateCommand, unlockCommand } from './state.js';
import { applyCommand, planCommand, syncCommand } from './sync.js';
import { validateCommand } from './validate.js';
import { webhookCommand } from './webhook.js';

export const commandFactories: CommandFactory[] = [
  syncCommand,
  planCommand,
  applyCommand,
  validateCommand,
  stateCommand,
  unlockCommand,
  fieldsCommand,
  groupCommand,
  authorCommand,
  manuscriptCommand,
  journalsCommand,
  webhookCommand,
  emulatorCommand,
  demoCommand,
];
