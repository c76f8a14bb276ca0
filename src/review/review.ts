/**
 * The review flow for rosters kept in git (docs/review-and-metrics.md), as Atlantis does it for
 * Terraform:
 *
 * - `review` (on a pull request): plans each pipeline whose files the pull request changes (a dry
 *   run: the plan is saved, signed with the state's secret, and the report masked), puts the plans
 *   in a folder the workflow uploads as the artifact `rostersync-review-<head sha>`, and posts one
 *   comment per pipeline, updated in place on every push.
 * - `apply-reviewed` (on the push a merge makes): finds the pull request merged as this commit,
 *   downloads the artifact of its head commit, and applies each saved plan through
 *   `rostersync apply`'s checks (signature, pipeline, mapping, roster, inventory, service, group,
 *   every action planned again): a plan that no longer holds is refused, and the comment says why.
 *
 * Everything that leaves the job (comments) is built from masked reports (review/comment.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, extname, join, relative, resolve, sep } from 'node:path';
import { loadPipeline, type ResolvedPipeline } from '../config/load.js';
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';
import { maskReport } from '../report/mask.js';
import { applySavedPlan } from '../sync/apply-saved.js';
import type { RunOptions, RunResult } from '../sync/options.js';
import { runSync } from '../sync/run-sync.js';
import { readReviewArtifact, type ReviewArtifact } from './artifact.js';
import { appliedVerdict, isAppliedAt, isCommentOf, planFailedVerdict, refusedVerdict, reviewComment, verdictComment, type ReviewLinks } from './comment.js';
import { reviewArtifactName, type GitHubContext } from './context.js';
import type { GitHubApi } from './github.js';
import type { ReviewManifest } from './manifest.js';

export type BaseRunOptions = Omit<RunOptions, 'pipelinePath'>;

export interface PipelineVerdict {
  pipeline: string;
  exitCode: number;
  /** What the comment says, in words. */
  summary: string;
}

export interface ReviewResult {
  exitCode: number;
  pipelines: PipelineVerdict[];
}

/** A pipeline file of the change that cannot be read (its YAML, its mapping): said in its comment. */
interface BrokenPipeline {
  name: string;
  file: string;
  error: UserFacingError;
}

/**
 * The pipelines that read a file the pull request changes (the pipeline file, its mapping, its
 * roster, an overlay), and the changed pipeline files that cannot be read. A pipeline the change
 * does not touch is not read further, broken or not.
 */
export async function affectedPipelines(paths: readonly string[], changed: readonly string[], workspace: string): Promise<{ affected: ResolvedPipeline[]; broken: BrokenPipeline[] }> {
  const touched = new Set(changed.map((file) => resolve(workspace, file)));
  const affected: ResolvedPipeline[] = [];
  const broken: BrokenPipeline[] = [];
  for (const path of paths) {
    const file = resolve(workspace, path);
    try {
      const pipeline = loadPipeline(file);
      if (filesOf(pipeline).some((f) => touched.has(f))) affected.push(pipeline);
    } catch (error) {
      if (!(error instanceof UserFacingError)) throw error;
      if (touched.has(file)) broken.push({ name: basename(file, extname(file)), file: repoPath(file, workspace), error });
    }
  }
  return { affected, broken };
}

function filesOf(pipeline: ResolvedPipeline): string[] {
  return [pipeline.file, pipeline.mappingFile, pipeline.source.file, ...pipeline.source.overlays.map((o) => resolve(pipeline.dir, o.file))];
}

/** A path as the repository names it (forward slashes, from the workspace root). */
function repoPath(path: string, workspace: string): string {
  return relative(workspace, path).split(sep).join('/');
}

