/**
 * `rostersync plan`, `rostersync apply` and `rostersync sync`: thin wrappers over src/sync.
 * Each prints the summary and where the report is, and exits with the run's code; `sync` with
 * several pipelines prints one line per pipeline and exits with the worst code.
 */
import type { Argv } from 'yargs';
import { renderConsoleSummary } from '../../report/console.js';
import { DEFAULT_DIFF_LIMIT, planHasChanges, renderPlanDiff } from '../../report/plan-diff.js';
import type { RunReport } from '../../report/types.js';
import { applySavedPlan } from '../../sync/apply-saved.js';
import { runSync, type RunOptions, type RunResult } from '../../sync/run-sync.js';
import { expandPipelinePaths, runMany, type ManyRunOptions } from '../../sync/run-many.js';
import { writeCombinedIndex } from '../../report/history.js';
import { renderManySummary } from '../many-summary.js';
import { EXIT, UserFacingError } from '../../errors/user-facing-error.js';
import { action, type CommandContext, type CommandFactory } from '../command.js';
import type { CliIo } from '../io.js';
import { useColor } from '../color.js';
import { writeNotice } from '../stderr.js';
import { progressReporter } from '../progress.js';
import { cliLogger, serviceConfigFrom, withConnectionOptions, type ConnectionArgs } from '../service-options.js';
import { maskReport } from '../../report/mask.js';

/** Parsed flags; optional in the type because yargs hands handlers an index-signature object. */
export interface RunArgs extends ConnectionArgs {
  pipeline?: string;
  plan?: string;
  out?: string;
  refresh?: string;
  'dry-run'?: boolean;
  'allow-deletes'?: number;
  'allow-rejects'?: number;
  'allow-source-drop'?: boolean;
  'allow-empty-source'?: boolean;
  'allow-identity-changes'?: number;
  'create-group'?: boolean;
  [flag: string]: unknown;
  'max-rps'?: number;
  concurrency?: number;
  'max-duration'?: string;
  'report-dir'?: string;
  'state-dir'?: string;
  'fields-file'?: string;
  'fast-path'?: boolean;
  json?: boolean;
  mask?: boolean;
  'diff-limit'?: number;
  'detailed-exitcode'?: boolean;
  'metrics-file'?: string;
}

export function runOptions<T>(y: Argv<T>) {
  return withConnectionOptions(y)
    .option('max-rps', { type: 'number', describe: 'Requests per second (overrides policy.max_rps)' })
    .option('concurrency', { type: 'number', describe: 'Requests in flight (overrides policy.concurrency)' })
    .option('max-duration', { type: 'string', describe: 'Stop starting calls after this long, e.g. 30m, 2h, 90s' })
    .option('report-dir', { type: 'string', describe: 'Write the report here instead of <pipeline dir>/reports/<pipeline>/<run id>' })
    .option('state-dir', { type: 'string', describe: 'State directory (overrides state_dir)' })
    .option('fields-file', { type: 'string', describe: 'Saved custom-fields listing (`rostersync fields --json`) instead of asking the service' })
    .option('fast-path', { type: 'boolean', default: true, describe: 'Take rows whose raw cells the inventory knows as unchanged without mapping them; --no-fast-path maps every row' })
    .option('json', { type: 'boolean', default: false, describe: 'Print the report JSON instead of the summary' })
    .option('metrics-file', { type: 'string', describe: "Write the run's figures here for Prometheus (node_exporter's textfile collector), e.g. /var/lib/node_exporter/rostersync.prom" });
}

function guardOptions<T>(y: Argv<T>) {
  return y
    .option('allow-deletes', { type: 'number', describe: 'Allow up to N deletes above the configured limit' })
    .option('allow-source-drop', { type: 'boolean', describe: 'Allow a source much smaller than at the last successful run' })
    .option('allow-empty-source', { type: 'boolean', describe: 'Allow an empty source to delete (with --allow-deletes)' })
    .option('allow-identity-changes', { type: 'number', describe: 'Allow up to N owned records to become other people (name changed, no email or ORCID kept)' })
    .option('allow-rejects', { type: 'number', describe: 'Write although up to N rows were rejected, over policy.rejects' })
    .option('create-group', { type: 'boolean', describe: 'First run: create the group the pipeline names (never implied, so a lost state cannot create a second group)' });
}

