/**
 * The GitHub REST calls of the review flow, through Octokit with the job's token: the files of a
 * pull request, its comments (listed, created, updated), the pull requests of a commit, and the
 * review artifact (found by name, downloaded as a zip). Octokit is imported when a review command
 * runs, not at start-up.
 *
 * Bounded: every request has its own timeout inside the command's total deadline, listings stop
 * at a fixed number of pages, and a download larger than MAX_ARTIFACT_BYTES is refused.
 */
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';

export interface PullRequestRef {
  number: number;
  headSha: string;
  merged: boolean;
  mergeCommitSha: string | null;
}

export interface IssueComment {
  id: number;
  body: string;
}

export interface ArtifactRef {
  id: number;
  name: string;
  sizeInBytes: number;
  headSha: string | null;
}

export interface GitHubApi {
  pullFiles(pull: number): Promise<string[]>;
  comments(issue: number): Promise<IssueComment[]>;
  createComment(issue: number, body: string): Promise<IssueComment>;
  updateComment(id: number, body: string): Promise<IssueComment>;
  pullsOfCommit(sha: string): Promise<PullRequestRef[]>;
  findArtifact(name: string): Promise<ArtifactRef | undefined>;
  downloadArtifact(artifact: ArtifactRef): Promise<Uint8Array>;
}

export interface GitHubApiOptions {
  /** `owner/name`. */
  repository: string;
  token: string;
  /** GITHUB_API_URL (https://api.github.com, or a GitHub Enterprise Server's). */
  apiUrl: string;
  /** Aborts every request: the command's total deadline. */
  signal?: AbortSignal | undefined;
  /** One request's timeout. @default 30 s */
  requestTimeoutMs?: number;
  /** The fetch Octokit uses (tests: the global one against a local server). @default globalThis.fetch */
  fetch?: typeof fetch;
}

/** Pages of 100 read at most from one listing: 10,000 files or comments. */
const MAX_PAGES = 100;
/** The review artifact holds plans and masked reports: far below this. */
export const MAX_ARTIFACT_BYTES = 256 * 1024 * 1024;