export async function reviewPullRequest(input: {
  pipelinePaths: string[];
  outDir: string;
  records: number;
  github: GitHubContext;
  api: GitHubApi;
  run: BaseRunOptions;
}): Promise<ReviewResult> {
  const { github, api, run } = input;
  const pull = github.pullRequest!;
  const workspace = run.cwd ?? process.cwd();
  const { affected, broken } = await affectedPipelines(input.pipelinePaths, await api.pullFiles(pull.number), workspace);
  const outDir = resolve(workspace, input.outDir);
  await mkdir(outDir, { recursive: true, mode: 0o700 });
  const links: ReviewLinks = { runUrl: runUrl(github), artifactName: reviewArtifactName(pull.headSha), headSha: pull.headSha };
  const existing = affected.length + broken.length > 0 ? await api.comments(pull.number) : [];
  const manifest: ReviewManifest = { kind: 'rostersync-review', headSha: pull.headSha, pullRequest: pull.number, pipelines: [] };
  const verdicts: PipelineVerdict[] = [];
  const cannotPlan = async (name: string, file: string, error: UserFacingError) => {
    await upsertComment(api, pull.number, name, verdictComment({ pipeline: name, previous: undefined, verdict: planFailedVerdict(error, pull.headSha, links.runUrl) }), existing);
    manifest.pipelines.push({ name, file, plan: null, exitCode: error.exitCode });
    verdicts.push({ pipeline: name, exitCode: error.exitCode, summary: `cannot be planned: ${error.message}` });
  };
  for (const { name, file, error } of broken) await cannotPlan(name, file, error);
  for (const pipeline of affected) {
    const planFile = join(pipeline.name, 'plan.json');
    const file = repoPath(pipeline.file, workspace);
    let result: RunResult;
    try {
      await mkdir(join(outDir, pipeline.name), { recursive: true, mode: 0o700 });
      result = await runSync({ ...run, pipelinePath: pipeline.file, dryRun: true, mask: true, savePlanTo: join(outDir, planFile), reportDir: join(outDir, pipeline.name, 'report') });
    } catch (error) {
      if (!(error instanceof UserFacingError)) throw error;
      await cannotPlan(pipeline.name, file, error);
      continue;
    }
    const { exitCode } = result;
    await upsertComment(api, pull.number, pipeline.name, reviewComment({ pipeline: pipeline.name, pipelineFile: file, report: maskReport(result.report), exitCode, records: input.records, links }), existing);
    manifest.pipelines.push({ name: pipeline.name, file, plan: result.report.outcome === 'refused' ? null : planFile, exitCode });
    verdicts.push({ pipeline: pipeline.name, exitCode, summary: exitCode === EXIT.ok ? 'planned' : `planned with exit code ${exitCode}` });
  }
  await writeFile(join(outDir, 'review.json'), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  return { exitCode: worst(verdicts), pipelines: verdicts };
}

export async function applyReviewed(input: { pipelinePaths: string[]; workDir: string; github: GitHubContext; api: GitHubApi; run: BaseRunOptions }): Promise<ReviewResult> {
  const { github, api, run } = input;
  const workspace = run.cwd ?? process.cwd();
  const merged = (await api.pullsOfCommit(github.sha)).find((p) => p.merged && p.mergeCommitSha === github.sha);
  // A push that no pull request merged (a direct push) has nothing reviewed to apply.
  if (!merged) return { exitCode: EXIT.ok, pipelines: [] };
  const { affected, broken } = await affectedPipelines(input.pipelinePaths, await api.pullFiles(merged.number), workspace);
  if (affected.length + broken.length === 0) return { exitCode: EXIT.ok, pipelines: [] };
  const existing = await api.comments(merged.number);
  const url = runUrl(github);
  const refuse = async (pipeline: { name: string }, reason: string, exitCode: number): Promise<PipelineVerdict> => {
    const previous = existing.find((c) => isCommentOf(c.body, pipeline.name))?.body;
    await upsertComment(api, merged.number, pipeline.name, verdictComment({ pipeline: pipeline.name, previous, verdict: refusedVerdict(reason, github.sha, url) }), existing);
    return { pipeline: pipeline.name, exitCode, summary: `not applied: ${reason}` };
  };
  const verdicts: PipelineVerdict[] = [];
  for (const { name, error } of broken) verdicts.push(await refuse({ name }, error.message, error.exitCode));

  const artifact = await api.findArtifact(reviewArtifactName(merged.headSha));
  let plans: ReviewArtifact | undefined;
  let unusable: UserFacingError | undefined;
  try {
    plans = artifact ? await readReviewArtifact(await api.downloadArtifact(artifact), resolve(workspace, input.workDir), merged.headSha) : undefined;
  } catch (error) {
    // A download GitHub refused fails the job (its hint names the permission); an artifact that is not a review's is said in each comment.
    if (!(error instanceof UserFacingError) || (error.exitCode !== EXIT.usage)) throw error;
    unusable = error;
  }
  for (const pipeline of affected) {
    if (existing.some((c) => isCommentOf(c.body, pipeline.name) && isAppliedAt(c.body, github.sha))) {
      verdicts.push({ pipeline: pipeline.name, exitCode: EXIT.ok, summary: 'already applied at this commit (a re-run of the job)' });
      continue;
    }
    if (unusable) {
      verdicts.push(await refuse(pipeline, unusable.message, unusable.exitCode));
      continue;
    }
    const entry = plans?.manifest.pipelines.find((p) => p.name === pipeline.name);
    if (!plans || !entry) {
      verdicts.push(await refuse(pipeline, `no plan was reviewed for the last commit of pull request #${merged.number} (${merged.headSha.slice(0, 12)}): the review job did not run or did not finish for it.`, EXIT.usage));
      continue;
    }
    if (entry.plan === null) {
      verdicts.push(await refuse(pipeline, 'the reviewed plan was refused by a guard or could not be made, so there is nothing approved to apply.', EXIT.guard));
      continue;
    }
    let result: RunResult;
    try {
      result = await applySavedPlan(plans.planPath(entry.plan), run);
    } catch (error) {
      if (!(error instanceof UserFacingError)) throw error;
      verdicts.push(await refuse(pipeline, error.message, error.exitCode));
      continue;
    }
    const previous = existing.find((c) => isCommentOf(c.body, pipeline.name))?.body;
    await upsertComment(api, merged.number, pipeline.name, verdictComment({ pipeline: pipeline.name, previous, verdict: appliedVerdict(maskReport(result.report), github.sha, url) }), existing);
    verdicts.push({ pipeline: pipeline.name, exitCode: result.exitCode, summary: `applied (${result.report.outcome})` });
  }
  return { exitCode: worst(verdicts), pipelines: verdicts };
}

/** Updates the pipeline's comment, or creates it the first time; `existing` learns the new one. */
async function upsertComment(api: GitHubApi, issue: number, pipeline: string, body: string, existing: { id: number; body: string }[]): Promise<void> {
  const found = existing.find((c) => isCommentOf(c.body, pipeline));
  if (found) {
    await api.updateComment(found.id, body);
    found.body = body;
  } else {
    existing.push(await api.createComment(issue, body));
  }
}

function runUrl(github: GitHubContext): string {
  return `${github.serverUrl.replace(/\/+$/, '')}/${github.repository}/actions/runs/${github.runId}`;
}

function worst(verdicts: PipelineVerdict[]): number {
  return verdicts.reduce<number>((code, v) => Math.max(code, v.exitCode), EXIT.ok);
}
