/**
 * The GitHub Actions side of the review flow for tests: a rostersync command run as a step of a
 * job started by a pull_request or push event (the environment a runner sets), and the
 * workflow's upload of the review folder as the commit's artifact (what actions/upload-artifact
 * stores: a zip of the folder's files, relative to it).
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import JSZip from 'jszip';
import { cli, type CliRun, type Project } from './project.js';
import type { GitHubStub } from './github-stub.js';

export interface ReviewJobs {
  /** Runs `argv` as a step of a job started by `event` (a pull request when `pull` is given, else a push). */
  job(project: Project, argv: string[], event: { sha: string; pull?: number }): Promise<CliRun>;
  /** A push to pull request `pull` changing `files`: the review job, then the upload of its folder. */
  reviewPush(project: Project, pull: number, head: string, files?: string[]): Promise<CliRun>;
  /** The merge of pull request `pull` as commit `mergeSha`. */
  merge(pull: number, mergeSha: string): void;
}

export function reviewJobs(emu: () => { url: string }, gh: () => GitHubStub): ReviewJobs {
  const jobs: ReviewJobs = {
    async job(project, argv, event) {
      const eventPath = join(project.dir, `event-${event.sha.slice(-4)}.json`);
      await writeFile(eventPath, JSON.stringify(event.pull ? { pull_request: { number: event.pull, head: { sha: event.sha } } } : { ref: 'refs/heads/main', after: event.sha }));
      return cli(emu(), project.dir, argv, {
        GITHUB_REPOSITORY: gh().repository,
        GITHUB_API_URL: gh().url,
        GITHUB_SERVER_URL: 'https://github.example',
        GITHUB_RUN_ID: String(4000 + gh().requests.length),
        GITHUB_SHA: event.sha,
        GITHUB_EVENT_PATH: eventPath,
        GITHUB_TOKEN: gh().token,
      });
    },
    async reviewPush(project, pull, head, files = ['roster.csv']) {
      gh().pulls.set(pull, { number: pull, headSha: head, files, merged: false, mergeCommitSha: null });
      const out = `review-${head.slice(-4)}`;
      const run = await jobs.job(project, ['review', 'pipeline.yaml', '--out-dir', out], { sha: head, pull });
      await uploadArtifact(gh(), join(project.dir, out), `rostersync-review-${head}`, head);
      return run;
    },
    merge(pull, mergeSha) {
      const pr = gh().pulls.get(pull)!;
      gh().pulls.set(pull, { ...pr, merged: true, mergeCommitSha: mergeSha });
    },
  };
  return jobs;
}

async function uploadArtifact(gh: GitHubStub, dir: string, name: string, headSha: string): Promise<void> {
  const zip = new JSZip();
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path);
      else zip.file(relative(dir, path).split('\\').join('/'), await readFile(path));
    }
  };
  await walk(dir);
  gh.artifacts.push({ id: 500 + gh.artifacts.length, name, headSha, zip: await zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' }), createdAt: '2026-05-01T09:00:00Z' });
}