export async function gitHubApi(options: GitHubApiOptions): Promise<GitHubApi> {
  const [owner, repo] = options.repository.split('/');
  if (!owner || !repo || options.repository.split('/').length !== 2) {
    throw new UserFacingError(`GITHUB_REPOSITORY "${options.repository}" is not owner/name`, { hint: 'Run the review commands in a GitHub Actions job, or set GITHUB_REPOSITORY=owner/name.' });
  }
  const { Octokit } = await import('@octokit/rest');
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const octokit = new Octokit({
    auth: options.token,
    baseUrl: options.apiUrl.replace(/\/+$/, ''),
    userAgent: 'rostersync-review',
    request: { ...(options.fetch ? { fetch: options.fetch } : {}) },
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });
  // Each request's own timeout within the command's deadline.
  octokit.hook.wrap('request', (request, route) => {
    const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])];
    return request({ ...route, request: { ...route.request, signal: AbortSignal.any(signals) } });
  });
  const call = async <T>(what: string, send: () => Promise<T>): Promise<T> => {
    try {
      return await send();
    } catch (error) {
      throw gitHubError(what, error);
    }
  };
  const pages = async <T>(what: string, route: string, params: Record<string, unknown>): Promise<T[]> =>
    call(what, async () => {
      const items: T[] = [];
      let page = 0;
      for await (const response of octokit.paginate.iterator(route, { owner, repo, per_page: 100, ...params })) {
        items.push(...(response.data as T[]));
        if (++page >= MAX_PAGES) break;
      }
      return items;
    });

  return {
    async pullFiles(pull) {
      const files = await pages<{ filename: string; previous_filename?: string }>(`list the files of pull request #${pull}`, 'GET /repos/{owner}/{repo}/pulls/{pull_number}/files', { pull_number: pull });
      return files.flatMap((f) => (f.previous_filename ? [f.filename, f.previous_filename] : [f.filename]));
    },
    async comments(issue) {
      const list = await pages<{ id: number; body?: string }>(`list the comments of pull request #${issue}`, 'GET /repos/{owner}/{repo}/issues/{issue_number}/comments', { issue_number: issue });
      return list.map((c) => ({ id: c.id, body: c.body ?? '' }));
    },
    async createComment(issue, body) {
      const { data } = await call(`comment on pull request #${issue}`, () => octokit.rest.issues.createComment({ owner, repo, issue_number: issue, body }));
      return { id: data.id, body: data.body ?? '' };
    },
    async updateComment(id, body) {
      const { data } = await call(`update comment ${id}`, () => octokit.rest.issues.updateComment({ owner, repo, comment_id: id, body }));
      return { id: data.id, body: data.body ?? '' };
    },
    async pullsOfCommit(sha) {
      const list = await pages<{ number: number; head: { sha: string }; merged_at: string | null; merge_commit_sha: string | null }>(
        `find the pull request of commit ${sha}`,
        'GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls',
        { commit_sha: sha },
      );
      return list.map((p) => ({ number: p.number, headSha: p.head.sha, merged: p.merged_at !== null, mergeCommitSha: p.merge_commit_sha }));
    },
    async findArtifact(name) {
      const { data } = await call(`find the artifact ${name}`, () => octokit.rest.actions.listArtifactsForRepo({ owner, repo, name, per_page: 100 }));
      // The newest unexpired one: a re-run of the review job uploads it again.
      const found = data.artifacts.filter((a) => !a.expired && a.name === name).sort((a, b) => String(b.created_at).localeCompare(String(a.created_at)))[0];
      return found ? { id: found.id, name: found.name, sizeInBytes: found.size_in_bytes, headSha: found.workflow_run?.head_sha ?? null } : undefined;
    },
    async downloadArtifact(artifact) {
      if (artifact.sizeInBytes > MAX_ARTIFACT_BYTES) {
        throw new UserFacingError(`the artifact ${artifact.name} is ${artifact.sizeInBytes} bytes, more than a review artifact holds (${MAX_ARTIFACT_BYTES})`, { hint: 'Run the review again on the pull request.' });
      }
      // GitHub answers 302 to a short-lived storage URL, which fetch follows (without the token).
      const { data } = await call(`download the artifact ${artifact.name}`, () => octokit.rest.actions.downloadArtifact({ owner, repo, artifact_id: artifact.id, archive_format: 'zip' }));
      const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : undefined;
      if (!bytes || bytes.byteLength > MAX_ARTIFACT_BYTES) throw new UserFacingError(`the artifact ${artifact.name} did not download as a zip file of at most ${MAX_ARTIFACT_BYTES} bytes`);
      return bytes;
    },
  };
}

/** What GitHub answered, where, and what to do: a token without the permission is the usual cause. */
function gitHubError(what: string, error: unknown): UserFacingError {
  const status = (error as { status?: unknown }).status;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof status !== 'number') {
    return new UserFacingError(`cannot ${what}: GitHub did not answer (${message})`, { hint: 'Run the job again; check GITHUB_API_URL.', exitCode: EXIT.unavailable, cause: error });
  }
  const hint =
    status === 401
      ? 'The token was refused: pass the job token (github.token) as github-token.'
      : status === 403 || status === 404
        ? 'Give the job the permissions docs/review-and-metrics.md lists (pull-requests: write, contents: read, actions: read).'
        : status >= 500
          ? 'GitHub failed; run the job again.'
          : undefined;
  return new UserFacingError(`cannot ${what}: GitHub answered ${status} (${message.split('\n')[0]})`, { ...(hint ? { hint } : {}), exitCode: status >= 500 ? EXIT.unavailable : EXIT.auth, cause: error });
}