/** Parses `90s`, `30m`, `2h` or plain seconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(text.trim());
  if (!match) {
    throw new UserFacingError(`--max-duration "${text}" is not a duration`, { hint: 'Write it like 90s, 30m or 2h.' });
  }
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Number(match[1]) * unit;
}

export function commonRunOptions(args: RunArgs, io: CliIo): Omit<RunOptions, 'pipelinePath'> {
  const service = serviceConfigFrom(args, io);
  return {
    service,
    env: io.env,
    cwd: io.cwd,
    ...(io.signal ? { signal: io.signal } : {}),
    ...(args['max-rps'] !== undefined ? { maxRps: args['max-rps'] } : {}),
    ...(args.concurrency !== undefined ? { concurrency: args.concurrency } : {}),
    ...(args['max-duration'] !== undefined ? { maxDurationMs: parseDuration(args['max-duration']) } : {}),
    ...(args['report-dir'] !== undefined ? { reportDir: args['report-dir'] } : {}),
    ...(args['state-dir'] !== undefined ? { stateDir: args['state-dir'] } : {}),
    ...(args['fields-file'] !== undefined ? { fieldsFile: args['fields-file'] } : {}),
    ...(args['fast-path'] === false ? { fastPath: false } : {}),
    ...(args['metrics-file'] !== undefined ? { metricsFile: args['metrics-file'] } : {}),
  };
}

function guardRunOptions(args: RunArgs): Partial<RunOptions> {
  return {
    ...(args['allow-deletes'] !== undefined ? { allowDeletes: args['allow-deletes'] } : {}),
    ...(args['allow-source-drop'] ? { allowSourceDrop: true } : {}),
    ...(args['allow-empty-source'] ? { allowEmptySource: true } : {}),
    ...(args['allow-identity-changes'] !== undefined ? { allowIdentityChanges: args['allow-identity-changes'] } : {}),
    ...(args['allow-rejects'] !== undefined ? { allowRejects: args['allow-rejects'] } : {}),
    ...(args['create-group'] ? { createGroup: true } : {}),
  };
}

function refreshOption(value: string | boolean | undefined): RunOptions['refresh'] {
  if (value === undefined || value === false) return false;
  if (value === true || value === '' || value === 'planned') return 'planned';
  if (value === 'all') return 'all';
  throw new UserFacingError(`--refresh=${String(value)} is not a refresh mode`, { hint: 'Use --refresh (planned keys) or --refresh=all (every owned key).' });
}

export function printResult(result: RunResult, args: { json?: boolean; mask?: boolean }, io: CliIo): number {
  // E.g. the report went to a fallback directory: said on stderr whatever the output format.
  for (const warning of result.written.warnings) writeNotice(io, 'warn', warning);
  if (args.json) {
    io.stdout.write(`${JSON.stringify(args.mask ? maskReport(result.report) : result.report, null, 2)}\n`);
    return result.exitCode;
  }
  const color = useColor(io.stdout, io.env);
  io.stdout.write(renderConsoleSummary(args.mask ? maskReport(result.report) : result.report, { color, files: result.written.files }));
  return result.exitCode;
}

/**
 * On a TTY the progress bar tells the story and only warnings are logged; off a TTY (cron, CI)
 * JSON log lines carry the run's milestones. Either way the key is redacted and no email is logged.
 */
export function runLogger(args: RunArgs, io: CliIo, apiKey: string) {
  const tty = (io.stderr as NodeJS.WriteStream).isTTY === true;
  return cliLogger(args, io, { apiKey, fallback: tty ? 'warn' : 'info' });
}

/**
 * `plan`: the field-by-field diff, then the summary. Under `--detailed-exitcode` (drift checks in
 * CI, as Terraform's) a finished plan exits 0 when the service is in step with the roster and 2
 * when it is not: changes planned, or more roster rows rejected than `policy.rejects` tolerates
 * (the plan's own code is then already 2, as sync's would be); failures keep their own codes.
 */
