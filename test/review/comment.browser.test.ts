/**
 * What an admin sees in the pull request: the comment `rostersync review` posts (through the real
 * flow against the emulator and the local GitHub stub), rendered from Markdown by marked (GitHub
 * Flavored Markdown) in a real headless Chromium, checked as a page and saved as a screenshot.
 * With ROSTERSYNC_WRITE_DOC_IMAGES=1 the screenshot replaces docs/review-comment.png, the picture
 * docs/review-and-metrics.md shows.
 */
import { copyFile, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { marked } from 'marked';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { launchBrowser, openPage, inPage, type BrowserHandle } from '../report/browser.js';
import { emulator } from '../support/emulator.js';
import { startGitHubStub, type GitHubStub } from '../support/github-stub.js';
import { cli, makeProject, people, type RosterRow } from '../support/project.js';
import { reviewJobs } from '../support/review-job.js';

const DOC_IMAGE = fileURLToPath(new URL('../../docs/review-comment.png', import.meta.url));

let browser: BrowserHandle;
let service: RunningEmulator;
let gh: GitHubStub;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rostersync-comment-'));
  [browser, service, gh] = await Promise.all([launchBrowser(), emulator(), startGitHubStub()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([browser?.close(), service?.close(), gh?.close()]);
  await rm(dir, { recursive: true, force: true });
});

/** A page as GitHub frames a comment: its width, its font, its table and code styles. */
function commentPage(html: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<style>
body { margin: 0; background: #f6f8fa; font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; color: #1f2328; }
.comment { width: 760px; margin: 16px; border: 1px solid #d1d9e0; border-radius: 6px; background: #fff; }
.header { padding: 8px 16px; background: #f6f8fa; border-bottom: 1px solid #d1d9e0; border-radius: 6px 6px 0 0; color: #59636e; }
.body { padding: 4px 16px 12px; }
table { border-collapse: collapse; } th, td { border: 1px solid #d1d9e0; padding: 4px 12px; }
code { background: #eff1f3; border-radius: 4px; padding: 0.1em 0.3em; font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: #f6f8fa; border-radius: 6px; padding: 12px; overflow: auto; } pre code { background: none; padding: 0; }
summary { cursor: pointer; } h3 { margin: 12px 0 8px; }
</style></head><body><div class="comment"><div class="header"><b>github-actions</b> bot commented</div><div class="body">${html}</div></div></body></html>`;
}

describe('the review comment as an admin sees it', () => {
  it('renders the counts, the guards and the masked records, with no roster value in the page', async () => {
    const seen: RosterRow[] = [];
    const project = await makeProject([], { mode: 'mirror' });
    const main = people(30).map((r, i) => ({ ...r, name: ['Amara Okafor', 'Li Wei', 'Sofia Esposito', 'Jonas Berg', 'Priya Raman'][i % 5]! + ` ${i}` }));
    seen.push(...main);
    await project.writeRoster(main);
    const first = await cli(service, project.dir, ['sync', project.pipeline, '--create-group']);
    expect(first.code, first.stderr).toBe(0);
    // The pull request: two new reviewers, one renamed, one affiliation level changed, one leaves.
    const next = [...main.filter((r) => r.id !== 'p7').map((r) => (r.id === 'p3' ? { ...r, name: 'Sofia Esposito-Marino' } : r.id === 'p9' ? { ...r, level: 'Expert' } : r)), ...people(2, 31)];
    seen.push(...next);
    await project.writeRoster(next);
    const { reviewPush } = reviewJobs(() => service, () => gh);
    const run = await reviewPush(project, 12, 'b'.repeat(40));
    expect(run.code, run.stderr).toBe(0);
    expect(gh.comments).toHaveLength(1);

    const html = await marked.parse(gh.comments[0]!.body, { gfm: true });
    const file = join(dir, 'comment.html');
    await writeFile(file, commentPage(html));
    const opened = await openPage(browser, file);
    const { page } = opened;
    await inPage(page, `document.querySelectorAll('details').forEach((d) => { d.open = true; })`);
    const text = await inPage<string>(page, 'document.body.innerText');
    expect(text).toContain('rostersync: pipeline');
    expect(await inPage<string[]>(page, `Array.from(document.querySelectorAll('table td')).map((td) => td.textContent)`)).toEqual(['2', '2', '1', '27', '0']);
    expect(text).toContain('+ create p31');
    expect(text).toContain('- delete p7');
    expect(text).toContain('(masked)');
    // The hidden marker is an HTML comment: not shown.
    expect(text).not.toContain('rostersync-review pipeline=');
    for (const row of seen) {
      expect(text).not.toContain(row.name);
      if (row.email) expect(text).not.toContain(row.email);
    }
    expect(opened.errors).toEqual([]);
    expect(opened.blocked).toEqual([]);

    const height = await inPage<number>(page, `Math.ceil(document.querySelector('.comment').getBoundingClientRect().bottom + 16)`);
    const shot = join(dir, 'review-comment.png');
    await page.setViewport({ width: 800, height: Math.min(height, 1400) });
    await page.screenshot({ path: shot, clip: { x: 0, y: 0, width: 800, height: Math.min(height, 1400) } });
    expect((await stat(shot)).size).toBeGreaterThan(10_000);
    if (process.env.ROSTERSYNC_WRITE_DOC_IMAGES === '1') await copyFile(shot, DOC_IMAGE);
    expect((await stat(DOC_IMAGE)).size, 'docs/review-comment.png is committed (ROSTERSYNC_WRITE_DOC_IMAGES=1 writes it)').toBeGreaterThan(10_000);
    await page.close();
  }, 120_000);
});
