/**
 * Alerts end to end: real syncs against the emulator over HTTP, a real local HTTP receiver and a
 * real local SMTP server. Outcomes × sinks, the three webhook formats with their HMAC signature,
 * and receivers that are down, slow or answer 500 (the run's outcome never changes).
 */
import { createHmac } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { DeliveryOptions } from '../../src/notify/deliver.js';
import type { RunReport } from '../../src/report/types.js';
import { runSync } from '../../src/sync/run-sync.js';
import { outputSink } from '../support/cli.js';
import { API_KEY, emulator, makeProject, people, person, type Project } from '../support/project.js';
import { startHttpReceiver, startSmtpReceiver, type HttpReceiver, type SmtpReceiver } from './receivers.js';

const HMAC_SECRET = 'hmac-secret-5678';
const SMTP_PASSWORD = 'smtp-password-1234';
const FAST: DeliveryOptions = { attempts: 3, baseDelayMs: 5, timeoutMs: 400 };

let emu: RunningEmulator;
let hook: HttpReceiver;
let smtp: SmtpReceiver;
beforeEach(async () => {
  [emu, hook, smtp] = await Promise.all([emulator(), startHttpReceiver(), startSmtpReceiver()]);
});
afterEach(async () => {
  await Promise.all([emu.close(), hook.close(), smtp.close()]);
});

function notifyBlock(options: { on?: string[]; format?: string; email?: boolean; webhook?: boolean } = {}): string {
  return [
    'notify:',
    ...(options.on ? [`  on: [${options.on.join(', ')}]`] : []),
    '  report_url: https://reports.example.org/{pipeline}/{run_id}/report.html',
    ...(options.webhook === false ? [] : ['  webhook:', '    url_env: TEST_WEBHOOK_URL', '    secret_env: TEST_WEBHOOK_SECRET', `    format: ${options.format ?? 'json'}`]),
    ...(options.email === false
      ? []
      : ['  email:', `    smtp: { host: 127.0.0.1, port: ${smtp.port}, user: rostersync, password_env: TEST_SMTP_PASSWORD, allow_plaintext: true }`, '    from: rostersync@example.org', '    to: [office@example.org, lead@example.org]']),
    '',
  ].join('\n');
}

async function addNotify(project: Project, block: string): Promise<void> {
  await writeFile(project.pipeline, `${await readFile(project.pipeline, 'utf8')}${block}`);
}

interface Ran {
  exitCode: number;
  report: RunReport;
  files: string;
  log: string;
}

let runs = 0;
/** One sync through the library, as the CLI makes it; an error still leaves its report in reportDir. */
async function sync(project: Project, options: { apiKey?: string; delivery?: DeliveryOptions } = {}): Promise<Ran> {
  const reportDir = join(project.dir, `run-${++runs}`);
  const sink = outputSink();
  const logger = pino({ level: 'info' }, sink.stream);
  let exitCode: number;
  try {
    exitCode = (
      await runSync({
        pipelinePath: project.pipeline,
        service: { baseUrl: emu.url, apiKey: options.apiKey ?? API_KEY },
        reportDir,
        createGroup: true,
        env: { TEST_WEBHOOK_URL: hook.url, TEST_WEBHOOK_SECRET: HMAC_SECRET, TEST_SMTP_PASSWORD: SMTP_PASSWORD },
        logger,
        notify: options.delivery ?? FAST,
      })
    ).exitCode;
  } catch (error) {
    exitCode = (error as { exitCode: number }).exitCode;
  }
  const read = (name: string) => readFile(join(reportDir, name), 'utf8');
  const files = (await Promise.all(['report.json', 'report.md', 'report.html'].map(read))).join('\n');
  return { exitCode, report: JSON.parse(await read('report.json')) as RunReport, files, log: sink.text() };
}

/** Makes a project whose next sync ends with the given outcome. */
const SCENARIOS = {
  success: { exit: 0, events: ['success'], setup: async () => makeProject(people(5)) },
  refused: {
    exit: 3,
    events: ['refused'],
    setup: async () => {
      const project = await makeProject(people(20), { mode: 'mirror', guards: { max_deletes: 2 } });
      await sync(project);
      await project.writeRoster(people(15));
      return project;
    },
  },
  rejects: { exit: 2, events: ['rejects'], setup: async () => makeProject([...people(5), person(6, { orcid: '0000-0002-1825-0098' })]) },
  drift: {
    exit: 0,
    events: ['drift', 'success'],
    setup: async () => {
      const project = await makeProject(people(4));
      await writeFile(project.pipeline, `${await readFile(project.pipeline, 'utf8')}  drift_sample: 4\n`);
      await sync(project);
      // This project's group: the newest one.
      const group = [...emu.world.orgs[0]!.groups.values()].at(-1)!;
      expect((await fetch(`${emu.url}/_emulator/ui/groups/${group.id}/records/p2`, { method: 'DELETE' })).status).toBe(200);
      return project;
    },
  },
  failure: { exit: 4, events: ['failure'], setup: async () => makeProject(people(5)), apiKey: 'wrong-key-000000' },
} as const;

