/**
 * Every CLI command, in the order `--help` lists them, loaded lazily: only the module of the
 * command being run is imported, so `rostersync --help` or `rostersync fields` never load exceljs,
 * the emulator or the HTML report (start-up budget in bench/startup.ts).
 *
 * `command` and `describe` are repeated here so the command list can be shown without importing
 * any command module; test/cli/lazy-commands.test.ts checks they match the modules' own.
 */
import type { CommandFactory } from '../command.js';

export interface LazyCommand {
  /** The yargs command string, as the module declares it. */
  command: string;
  describe: string;
  /** Imports the module and returns its factory. */
  load(): Promise<CommandFactory>;
}

export const lazyCommands: readonly LazyCommand[] = [
  {
    command: 'sync <pipeline..>',
    describe: 'Read, map, plan and apply a pipeline (or several at once), then write the reconciliation report',
    load: async () => (await import('./sync.js')).syncCommand,
  },
  {
    command: 'plan <pipeline>',
    describe: 'Show what a sync would do, field by field, without writing; optionally save the plan',
    load: async () => (await import('./sync.js')).planCommand,
  },
  {
    command: 'apply <plan>',
    describe: 'Apply a plan saved by `rostersync plan --out`, if nothing it was computed against changed',
    load: async () => (await import('./sync.js')).applyCommand,
  },
  {
    command: 'review <pipeline..>',
    describe: "Plan each pipeline a pull request changes and post the masked plan as the pull request's comment",
    load: async () => (await import('./review.js')).reviewCommand,
  },
  {
    command: 'apply-reviewed <pipeline..>',
    describe: 'On the push a merge makes: apply the plans reviewed in the merged pull request, if they still hold',
    load: async () => (await import('./review.js')).applyReviewedCommand,
  },
  {
    command: 'revert <pipeline> <run-id>',
    describe: "Undo a run's writes: show the plan that undoes them, write it with --yes",
    load: async () => (await import('./revert.js')).revertCommand,
  },
  {
    command: 'validate <pipeline>',
    describe: 'Read and map a roster, and explain every rejected row (writes nothing to the service)',
    load: async () => (await import('./validate.js')).validateCommand,
  },
  {
    command: 'init <roster>',
    describe: 'Propose a pipeline and a mapping for a roster, from its columns and the custom fields',
    load: async () => (await import('./init.js')).initCommand,
  },
  {
    command: 'state <command>',
    describe: "Inspect or repair a pipeline's inventory (never writes to the service)",
    load: async () => (await import('./state.js')).stateCommand,
  },
  {
    command: 'unlock <pipeline>',
    describe: 'Clear the lock of a pipeline whose run died (check that no run is still going first)',
    load: async () => (await import('./state.js')).unlockCommand,
  },
  {
    command: 'fields',
    describe: 'List the custom fields of the organization (names, kinds, api_ids, options)',
    load: async () => (await import('./fields.js')).fieldsCommand,
  },
  {
    command: 'group <command>',
    describe: 'Manage authors groups',
    load: async () => (await import('./group.js')).groupCommand,
  },
  {
    command: 'author <command>',
    describe: 'Read or write one author-from-group record',
    load: async () => (await import('./author.js')).authorCommand,
  },
  {
    command: 'manuscript <action>',
    describe: 'Upload a manuscript and list its referee candidates',
    load: async () => (await import('./manuscript.js')).manuscriptCommand,
  },
  {
    command: 'journals <origin_id>',
    describe: 'Recommend journals for a manuscript uploaded earlier',
    load: async () => (await import('./journals.js')).journalsCommand,
  },
  {
    command: 'webhook <action>',
    describe: 'Receive the referee-marking webhook and list the stored selections',
    load: async () => (await import('./webhook.js')).webhookCommand,
  },
  {
    command: 'emulator',
    describe: 'Run the local emulator of the service (for tests, demos and benchmarks)',
    load: async () => (await import('./emulator.js')).emulatorCommand,
  },
  {
    command: 'demo',
    describe: 'Sync the sample roster into an in-process emulator and print the report (what `npm start` runs)',
    load: async () => (await import('./demo.js')).demoCommand,
  },
];

/** The name a command is invoked by: the first word of its command string. */
export function commandName(entry: Pick<LazyCommand, 'command'>): string {
  return entry.command.split(' ')[0]!;
}
