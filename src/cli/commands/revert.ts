/**
 * `rostersync revert <pipeline> <run-id>`: a thin wrapper over src/sync/revert.ts. Prints the
 * plan diff of the writes that undo the run, then the summary; writes only with `--yes`.
 */
import type { Argv } from 'yargs';
import { DEFAULT_DIFF_LIMIT, renderPlanDiff } from '../../report/plan-diff.js';
import { runRevert } from '../../sync/revert.js';
import { action, type CommandFactory } from '../command.js';
import { useColor } from '../color.js';
import { progressReporter } from '../progress.js';
import { writeNotice } from '../stderr.js';
import { commonRunOptions, printResult, runLogger, runOptions, type RunArgs } from './sync.js';

interface RevertArgs extends RunArgs {
  'run-id'?: string;
  yes?: boolean;
  'force-record'?: string[];
  'skip-record'?: string[];
}

export const revertCommand: CommandFactory = (ctx) => ({
  command: 'revert <pipeline> <run-id>',
  describe: "Undo a run's writes: show the plan that undoes them, write it with --yes",
  builder: (y: Argv) =>
    runOptions(y)
      .positional('pipeline', { type: 'string', demandOption: true, describe: 'Pipeline file' })
      .positional('run-id', { type: 'string', demandOption: true, describe: 'The run to undo (its report folder name), or `last`: the latest run that wrote' })
      .option('yes', { type: 'boolean', default: false, describe: 'Write the revert (without it: the plan diff only)' })
      .option('out', { type: 'string', describe: 'Save the revert plan for `rostersync apply`' })
      .option('force-record', { type: 'string', array: true, describe: 'Undo this record even though it changed since the run, or with last-applied values the run could not vouch for (repeatable)' })
      .option('skip-record', { type: 'string', array: true, describe: 'Leave this record as it is (repeatable)' })
      .option('allow-deletes', { type: 'number', describe: 'Allow up to N deletes above the configured limit' })
      .option('mask', { type: 'boolean', default: false, describe: 'Mask personal data on the console and in the report files' })
      .option('diff-limit', { type: 'number', default: DEFAULT_DIFF_LIMIT, describe: 'Records the diff prints before pointing at the report (0: all)' })
      .example('$0 revert pipelines/reviewers.yaml 2026-11-25T21-03-12Z-4f2a', 'the plan that undoes that run')
      .example('$0 revert pipelines/reviewers.yaml 2026-11-25T21-03-12Z-4f2a --yes', 'undo it'),
  handler: action(ctx, async (args: RevertArgs) => {
    const base = commonRunOptions(args, ctx.io);
    const progress = progressReporter(ctx.io);
    try {
      const result = await runRevert({
        ...base,
        pipelinePath: String(args.pipeline),
        revertRunId: String(args['run-id']),
        yes: args.yes === true,
        forceRecords: (args['force-record'] ?? []).map(String),
        skipRecords: (args['skip-record'] ?? []).map(String),
        ...(args['allow-deletes'] !== undefined ? { allowDeletes: args['allow-deletes'] } : {}),
        ...(args.out ? { savePlanTo: args.out } : {}),
        ...(args.mask ? { mask: true } : {}),
        logger: runLogger(args, ctx.io, base.service.apiKey),
        onProgress: progress.update,
      });
      progress.done();
      if (!args.json) ctx.io.stdout.write(`${renderPlanDiff(result.report, { color: useColor(ctx.io.stdout, ctx.io.env), mask: args.mask === true, limit: args['diff-limit'] ?? DEFAULT_DIFF_LIMIT })}\n`);
      const code = printResult(result, args, ctx.io);
      if (!args.yes && !args.json && result.report.outcome === 'dry_run') writeNotice(ctx.io, 'info', `nothing was written: run again with --yes to undo run ${String(args['run-id'])}${args.out ? `, or \`rostersync apply ${args.out}\`` : ''}.`);
      return code;
    } finally {
      progress.done();
    }
  }),
});