describe('notify', () => {
  it.each(Object.entries(SCENARIOS))('%s: notifies the webhook and by email when listed in `on`, and by default only on failure and refused', async (_name, scenario) => {
    const defaults = await scenario.setup();
    await addNotify(defaults, notifyBlock());
    const first = await sync(defaults, 'apiKey' in scenario ? { apiKey: scenario.apiKey } : {});
    expect(first.exitCode).toBe(scenario.exit);
    const byDefault = scenario.events.some((event) => event === 'failure' || event === 'refused');
    expect(hook.posts).toHaveLength(byDefault ? 1 : 0);
    expect(smtp.mails).toHaveLength(byDefault ? 1 : 0);

    const listed = await scenario.setup();
    await addNotify(listed, notifyBlock({ on: [...scenario.events] }));
    const before = { posts: hook.posts.length, mails: smtp.mails.length };
    const run = await sync(listed, 'apiKey' in scenario ? { apiKey: scenario.apiKey } : {});
    expect(run.exitCode).toBe(scenario.exit);
    expect(hook.posts.length - before.posts).toBe(1);
    expect(smtp.mails.length - before.mails).toBe(1);

    const post = hook.posts.at(-1)!;
    const notice = JSON.parse(post.body) as Record<string, unknown>;
    expect(notice).toMatchObject({ type: 'rostersync.run', events: scenario.events, pipeline: 'pipeline', runId: run.report.runId, outcome: run.report.outcome, exitCode: scenario.exit });
    expect(notice.report).toEqual({ path: expect.stringContaining(`run-${runs}`), url: `https://reports.example.org/pipeline/${run.report.runId}/report.html` });
    expect(post.headers['x-rostersync-signature-256']).toBe(`sha256=${createHmac('sha256', HMAC_SECRET).update(post.body).digest('hex')}`);

    const mail = smtp.mails.at(-1)!;
    expect(mail).toMatchObject({ from: 'rostersync@example.org', to: ['office@example.org', 'lead@example.org'], user: 'rostersync' });
    expect(mail.subject).toBe(`rostersync · pipeline: ${String(notice.outcomeText)} (exit ${scenario.exit})`);
    expect(mail.text).toContain(`report: https://reports.example.org/pipeline/${run.report.runId}/report.html`);
    // Noted in the report; the secrets never.
    expect(run.report.notes).toEqual(expect.arrayContaining([expect.stringMatching(/^notified webhook 127\.0\.0\.1:\d+ /), expect.stringMatching(/^notified email via 127\.0\.0\.1 to 2 recipients/)]));
    for (const text of [run.files, run.log]) for (const secret of [HMAC_SECRET, SMTP_PASSWORD, 'secret-path-token']) expect(text).not.toContain(secret);
  });

  it.each([
    ['json', { type: 'rostersync.run', outcomeText: 'done', counts: { creates: 5 } }],
    ['slack', { text: expect.stringMatching(/^\*rostersync · pipeline: done \(exit 0\)\*\n5 created · 0 updated/) }],
    [
      'teams',
      {
        attachments: [
          {
            contentType: 'application/vnd.microsoft.card.adaptive',
            content: {
              body: expect.arrayContaining([expect.objectContaining({ type: 'TextBlock', text: 'rostersync · pipeline: done (exit 0)' })]),
              actions: [expect.objectContaining({ url: expect.stringMatching(/^https:\/\/reports\.example\.org\/pipeline\//) })],
            },
          },
        ],
      },
    ],
  ] as const)('the %s format', async (format, expected) => {
    const project = await makeProject(people(5));
    await addNotify(project, notifyBlock({ on: ['success'], format, email: false }));
    expect((await sync(project)).exitCode).toBe(0);
    expect(hook.posts).toHaveLength(1);
    expect(JSON.parse(hook.posts[0]!.body)).toMatchObject(expected);
  });

  it.each([
    ['down', (): Promise<void> => hook.close(), 3, /cannot connect \(ECONNREFUSED\)/],
    ['slow', async (): Promise<void> => void (hook.mode = 'hang'), 3, /no complete answer within 0\.4 s/],
    ['answering 500', async (): Promise<void> => void (hook.mode = 'error500'), 3, /HTTP 500/],
  ] as const)('a receiver that is %s: retried briefly, logged and noted; the outcome and exit code are unchanged', async (_name, breakIt, attempts, why) => {
    const project = await makeProject(people(5));
    await addNotify(project, notifyBlock({ on: ['success'] }));
    await breakIt();
    const run = await sync(project);
    expect(run.exitCode).toBe(0);
    expect(run.report).toMatchObject({ outcome: 'success', exitCode: 0 });
    const note = run.report.notes.find((n) => n.startsWith('the notification by webhook'));
    expect(note).toMatch(new RegExp(`^the notification by webhook 127\\.0\\.0\\.1:\\d+ failed after ${attempts} attempts: ${why.source}\\. The run's outcome is unchanged\\.$`));
    expect(run.log).toContain('notification failed');
    // The mail still went out.
    expect(smtp.mails).toHaveLength(1);
    for (const text of [run.files, run.log]) for (const secret of [HMAC_SECRET, SMTP_PASSWORD, 'secret-path-token']) expect(text).not.toContain(secret);
  });

  it('a receiver that answers 500 once is delivered at the second attempt', async () => {
    const project = await makeProject(people(5));
    await addNotify(project, notifyBlock({ on: ['success'], email: false }));
    hook.mode = 'error500';
    const waits: number[] = [];
    const run = await sync(project, { delivery: { ...FAST, sleep: async (ms) => void (waits.push(ms), (hook.mode = 'ok')) } });
    expect(run.exitCode).toBe(0);
    expect(hook.posts).toHaveLength(2);
    expect(waits).toEqual([5]);
    expect(run.report.notes).toContainEqual(expect.stringMatching(/^notified webhook 127\.0\.0\.1:\d+ \(success\) at attempt 2\.$/));
  });

  it('an SMTP login refused is not retried, and noted without the password', async () => {
    const project = await makeProject(people(5));
    await addNotify(project, notifyBlock({ on: ['success'], webhook: false }).replace('password_env: TEST_SMTP_PASSWORD', 'password_env: TEST_WEBHOOK_SECRET'));
    const run = await sync(project);
    expect(run.exitCode).toBe(0);
    expect(run.report.notes).toContainEqual(expect.stringMatching(/^the notification by email via 127\.0\.0\.1 to 2 recipients failed after 1 attempt: the SMTP server refused the login \(535\)\./));
    expect(smtp.mails).toHaveLength(0);
    expect(run.files).not.toContain(HMAC_SECRET);
  });

  it('a report that falls back to another folder: the notice names the folder it really is in', async () => {
    const project = await makeProject(people(5));
    await addNotify(project, notifyBlock({ on: ['success'], email: false }));
    // roster.csv is a file: no report folder can be made under it (as root too).
    const run = await runSync({
      pipelinePath: project.pipeline,
      service: { baseUrl: emu.url, apiKey: API_KEY },
      reportDir: join(project.dir, 'roster.csv', 'report'),
      createGroup: true,
      env: { TEST_WEBHOOK_URL: hook.url, TEST_WEBHOOK_SECRET: HMAC_SECRET },
      notify: FAST,
    });
    try {
      expect(run.exitCode).toBe(0);
      expect(run.written.warnings[0]).toContain(`It was written to ${run.written.dir} instead.`);
      expect(JSON.parse(hook.posts[0]!.body)).toMatchObject({ report: { path: run.written.dir } });
      // notify.report_url leads to where reports are published, which this one is not.
      expect(JSON.parse(hook.posts[0]!.body).report.url).toBeUndefined();
      expect(JSON.parse(await readFile(join(run.written.dir, 'report.json'), 'utf8'))).toMatchObject({ runId: run.report.runId });
    } finally {
      await rm(run.written.dir, { recursive: true, force: true });
    }
  });

  it('a dry run never notifies', async () => {
    const project = await makeProject(people(5));
    await addNotify(project, notifyBlock({ on: ['success', 'failure'] }));
    const run = await runSync({ pipelinePath: project.pipeline, service: { baseUrl: emu.url, apiKey: API_KEY }, reportDir: join(project.dir, 'dry'), dryRun: true, createGroup: true, env: { TEST_WEBHOOK_URL: hook.url }, notify: FAST });
    expect(run.exitCode).toBe(0);
    expect(hook.posts).toHaveLength(0);
    expect(smtp.mails).toHaveLength(0);
  });
});
