/**
 * The review comment (src/review/comment.ts) from masked reports: found again by its marker, and
 * nothing in a roster or a service value can reach the comment's Markdown unmasked or break out
 * of where it is put (the diff's fence, an inline span).
 */
import { marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { maskReport } from '../../src/report/mask.js';
import { isCommentOf, refusedVerdict, reviewComment, verdictComment } from '../../src/review/comment.js';
import { aChange, aGuard, aRecord, aReport } from '../report/builders.js';

const links = { runUrl: 'https://github.example/editorial/rosters/actions/runs/7', artifactName: `rostersync-review-${'c'.repeat(40)}`, headSha: 'c'.repeat(40) };

function comment(report = aReport(), records = 20): string {
  return reviewComment({ pipeline: 'reviewers', pipelineFile: 'pipelines/reviewers.yaml', report: maskReport(report), exitCode: report.exitCode, records, links });
}

describe('the review comment', () => {
  it('is found again by its marker, for its own pipeline only', () => {
    const body = comment();
    expect(isCommentOf(body, 'reviewers')).toBe(true);
    expect(isCommentOf(body, 'reviewers-2')).toBe(false);
    expect(isCommentOf(`quoting it:\n${body}`, 'reviewers')).toBe(false);
  });

  it('masks every value, names included, and the names a guard message quotes', () => {
    const report = aReport({
      records: [aRecord({ clientId: 'EXP-0001', changes: [aChange({ before: 'Ada Lovelace', after: 'Ada King' }), aChange({ field: 'emails', label: 'Emails', before: ['ada@example.org'], after: ['ada.king@example.org'] })] })],
      guards: [aGuard({ guard: 'identity_changes', tripped: true, message: '12 owned records would become other people. For example EXP-0001: "Ada Lovelace" → "Grace Hopper"; contact ada@example.org.', allowWith: '--allow-identity-changes 12' })],
      outcome: 'refused',
      exitCode: 3,
    });
    const body = comment(report);
    for (const secret of ['Ada', 'Lovelace', 'King', 'Grace', 'Hopper', '@example.org']) expect(body).not.toContain(secret);
    expect(body).toContain('**Would be refused** by `identity_changes`');
    expect(body).toContain('`--allow-identity-changes 12`');
  });

  it('keeps hostile client_ids and group names inside their fence and span', async () => {
    const evil = '```\n<img src=x onerror=alert(1)>\n```';
    const report = aReport({
      target: { baseUrl: 'http://127.0.0.1:4010', groupId: 42, groupName: '[click](https://evil.example) <b>bold</b>' },
      records: [aRecord({ clientId: evil, action: 'create', reason: 'new', changes: [aChange({ before: undefined })] })],
    });
    const html = await marked.parse(comment(report), { gfm: true });
    expect(html).not.toMatch(/<img|<b>|href="https:\/\/evil/);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('shows at most the records asked for, and says how many there are', () => {
    const records = Array.from({ length: 30 }, (_, i) => aRecord({ clientId: `EXP-${i}`, action: 'create', reason: 'new', changes: [aChange({ before: undefined })] }));
    const body = comment(aReport({ records }), 5);
    expect(body).toContain('The first 5 of 30 changes');
    expect(body.match(/\+ create EXP-/g)).toHaveLength(5);
  });

  it('puts the merge verdict above the plan that was reviewed, and redacts e-mail addresses in it', () => {
    const reviewed = comment();
    const body = verdictComment({ pipeline: 'reviewers', previous: reviewed, verdict: refusedVerdict('the plan is stale: the source file content changed (sent by ops@example.org).', 'd'.repeat(40), links.runUrl) });
    expect(isCommentOf(body, 'reviewers')).toBe(true);
    expect(body.indexOf('**Not applied**')).toBeLessThan(body.indexOf('The plan that was reviewed'));
    expect(body).toContain('EXP-0002');
    expect(body).not.toContain('ops@example.org');
    // Again after a second verdict: the reviewed plan is kept, not nested.
    const again = verdictComment({ pipeline: 'reviewers', previous: body, verdict: 'x' });
    expect(again.match(/The plan that was reviewed/g)).toHaveLength(1);
  });
});
