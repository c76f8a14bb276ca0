/**
 * `rostersync review` and `rostersync apply-reviewed`: the review flow for rosters kept in git
 * (src/review/, docs/review-and-metrics.md), as the GitHub Action's `review` and `apply-reviewed`
 * modes run them. Thin: the job's context and flags in, the library call, a line per pipeline out.
 */
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Argv } from 'yargs';
import { expandPipelinePaths } from '../../sync/run-many.js';
import { DEFAULT_REVIEW_RECORDS } from '../../review/comment.js';
import { gitHubContext, type GitHubContext } from '../../review/context.js';
import { gitHubApi } from '../../review/github.js';
import { applyReviewed, reviewPullRequest, type ReviewResult } from '../../review/review.js';
import { UserFacingError } from '../../errors/user-facing-error.js';
import { action, type CommandFactory } from '../command.js';
import type { CliIo } from '../io.js';
import { commonRunOptions, runLogger, runOptions, type RunArgs } from './sync.js';

interface ReviewArgs extends RunArgs {
  'out-dir'?: string;
  'work-dir'?: string;
  records?: number;
  'github-token-env'?: string;
}

/** Every GitHub call of one command ends within this (each request also has its own timeout). */
const GITHUB_DEADLINE_MS = 10 * 60_000;

function reviewOptions<T>(y: Argv<T>) {
  return runOptions(y)
    .positional('pipeline', { type: 'string', array: true, demandOption: true, describe: 'Pipeline file(s), or a directory of them' })
    .option('github-token-env', { type: 'string', default: 'GITHUB_TOKEN', describe: "Environment variable holding the job's token" });
}

async function context(args: ReviewArgs, io: CliIo, needPullRequest: boolean) {
  const github = gitHubContext(io.env, { tokenEnv: args['github-token-env'] ?? 'GITHUB_TOKEN', needPullRequest });
  const signal = AbortSignal.any([AbortSignal.timeout(GITHUB_DEADLINE_MS), ...(io.signal ? [io.signal] : [])]);
  const api = await gitHubApi({ repository: github.repository, token: github.token, apiUrl: github.apiUrl, signal });
  const base = commonRunOptions(args, io);
  if (base.reportDir !== undefined) throw new UserFacingError('--report-dir is not taken here: each pipeline has its own report folder', { hint: 'Drop --report-dir.' });
  const run = { ...base, logger: runLogger(args, io, base.service.apiKey) };
  const pipelinePaths = expandPipelinePaths((Array.isArray(args.pipeline) ? args.pipeline : [args.pipeline]).map(String), io.cwd);
  return { github: github as GitHubContext, api, run, pipelinePaths };
}

function print(result: ReviewResult, args: ReviewArgs, io: CliIo, none: string): number {
  if (args.json) io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else if (result.pipelines.length === 0) io.stdout.write(`${none}\n`);
  else for (const p of result.pipelines) io.stdout.write(`${p.pipeline}: ${p.summary}\n`);
  return result.exitCode;
}

export const reviewCommand: CommandFactory = (ctx) => ({
  command: 'review <pipeline..>',
  describe: "Plan each pipeline a pull request changes and post the masked plan as the pull request's comment",
  builder: (y: Argv) =>
    reviewOptions(y)
      .option('out-dir', { type: 'string', default: 'rostersync-review', describe: 'Folder of the signed plans and masked reports, uploaded as the review artifact' })
      .option('records', { type: 'number', default: DEFAULT_REVIEW_RECORDS, describe: 'Records the comment shows' })
      .example('$0 review pipelines/', 'in a pull_request job (the Action\'s review mode)'),
  handler: action(ctx, async (args: ReviewArgs) => {
    const records = args.records ?? DEFAULT_REVIEW_RECORDS;
    if (!Number.isInteger(records) || records < 1 || records > 500) throw new UserFacingError(`--records must be a whole number from 1 to 500, got ${String(records)}`);
    const { github, api, run, pipelinePaths } = await context(args, ctx.io, true);
    const result = await reviewPullRequest({ pipelinePaths, outDir: args['out-dir'] ?? 'rostersync-review', records, github, api, run });
    return print(result, args, ctx.io, 'no pipeline reads a file this pull request changes');
  }),
});

export const applyReviewedCommand: CommandFactory = (ctx) => ({
  command: 'apply-reviewed <pipeline..>',
  describe: 'On the push a merge makes: apply the plans reviewed in the merged pull request, if they still hold',
  builder: (y: Argv) =>
    reviewOptions(y)
      .option('work-dir', { type: 'string', describe: 'Where the downloaded plans are kept (default: a folder under the temporary directory)' })
      .example('$0 apply-reviewed pipelines/', "in a push job on the default branch (the Action's apply-reviewed mode)"),
  handler: action(ctx, async (args: ReviewArgs) => {
    const { github, api, run, pipelinePaths } = await context(args, ctx.io, false);
    const workDir = args['work-dir'] ?? join(ctx.io.env.RUNNER_TEMP ?? tmpdir(), `rostersync-reviewed-${github.sha}`);
    const result = await applyReviewed({ pipelinePaths, workDir, github, api, run });
    return print(result, args, ctx.io, 'no reviewed plan to apply: this commit merged no pull request that changes a pipeline');
  }),
});
