/**
 * Alerts (`notify:` in the pipeline): after a real sync (never a dry run or a plan) whose events
 * (events.ts) include one the pipeline lists, a webhook and/or an e-mail says what happened and
 * where the report is. Sent after the report files are written (sync/record.ts), so a channel
 * that stalls can never cost the report; the channels are tried side by side, each attempt has a
 * deadline, all of them together end within `ALERTS_CEILING_MS`, and the run's stop signal ends
 * them at once. A notification that fails is retried briefly (deliver.ts), logged and noted; it
 * never changes the run's outcome or exit code. Secrets (the webhook URL, the HMAC secret, the
 * SMTP password) come from the environment and are never printed: targets are named by host only.
 */
import type { Logger } from 'pino';
import type { NotifyConfig, RejectsPolicy } from '../config/pipeline.js';
import type { RunReport } from '../report/types.js';
import { ALERTS_CEILING_MS, postWebhook, withRetries, type Delivered, type DeliveryOptions } from './deliver.js';
import { sendEmail } from './email.js';
import { runEvents } from './events.js';
import { noticeLines, noticeTitle, runNotice, webhookBody } from './message.js';

export interface NotifyContext {
  env: Readonly<Record<string, string | undefined>>;
  /** The report folder, named in the message when notify.report_url is not set. */
  reportDir: string;
  /** The report fell back to another folder: notify.report_url does not lead to it, so the path is named instead. */
  fellBack?: boolean;
  /** policy.rejects, which tells tolerated rejects (no `rejects` event) from too many. */
  rejects?: RejectsPolicy | undefined;
  logger?: Logger | undefined;
  delivery?: DeliveryOptions | undefined;
  /** The run's stop signal (SIGINT/SIGTERM): ends the alerts at once when it fires while they are sent. */
  signal?: AbortSignal | undefined;
}

/** Sends the notifications a run calls for; returns the notes for its report (none when it calls for none). */
export async function notifyRun(config: NotifyConfig | undefined, report: RunReport, context: NotifyContext): Promise<string[]> {
  if (!config || report.dryRun) return [];
  const events = runEvents(report, context.rejects);
  const matched = events.filter((event) => config.on.includes(event));
  if (matched.length === 0) return [];
  const notice = runNotice(report, matched, { reportDir: context.reportDir, reportUrl: context.fellBack ? undefined : config.report_url });
  const sends: { sink: string; send: () => Promise<Delivered> }[] = [];
  const { env } = context;
  const limits = alertLimits(context);
  const delivery = { ...context.delivery, signal: limits.signal };
  const url = config.webhook ? env[config.webhook.url_env] : undefined;
  const secret = config.webhook?.secret_env ? env[config.webhook.secret_env] : undefined;
  const password = config.email?.smtp.password_env ? env[config.email.smtp.password_env] : undefined;

  if (config.webhook) {
    const hook = config.webhook;
    sends.push({
      sink: `webhook ${hostOf(url) ?? `(${hook.url_env})`}`,
      send: async () => {
        if (!url || hostOf(url) === undefined) throw new Error(`${hook.url_env} is not set to an http(s) URL`);
        if (hook.secret_env && !secret) throw new Error(`${hook.secret_env} (the signing secret) is not set`);
        return withRetries(() => postWebhook(url, JSON.stringify(webhookBody(notice, hook.format)), secret, delivery), delivery);
      },
    });
  }
  if (config.email) {
    const mail = config.email;
    sends.push({
      sink: `email via ${mail.smtp.host} to ${mail.to.length} recipient${mail.to.length === 1 ? '' : 's'}`,
      send: async () => {
        if (mail.smtp.password_env && !password) throw new Error(`${mail.smtp.password_env} (the SMTP password) is not set`);
        const message = { subject: noticeTitle(notice), text: `${noticeLines(notice).join('\n')}\n` };
        return withRetries(() => sendEmail(mail, password, message, delivery), delivery);
      },
    });
  }

  const secrets = [url, secret, password];
  try {
    return await Promise.all(
      sends.map(async ({ sink, send }) => {
        try {
          const { attempts } = await send();
          context.logger?.info({ runId: report.runId, sink, events: matched }, 'notification sent');
          return `notified ${sink} (${matched.join(', ')})${attempts > 1 ? ` at attempt ${attempts}` : ''}.`;
        } catch (error) {
          const attempts = error instanceof Error && 'attempts' in error ? Number(error.attempts) : 1;
          const why = scrub(error instanceof Error ? error.message : String(error), secrets);
          context.logger?.warn({ runId: report.runId, sink, attempts, error: why }, 'notification failed');
          return `the notification by ${sink} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${why}. The run's outcome is unchanged.`;
        }
      }),
    );
  } finally {
    limits.release();
  }
}

/**
 * One signal for every attempt and wait of a run's alerts: it aborts when their ceiling is reached
 * or when the run is told to stop while they are sent. A run stopped before (an interrupted run,
 * whose alert says so) still gets its alerts, within the ceiling; a second signal exits the process.
 */
function alertLimits(context: NotifyContext): { signal: AbortSignal; release: () => void } {
  const totalMs = context.delivery?.totalMs ?? ALERTS_CEILING_MS;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`the alerts' time (${totalMs / 1000} s for all of them) ran out`)), totalMs);
  timer.unref();
  const run = context.signal;
  const onStop = () => controller.abort(new Error('the run was told to stop'));
  if (run && !run.aborted) run.addEventListener('abort', onStop, { once: true });
  return {
    signal: controller.signal,
    release: () => {
      clearTimeout(timer);
      run?.removeEventListener('abort', onStop);
    },
  };
}

function hostOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.host : undefined;
  } catch {
    return undefined;
  }
}

/** A library's message may quote what it was given: never let a secret through. */
function scrub(text: string, secrets: readonly (string | undefined)[]): string {
  return secrets.reduce<string>((out, secret) => (secret && secret.length >= 4 ? out.split(secret).join('(secret)') : out), text);
}
