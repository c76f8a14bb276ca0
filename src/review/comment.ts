/**
 * The pull-request comment of one pipeline (pure): found again by its hidden marker and updated in
 * place on every push and at the merge. It is built from the MASKED report only (report/mask.ts):
 * counts, the guards that would trip, the first records of the diff with every value `(masked)`,
 * and where the full report is. Free text (messages, refusals) has its e-mail addresses redacted.
 *
 * The review part sits between two markers so that the merge's verdict (applied, or refused and
 * why) can be put above the plan that was reviewed without planning again.
 */
import { actionTotal, redactEmails } from '../report/format.js';
import { code, mdText } from '../report/markdown.js';
import { renderPlanDiff } from '../report/plan-diff.js';
import type { RunReport } from '../report/types.js';

/** GitHub refuses a comment over 65,536 characters; the diff is cut well before. */
const MAX_DIFF_CHARS = 40_000;
export const DEFAULT_REVIEW_RECORDS = 20;

const MARKER = (pipeline: string) => `<!-- rostersync-review pipeline=${encodeURIComponent(pipeline)} -->`;
const BEGIN = '<!-- rostersync-review:begin -->';
const END = '<!-- rostersync-review:end -->';

export function isCommentOf(body: string, pipeline: string): boolean {
  return body.startsWith(MARKER(pipeline));
}

export interface ReviewLinks {
  /** The workflow run's page, where the artifact is listed. */
  runUrl: string;
  artifactName: string;
  headSha: string;
}

/** The comment for a plan made on a push to the pull request. `report` must be masked. */
export function reviewComment(input: { pipeline: string; pipelineFile: string; report: RunReport; exitCode: number; records: number; links: ReviewLinks }): string {
  const { report, links } = input;
  const refused = report.guards.filter((g) => g.tripped);
  const verdict =
    refused.length > 0
      ? `**Would be refused** by ${refused.map((g) => code(g.guard)).join(', ')}: merging applies nothing until the plan is made again with ${refused.map((g) => code(g.allowWith ?? '')).join(' ')}.`
      : report.exitCode === 0
        ? 'Merging applies exactly this plan, if nothing it was made against changed by then.'
        : `Planned with exit code ${report.exitCode}: ${mdText(redactEmails(report.message ?? 'see the report'))}`;
  const counts = `| create | update | delete | unchanged | rows rejected |\n|---:|---:|---:|---:|---:|\n| ${actionTotal(report, 'create')} | ${actionTotal(report, 'update')} | ${actionTotal(report, 'delete')} | ${actionTotal(report, 'noop')} | ${report.input.rejected} |`;
  const guards = refused.map((g) => `- ${code(g.guard)}: ${mdText(maskQuoted(redactEmails(g.message)))} Allow with ${code(g.allowWith ?? '')}.`);
  const changedTotal = actionTotal(report, 'create') + actionTotal(report, 'update') + actionTotal(report, 'delete');
  const diff = renderPlanDiff(report, { color: false, mask: true, limit: input.records });
  const section = [
    BEGIN,
    `Plan for ${code(input.pipelineFile)} at ${code(links.headSha.slice(0, 12))}${report.target.groupName ? ` → group ${mdText(report.target.groupName)}` : ''}${report.target.groupId !== null ? ` (#${report.target.groupId})` : ''}`,
    '',
    verdict,
    '',
    counts,
    ...(guards.length > 0 ? ['', '**Guards that would trip**', '', ...guards] : []),
    '',
    `<details><summary>${changedTotal > input.records ? `The first ${input.records} of ${changedTotal} changes` : `The ${changedTotal === 1 ? 'change' : `${changedTotal} changes`}`}, values masked</summary>`,
    '',
    fenced(diff.length > MAX_DIFF_CHARS ? `${diff.slice(0, MAX_DIFF_CHARS)}\n... cut: the report has the rest.` : diff, 'diff'),
    '',
    '</details>',
    '',
    `Full report and the signed plan: artifact ${code(links.artifactName)} of [this workflow run](${links.runUrl}).`,
    END,
  ];
  return [MARKER(input.pipeline), `### rostersync: ${mdText(input.pipeline)}`, '', ...section, ''].join('\n');
}

/** The comment after the merge: the verdict above the plan that was reviewed. */
export function verdictComment(input: { pipeline: string; previous: string | undefined; verdict: string }): string {
  const reviewed = input.previous ? reviewedSection(input.previous) : undefined;
  return [
    MARKER(input.pipeline),
    `### rostersync: ${mdText(input.pipeline)}`,
    '',
    input.verdict,
    '',
    ...(reviewed ? ['<details><summary>The plan that was reviewed</summary>', '', BEGIN, reviewed, END, '', '</details>', ''] : []),
  ].join('\n');
}

const APPLIED = (mergeSha: string) => `<!-- rostersync-review:applied=${mergeSha} -->`;

/** Whether the comment says the plan was applied at this merge (a re-run of the job applies nothing again). */
export function isAppliedAt(body: string, mergeSha: string): boolean {
  return body.includes(APPLIED(mergeSha));
}

/** What the merge did with the reviewed plan, in a sentence or two. */
export function appliedVerdict(report: RunReport, mergeSha: string, runUrl: string): string {
  const done = (action: 'create' | 'update' | 'delete') => report.counts[action]?.done ?? 0;
  const state = report.exitCode === 0 ? '**Applied**' : `**Applied with exit code ${report.exitCode}** (${mdText(redactEmails(report.message ?? report.outcome))})`;
  return `${APPLIED(mergeSha)}\n${state} at ${code(mergeSha.slice(0, 12))}: ${done('create')} created, ${done('update')} updated, ${done('delete')} deleted. [The run](${runUrl}).`;
}

export function refusedVerdict(reason: string, mergeSha: string, runUrl: string): string {
  return `**Not applied** at ${code(mergeSha.slice(0, 12))}: ${mdText(maskQuoted(redactEmails(reason)))}\n\nNothing was written. Open a pull request that plans again (or run \`rostersync plan\`), review it, and merge it. [The run](${runUrl}).`;
}

/** A pipeline of the pull request that cannot be planned (its files, its roster, the service): why, and what to do. */
export function planFailedVerdict(error: { message: string; hint?: string | undefined }, headSha: string, runUrl: string): string {
  const why = mdText(maskQuoted(redactEmails(`${error.message}${error.hint ? ` ${error.hint}` : ''}`)));
  return `**Cannot be planned** at ${code(headSha.slice(0, 12))}: ${why}\n\nMerging applies nothing for this pipeline. Fix it and push again. [The run](${runUrl}).`;
}

function reviewedSection(body: string): string | undefined {
  const start = body.indexOf(BEGIN);
  const end = body.indexOf(END);
  return start >= 0 && end > start ? body.slice(start + BEGIN.length, end).trim() : undefined;
}

/** A fenced block no content can close early: the fence is longer than any backtick run inside. */
function fenced(text: string, language: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${text.replace(/^ {2}/gm, '').trimEnd()}\n${fence}`;
}

/** Guard messages quote names as examples (`"Ana Duarte" → "Ana Duarte-Silva"`): masked here. */
function maskQuoted(text: string): string {
  return text.replace(/"[^"]*"/g, '"(masked)"');
}
