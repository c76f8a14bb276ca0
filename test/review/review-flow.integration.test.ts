/**
 * The review flow end to end, as the Action's two modes run it: `rostersync review` on each push
 * to a pull request, the workflow's upload of the review folder as the commit's artifact, and
 * `rostersync apply-reviewed` on the push the merge makes. GitHub is the local stub held to its
 * OpenAPI description (test/support/github-stub.ts); the service is the emulator. Every byte
 * posted to GitHub is checked for the roster's names and e-mail addresses.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli, groupRecords, makeProject, people, person, type Project, type RosterRow } from '../support/project.js';
import { emulator } from '../support/emulator.js';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { startGitHubStub, type GitHubStub } from '../support/github-stub.js';
import { reviewJobs } from '../support/review-job.js';

// One service per test: the test pipelines all name their group "Sync test group".
let service: RunningEmulator;
const emu = () => service;
let gh: GitHubStub;
let rostersSeen: RosterRow[] = [];

beforeEach(async () => {
  service = await emulator();
  gh = await startGitHubStub();
  rostersSeen = [];
});

afterEach(async () => {
  // Whatever the test did: GitHub was asked only what its description allows, and no roster value left.
  expect(gh.violations).toEqual([]);
  const posted = gh.requests.map((r) => r.body).join('\n');
  for (const row of rostersSeen) {
    expect(posted).not.toContain(row.name);
    if (row.email) expect(posted).not.toContain(row.email);
  }
  expect(posted).not.toMatch(/@example\.org/);
  // The token reaches the API only, never the storage the download is redirected to.
  expect(gh.storageRequests.every((r) => r.authorization === undefined)).toBe(true);
  await gh.close();
  await service.close();
});

const sha = (n: number) => n.toString(16).padStart(40, 'a');

async function roster(project: Project, rows: RosterRow[]): Promise<void> {
  rostersSeen.push(...rows);
  await project.writeRoster(rows);
}

const { job, reviewPush, merge } = reviewJobs(emu, () => gh);

async function mainProject(): Promise<Project> {
  const project = await makeProject([], { mode: 'mirror' });
  await roster(project, people(10));
  const first = await cli(emu(), project.dir, ['sync', project.pipeline, '--create-group']);
  expect(first.code, first.stderr).toBe(0);
  return project;
}

describe('review in the pull request, apply at the merge', () => {
  it('posts one comment, updates it on each push, and applies exactly the reviewed plan at the merge', async () => {
    const project = await mainProject();
    await roster(project, [...people(12).map((r) => (r.id === 'p3' ? { ...r, name: 'Zofia Wiśniewska-Kowal' } : r))]);
    const first = await reviewPush(project, 7, sha(1));
    expect(first.code, first.stderr).toBe(0);
    expect(gh.comments).toHaveLength(1);
    const comment = gh.comments[0]!;
    expect(comment.body).toMatch(/^<!-- rostersync-review pipeline=pipeline -->/);
    expect(comment.body).toContain('| 2 | 1 | 0 | 9 | 0 |');
    expect(comment.body).toContain('+ create p11');
    expect(comment.body).toContain('(masked)');
    expect(comment.body).toContain(`rostersync-review-${sha(1)}`);

    // A second push: the same comment, now about the new head.
    await roster(project, people(13).map((r) => (r.id === 'p3' ? { ...r, name: 'Zofia Wiśniewska-Kowal' } : r)));
    const second = await reviewPush(project, 7, sha(2));
    expect(second.code, second.stderr).toBe(0);
    expect(gh.comments).toHaveLength(1);
    expect(gh.comments[0]!.id).toBe(comment.id);
    expect(gh.comments[0]!.body).toContain('| 3 | 1 | 0 | 9 | 0 |');
    expect(gh.comments[0]!.body).toContain(sha(2).slice(0, 12));
    expect(Object.keys(groupRecords(emu()))).toHaveLength(10);

    merge(7, sha(3));
    const applied = await job(project, ['apply-reviewed', 'pipeline.yaml', '--work-dir', 'reviewed'], { sha: sha(3) });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('pipeline: applied (success)');
    const records = groupRecords(emu());
    expect(Object.keys(records)).toHaveLength(13);
    expect(records['p3']).toMatchObject({ name: 'Zofia Wiśniewska-Kowal' });
    expect(gh.comments).toHaveLength(1);
    expect(gh.comments[0]!.body).toContain(`**Applied** at \`${sha(3).slice(0, 12)}\`: 3 created, 1 updated, 0 deleted.`);
    expect(gh.comments[0]!.body).toContain('The plan that was reviewed');
    // The artifact of the LAST push was the one applied, downloaded through the redirect.
    expect(gh.requests.some((r) => r.path.endsWith(`/actions/artifacts?name=rostersync-review-${sha(2)}&per_page=100`))).toBe(true);
    expect(gh.storageRequests).toHaveLength(1);

    // A re-run of the merge's job: nothing applied again, the comment keeps saying Applied.
    const rerun = await job(project, ['apply-reviewed', 'pipeline.yaml', '--work-dir', 'reviewed-again'], { sha: sha(3) });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stdout).toContain('already applied at this commit');
    expect(gh.comments[0]!.body).toContain('**Applied**');
  });

  it('refuses the plan at the merge when the service changed since the review, and says why in the comment', async () => {
    const project = await mainProject();
    await roster(project, people(12));
    expect((await reviewPush(project, 8, sha(11))).code).toBe(0);

    // Before the merge: a record is deleted in the service, and the nightly sync (on main's roster) repairs it.
    const group = [...emu().world.orgs[0]!.groups.values()].find((g) => g.name === 'Sync test group')!;
    expect(group.records.delete('p5')).toBe(true);
    await roster(project, people(10));
    const nightly = await cli(emu(), project.dir, ['sync', project.pipeline, '--refresh=all']);
    expect(nightly.code, nightly.stderr).toBe(0);
    expect(nightly.stdout).toMatch(/1 created|created 1|create.*1/);

    await roster(project, people(12));
    merge(8, sha(12));
    const applied = await job(project, ['apply-reviewed', 'pipeline.yaml', '--work-dir', 'reviewed'], { sha: sha(12) });
    expect(applied.code).toBe(1);
    expect(applied.stdout).toMatch(/pipeline: not applied: .*the state inventory \(another run wrote to it\) changed/);
    expect(Object.keys(groupRecords(emu()))).toHaveLength(10);
    expect(gh.comments).toHaveLength(1);
    expect(gh.comments[0]!.body).toContain(`**Not applied** at \`${sha(12).slice(0, 12)}\``);
    expect(gh.comments[0]!.body).toContain('the state inventory (another run wrote to it) changed');
    expect(gh.comments[0]!.body).toContain('The plan that was reviewed');
  });

  it('refuses when the roster merged is not the one planned, or when no plan was reviewed for the last push', async () => {
    const project = await mainProject();
    await roster(project, people(11));
    expect((await reviewPush(project, 9, sha(21))).code).toBe(0);
    // The merge commit's roster differs from the reviewed head's (say, main moved and was merged in).
    await roster(project, [...people(11), person(40)]);
    merge(9, sha(22));
    const stale = await job(project, ['apply-reviewed', 'pipeline.yaml', '--work-dir', 'reviewed-9'], { sha: sha(22) });
    expect(stale.code).toBe(1);
    expect(gh.comments.find((c) => c.issue === 9)!.body).toContain('the source file content changed');

    // A pull request whose last push was never reviewed (the review job failed): nothing to apply.
    gh.pulls.set(10, { number: 10, headSha: sha(31), files: ['roster.csv'], merged: true, mergeCommitSha: sha(32) });
    const unreviewed = await job(project, ['apply-reviewed', 'pipeline.yaml', '--work-dir', 'reviewed-10'], { sha: sha(32) });
    expect(unreviewed.code).toBe(1);
    expect(gh.comments.find((c) => c.issue === 10)!.body).toContain('no plan was reviewed for the last commit of pull request \\#10');

    // An artifact under the review's name that is not a review folder: refused, and said.
    gh.pulls.set(16, { number: 16, headSha: sha(61), files: ['roster.csv'], merged: true, mergeCommitSha: sha(62) });
    gh.artifacts.push({ id: 900, name: `rostersync-review-${sha(61)}`, headSha: sha(61), zip: new TextEncoder().encode('not a zip'), createdAt: '2026-05-01T09:00:00Z' });
    const foreign = await job(project, ['apply-reviewed', 'pipeline.yaml', '--work-dir', 'reviewed-16'], { sha: sha(62) });
    expect(foreign.code).toBe(1);
    expect(gh.comments.find((c) => c.issue === 16)!.body).toContain('the review artifact cannot be applied: it is not a zip file');
    expect(Object.keys(groupRecords(emu()))).toHaveLength(10);
  });

  it('leaves pull requests that change no pipeline file alone, and says what is missing outside a workflow', async () => {
    const project = await mainProject();
    gh.pulls.set(11, { number: 11, headSha: sha(41), files: ['README.md'], merged: false, mergeCommitSha: null });
    const run = await job(project, ['review', 'pipeline.yaml'], { sha: sha(41), pull: 11 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('no pipeline reads a file this pull request changes');
    expect(gh.comments).toHaveLength(0);

    const outside = await cli(emu(), project.dir, ['review', 'pipeline.yaml'], { GITHUB_TOKEN: 'x' });
    expect(outside.code).toBe(1);
    expect(outside.stderr).toContain('GITHUB_REPOSITORY is not set');
    const badToken = await cli(emu(), project.dir, ['apply-reviewed', 'pipeline.yaml'], { GITHUB_REPOSITORY: gh.repository, GITHUB_API_URL: gh.url, GITHUB_RUN_ID: '1', GITHUB_SHA: sha(42), GITHUB_TOKEN: 'wrong' });
    expect(badToken.code).toBe(4);
    expect(badToken.stderr).toMatch(/GitHub answered 401/);
    expect(badToken.stderr).toContain('github-token');
  });

  it('says in the comment why a pipeline the pull request breaks cannot be planned', async () => {
    const project = await mainProject();
    await writeFile(project.pipeline, (await readFile(project.pipeline, 'utf8')).replace('policy:', 'polcy:'));
    const run = await reviewPush(project, 14, sha(51), ['pipeline.yaml']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('pipeline: cannot be planned');
    expect(gh.comments).toHaveLength(1);
    expect(gh.comments[0]!.body).toMatch(/^<!-- rostersync-review pipeline=pipeline -->/);
    expect(gh.comments[0]!.body).toContain('**Cannot be planned**');
    expect(gh.comments[0]!.body).toContain('polcy');
  });

  it('has a GitHub stub that holds requests to the description: a comment without a body is a violation', async () => {
    const answer = await fetch(`${gh.url}/repos/${gh.repository}/issues/3/comments?per_page=500`, { method: 'POST', headers: { authorization: `token ${gh.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'no body' }) });
    await answer.body?.cancel();
    expect(gh.violations.join('\n')).toMatch(/request body.*required.*body/);
    expect(gh.violations.join('\n')).toMatch(/query parameter per_page is not in the description/);
    gh.violations.length = 0;
  });
});