function printPlan(result: RunResult, args: RunArgs, io: CliIo): number {
  const limit = args['diff-limit'] ?? DEFAULT_DIFF_LIMIT;
  if (!Number.isInteger(limit) || limit < 0) {
    throw new UserFacingError(`--diff-limit must be a whole number of records (0 for all), got ${String(limit)}`);
  }
  if (!args.json) io.stdout.write(`${renderPlanDiff(result.report, { color: useColor(io.stdout, io.env), mask: args.mask === true, limit })}\n`);
  const code = printResult(result, args, io);
  return args['detailed-exitcode'] ? detailedExitCode(result.report, code) : code;
}

export function detailedExitCode(report: RunReport, code: number): number {
  if (code !== EXIT.ok && code !== EXIT.partial) return code;
  // Rejects within policy.rejects leave the code 0, as they leave a sync green.
  return planHasChanges(report) || code === EXIT.partial ? EXIT.partial : EXIT.ok;
}

async function run(
  ctx: CommandContext,
  args: RunArgs,
  options: Omit<RunOptions, 'service' | 'env' | 'cwd'>,
  print: (result: RunResult, args: RunArgs, io: CliIo) => number = printResult,
): Promise<number> {
  const base = commonRunOptions(args, ctx.io);
  const progress = progressReporter(ctx.io);
  try {
    const result = await runSync({ ...base, ...options, logger: runLogger(args, ctx.io, base.service.apiKey), onProgress: progress.update });
    progress.done();
    return print(result, args, ctx.io);
  } finally {
    progress.done();
  }
}

export const planCommand: CommandFactory = (ctx) => ({
  command: 'plan <pipeline>',
  describe: 'Show what a sync would do, field by field, without writing; optionally save the plan',
  builder: (y: Argv) =>
    guardOptions(runOptions(y))
      .positional('pipeline', { type: 'string', demandOption: true, describe: 'Pipeline file' })
      .option('out', { type: 'string', describe: 'Save the plan to this file for `rostersync apply`' })
      .option('refresh', { type: 'string', describe: 'Also GET remote records: --refresh (planned keys) or --refresh=all' })
      .option('mask', { type: 'boolean', default: false, describe: 'Mask personal data: every field value and name is (masked) on the console and in the report files' })
      .option('diff-limit', { type: 'number', default: DEFAULT_DIFF_LIMIT, describe: 'Records the diff prints before pointing at the report (0: all)' })
      .option('detailed-exitcode', { type: 'boolean', default: false, describe: 'Exit 0 when nothing would change, 2 when something would (or more rows were rejected than policy.rejects tolerates)' })
      .example('$0 plan pipelines/reviewers.yaml', 'the field-by-field diff of the next sync')
      .example('$0 plan pipelines/reviewers.yaml --mask --detailed-exitcode', 'a drift check for CI: exit 2 when out of step, no personal data printed')
      .example('$0 plan pipelines/reviewers.yaml --out plan.json', 'save the plan for review, then `rostersync apply plan.json`'),
  handler: action(ctx, async (args: RunArgs) =>
    run(
      ctx,
      args,
      {
        pipelinePath: String(args.pipeline),
        dryRun: true,
        refresh: refreshOption(args.refresh),
        ...guardRunOptions(args),
        ...(args.out ? { savePlanTo: args.out } : {}),
        ...(args.mask ? { mask: true } : {}),
      },
      printPlan,
    ),
  ),
});

