/**
 * What a notification says, in the three webhook formats and as an e-mail. Pure. Counts, the
 * outcome in words, the reason and where the report is; no roster values: the ones the message
 * quotes (a guard's examples, an encoding's evidence) and e-mail-shaped text are masked as under
 * --mask (report/mask.ts maskText), whatever the run's flags (the channel is read more widely than the report).
 */
import type { NotifyEvent } from '../config/pipeline.js';
import { reportOutcomeWords } from '../report/format.js';
import { maskText } from '../report/mask.js';
import { runCounts } from '../report/history.js';
import type { RunReport } from '../report/types.js';

export interface RunNotice {
  type: 'rostersync.run';
  version: 1;
  events: NotifyEvent[];
  pipeline: string;
  runId: string;
  outcome: RunReport['outcome'];
  /** The outcome in words: `done, 3 rows rejected`. */
  outcomeText: string;
  exitCode: number;
  message?: string;
  counts: ReturnType<typeof runCounts>;
  drift?: { sampled: number; deleted: number; changed: number };
  target: { baseUrl: string; groupId: number | null };
  startedAt: string;
  finishedAt: string;
  /** `url` from notify.report_url; `path` is the report folder on the machine that ran. */
  report: { path: string; url?: string };
}

export function runNotice(report: RunReport, events: NotifyEvent[], where: { reportDir: string; reportUrl?: string | undefined }): RunNotice {
  return {
    type: 'rostersync.run',
    version: 1,
    events,
    pipeline: report.pipeline,
    runId: report.runId,
    outcome: report.outcome,
    outcomeText: reportOutcomeWords(report),
    exitCode: report.exitCode,
    ...(report.message ? { message: maskText(report.message) } : {}),
    counts: runCounts(report),
    ...(report.drift ? { drift: { sampled: report.drift.sampled, deleted: report.drift.deleted.length, changed: report.drift.changed.length } } : {}),
    target: { baseUrl: report.target.baseUrl, groupId: report.target.groupId },
    startedAt: report.startedAt,
    finishedAt: report.finishedAt,
    report: {
      path: where.reportDir,
      ...(where.reportUrl ? { url: where.reportUrl.replaceAll('{pipeline}', encodeURIComponent(report.pipeline)).replaceAll('{run_id}', encodeURIComponent(report.runId)) } : {}),
    },
  };
}

/** The headline: `rostersync · reviewers: done, 3 rows rejected (exit 0)`. */
export function noticeTitle(notice: RunNotice): string {
  return `rostersync · ${notice.pipeline}: ${notice.outcomeText} (exit ${notice.exitCode})`;
}

/** The body lines shared by Slack, Teams and e-mail. */
export function noticeLines(notice: RunNotice): string[] {
  const c = notice.counts;
  const lines = [`${c.creates} created · ${c.updates} updated · ${c.deletes} deleted · ${c.unchanged} unchanged · ${c.failures} failed · ${c.rejects} rejected`];
  if (notice.drift && notice.drift.deleted + notice.drift.changed > 0) {
    lines.push(`drift: of ${notice.drift.sampled} records read back, ${notice.drift.deleted} ${notice.drift.deleted === 1 ? 'was' : 'were'} deleted and ${notice.drift.changed} changed in the service; this run repaired them`);
  }
  if (notice.message) lines.push(notice.message);
  lines.push(`run ${notice.runId} · group ${notice.target.groupId ?? '(not created)'} at ${notice.target.baseUrl}`);
  lines.push(`report: ${notice.report.url ?? notice.report.path}`);
  return lines;
}

export type WebhookFormat = 'json' | 'slack' | 'teams';

/** The request body for each webhook format. */
export function webhookBody(notice: RunNotice, format: WebhookFormat): unknown {
  if (format === 'json') return notice;
  if (format === 'slack') {
    // Slack incoming webhooks: `text` is the notification and fallback; mrkdwn renders it.
    // `&`, `<` and `>` are Slack's control characters (links, mentions): a message or path keeps them as text.
    const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    return { text: [`*${escape(noticeTitle(notice))}*`, ...noticeLines(notice).map(escape)].join('\n') };
  }
  // Teams Workflows ("Post to a channel when a webhook request is received") take an Adaptive Card.
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', text: noticeTitle(notice), weight: 'Bolder', wrap: true, color: notice.exitCode === 0 ? 'Good' : 'Attention' },
            ...noticeLines(notice).map((text) => ({ type: 'TextBlock', text, wrap: true })),
          ],
          ...(notice.report.url ? { actions: [{ type: 'Action.OpenUrl', title: 'Open the report', url: notice.report.url }] } : {}),
        },
      },
    ],
  };
}
