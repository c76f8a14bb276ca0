/**
 * The GitHub Actions job a review command runs in, from its environment: the repository, the API
 * and server URLs, the run, the token, and the event (the pull request under review, or the commit
 * a merge made). Read once, checked, and named in any refusal, so that a command started outside
 * a workflow says what it is missing.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { UserFacingError } from '../errors/user-facing-error.js';

export interface GitHubContext {
  repository: string;
  apiUrl: string;
  serverUrl: string;
  runId: string;
  token: string;
  /** The commit the job checked out (GITHUB_SHA): a merge commit on push. */
  sha: string;
  /** Set on `pull_request` events. */
  pullRequest?: { number: number; headSha: string };
}

const pullRequestEvent = z.object({ pull_request: z.object({ number: z.number().int().positive(), head: z.object({ sha: z.string().regex(/^[0-9a-f]{40}$/) }) }) });

export function gitHubContext(env: NodeJS.ProcessEnv, options: { tokenEnv: string; needPullRequest: boolean }): GitHubContext {
  const need = (name: string): string => {
    const value = env[name];
    if (!value) throw new UserFacingError(`${name} is not set`, { hint: `The review commands run in a GitHub Actions job, which sets ${name}; see docs/review-and-metrics.md.` });
    return value;
  };
  const token = env[options.tokenEnv];
  if (!token) throw new UserFacingError(`${options.tokenEnv} is not set: the review commands need the job's token`, { hint: `Pass it in the step's env: ${options.tokenEnv}: \${{ github.token }}.` });
  const context: GitHubContext = {
    repository: need('GITHUB_REPOSITORY'),
    apiUrl: env.GITHUB_API_URL || 'https://api.github.com',
    serverUrl: env.GITHUB_SERVER_URL || 'https://github.com',
    runId: need('GITHUB_RUN_ID'),
    token,
    sha: need('GITHUB_SHA'),
  };
  if (!options.needPullRequest) return context;
  const eventPath = need('GITHUB_EVENT_PATH');
  let event: unknown;
  try {
    event = JSON.parse(readFileSync(eventPath, 'utf8'));
  } catch (error) {
    throw new UserFacingError(`cannot read the event payload ${eventPath}: ${(error as Error).message}`);
  }
  const parsed = pullRequestEvent.safeParse(event);
  if (!parsed.success) {
    throw new UserFacingError(`this job was not started by a pull request (${eventPath} has no pull_request.number and head.sha)`, { hint: 'Run `rostersync review` on: pull_request; `rostersync apply-reviewed` runs on: push.' });
  }
  return { ...context, pullRequest: { number: parsed.data.pull_request.number, headSha: parsed.data.pull_request.head.sha } };
}

/** The artifact a review uploads for a commit; `apply-reviewed` looks it up by this name. */
export function reviewArtifactName(headSha: string): string {
  return `rostersync-review-${headSha}`;
}