export const syncCommand: CommandFactory = (ctx) => ({
  command: 'sync <pipeline..>',
  describe: 'Read, map, plan and apply a pipeline (or several at once), then write the reconciliation report',
  builder: (y: Argv) =>
    guardOptions(runOptions(y))
      .positional('pipeline', { type: 'string', array: true, demandOption: true, describe: 'Pipeline file(s), or a directory of them: several run at once, sharing one rate limit' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Stop before writing anything (every guard still runs)' })
      .option('refresh', { type: 'string', describe: 'Also GET remote records and repair drift: --refresh or --refresh=all' })
      .example('$0 sync pipelines/reviewers.yaml --dry-run', 'every lookup, validation and guard; writes only the report')
      .example('$0 sync pipelines/reviewers.yaml --max-duration 2h', 'a nightly run that leaves the rest for the next one')
      .example('SERVICE_API_KEY=demo-key-0123456789 $0 sync pipelines/demo.yaml --base-url http://127.0.0.1:4010', 'against `rostersync emulator --port 4010`')
      .example('$0 sync pipelines/', "every pipeline in the directory at once, sharing the organization's rate limit"),
  handler: action(ctx, async (args: RunArgs) => {
    const named = (Array.isArray(args.pipeline) ? args.pipeline : [args.pipeline]).map(String);
    const paths = expandPipelinePaths(named, ctx.io.cwd);
    const options = { dryRun: args['dry-run'], refresh: refreshOption(args.refresh), ...guardRunOptions(args) };
    if (paths.length === 1 && named.length === 1) return run(ctx, args, { pipelinePath: paths[0]!, ...options });
    return runSeveral(ctx, args, paths, options);
  }),
});

/** `sync a.yaml b.yaml …`: runs them at once (sync/run-many.ts), prints a line per pipeline as each ends, then the summary. */
async function runSeveral(ctx: CommandContext, args: RunArgs, paths: string[], options: Omit<ManyRunOptions, 'service' | 'env' | 'cwd'>): Promise<number> {
  const base = commonRunOptions(args, ctx.io);
  if (base.reportDir !== undefined) {
    throw new UserFacingError('--report-dir names one report directory, and several pipelines were given', {
      hint: 'Drop --report-dir (each pipeline writes under its own report_dir), or sync one pipeline at a time.',
    });
  }
  const result = await runMany(paths, {
    ...base,
    ...options,
    logger: runLogger(args, ctx.io, base.service.apiKey),
    onFinished: (outcome) => {
      if (!args.json) writeNotice(ctx.io, 'info', `finished ${outcome.name ?? outcome.pipelinePath}: exit ${outcome.exitCode}`, { pipeline: outcome.name ?? outcome.pipelinePath, exitCode: outcome.exitCode });
    },
  });
  const roots = result.outcomes.flatMap((o) => (o.historyRoot ? [o.historyRoot] : []));
  const index =
    roots.length > 0
      ? await writeCombinedIndex({ roots }).catch((error: unknown) => {
          // The pipelines' own reports are written; only the page linking them failed.
          writeNotice(ctx.io, 'warn', `cannot write the combined run history: ${(error as Error).message}`);
          return undefined;
        })
      : undefined;
  if (args.json) {
    const body = result.outcomes.map((o) => ({ pipeline: o.name ?? o.pipelinePath, file: o.pipelinePath, exitCode: o.exitCode, ...(o.result ? { report: o.result.report } : { error: o.error }) }));
    ctx.io.stdout.write(`${JSON.stringify({ exitCode: result.exitCode, pipelines: body, ...(index ? { index } : {}) }, null, 2)}\n`);
    return result.exitCode;
  }
  ctx.io.stdout.write(renderManySummary(result, { cwd: ctx.io.cwd, index }));
  return result.exitCode;
}

export const applyCommand: CommandFactory = (ctx) => ({
  command: 'apply <plan>',
  describe: 'Apply a plan saved by `rostersync plan --out`, if nothing it was computed against changed',
  builder: (y: Argv) =>
    runOptions(y)
      .positional('plan', { type: 'string', demandOption: true, describe: 'Saved plan file' })
      .example('$0 plan pipelines/reviewers.yaml --out plan.json && $0 apply plan.json', 'review first, then apply exactly that plan'),
  handler: action(ctx, async (args: RunArgs) => {
    const progress = progressReporter(ctx.io);
    try {
      const base = commonRunOptions(args, ctx.io);
      const result = await applySavedPlan(String(args.plan), { ...base, logger: runLogger(args, ctx.io, base.service.apiKey), onProgress: progress.update });
      progress.done();
      return printResult(result, args, ctx.io);
    } finally {
      progress.done();
    }
  }),
});
