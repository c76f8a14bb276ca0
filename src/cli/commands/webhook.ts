/**
 * `rostersync webhook serve | referees | send-test`: the receiving end of the service's
 * `mark_as_proposal_referee` webhook (docs/service-contract.md, The webhook).
 *
 * The webhook's key comes from `SERVICE_WEBHOOK_KEY` or `--key-file`, never a plain flag (it
 * would show in shell history and process lists). The store holds names and emails: mode 0600.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { isLoopback, urlForMessage } from '../../client/config.js';
import { EXIT, UserFacingError } from '../../errors/user-facing-error.js';
import { escapeFormula } from '../../report/rejected-csv.js';
import { DEFAULT_SELECTION_STORE, openSelectionStore, sendTestWebhook, startWebhookReceiver, type StoredSelection } from '../../webhook/index.js';
import type { CommandFactory } from '../command.js';
import { action } from '../command.js';
import type { CliIo } from '../io.js';
import { untilStopped } from '../until-stopped.js';
import { renderTable } from './manuscript.js';

export const DEFAULT_WEBHOOK_PORT = 8787;

interface WebhookArgs {
  port?: number;
  host?: string;
  store?: string;
  'key-file'?: string;
  'max-body-bytes'?: number;
  'origin-id'?: string;
  json?: boolean;
  csv?: boolean;
  url?: string;
  [flag: string]: unknown;
}

/** The webhook key: `--key-file` wins over `SERVICE_WEBHOOK_KEY`. */
export function resolveWebhookKey(io: CliIo, keyFile: string | undefined): string {
  if (keyFile !== undefined) {
    const path = resolve(io.cwd, keyFile);
    let key: string;
    try {
      key = readFileSync(path, 'utf8').trim();
    } catch (error) {
      throw new UserFacingError(`cannot read --key-file ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
    }
    if (key === '') throw new UserFacingError(`--key-file ${path} is empty`, { hint: 'Put only the webhook key in the file.' });
    return key;
  }
  const key = io.env.SERVICE_WEBHOOK_KEY?.trim();
  if (!key) {
    throw new UserFacingError('no webhook key', {
      hint: 'Set SERVICE_WEBHOOK_KEY or pass --key-file FILE (the key the service sends as api_key for this webhook URL).',
    });
  }
  return key;
}

const storeOption = {
  type: 'string',
  describe: `Store of referee selections: a SQLite file (default ${DEFAULT_SELECTION_STORE}, or $ROSTERSYNC_STATE_URL when set), a postgres:// URL shared by several receivers, or an earlier version's .json file`,
} as const;

export const webhookCommand: CommandFactory = (ctx) => ({
  command: 'webhook <action>',
  describe: 'Receive the referee-marking webhook and list the stored selections',
  builder: (yargs) =>
    yargs
      .command({
        command: 'serve',
        describe: 'Serve a webhook endpoint that stores marked referees per manuscript',
        builder: (y) =>
          y
            .option('port', { type: 'number', default: DEFAULT_WEBHOOK_PORT, describe: 'TCP port; 0 picks a free one' })
            .option('host', { type: 'string', default: '127.0.0.1', describe: 'Interface to bind' })
            .option('store', storeOption)
            .option('key-file', { type: 'string', describe: 'File holding only the webhook key (default: $SERVICE_WEBHOOK_KEY)' })
            .option('max-body-bytes', { type: 'number', default: 1024 * 1024, describe: 'Larger bodies are refused with 413' }),
        handler: action(ctx, async (args: WebhookArgs) => serve(ctx.io, args)),
      })
      .command({
        command: 'referees',
        describe: 'List the marked referees stored by `webhook serve`',
        builder: (y) =>
          y
            .option('store', storeOption)
            .option('origin-id', { type: 'string', describe: 'Only this manuscript' })
            .option('json', { type: 'boolean', default: false, describe: 'Print JSON' })
            .option('csv', { type: 'boolean', default: false, describe: 'Print CSV (one row per referee)' }),
        handler: action(ctx, async (args: WebhookArgs) => {
          if (args.json && args.csv) throw new UserFacingError('give --json or --csv, not both');
          const store = await openSelectionStore(args.store, { cwd: ctx.io.cwd, env: ctx.io.env });
          const selections = await store.list(args['origin-id']).finally(() => store.close());
          if (args.json) ctx.io.stdout.write(`${JSON.stringify(selections, null, 2)}\n`);
          else if (args.csv) ctx.io.stdout.write(renderRefereesCsv(selections));
          else ctx.io.stdout.write(renderReferees(selections));
          return EXIT.ok;
        }),
      })
      .command({
        command: 'send-test <url>',
        describe: 'Send the verification request (test: true) to a webhook URL',
        builder: (y) =>
          y
            .positional('url', { type: 'string', describe: 'Webhook URL' })
            .option('key-file', { type: 'string', describe: 'File holding only the webhook key (default: $SERVICE_WEBHOOK_KEY)' }),
        handler: action(ctx, async (args: WebhookArgs) => {
          const key = resolveWebhookKey(ctx.io, args['key-file']);
          const url = String(args.url);
          // Messages never echo `user:password@` of the URL.
          const shown = urlForMessage(url);
          let parsed: URL;
          try {
            parsed = new URL(url);
          } catch {
            throw new UserFacingError(`webhook URL "${shown}" is not a valid URL`, {
              hint: 'Give an absolute URL such as https://hooks.example.org/rostersync (a port, when given, is a number up to 65535).',
            });
          }
          // The webhook key travels in the body: the same https rule as the service's base URL.
          if (parsed.protocol === 'http:' && !isLoopback(parsed.hostname)) {
            throw new UserFacingError(`refusing plain http:// to ${parsed.hostname}: the webhook key would travel unencrypted`, {
              hint: 'Use an https:// URL; http:// is accepted only for loopback hosts (127.0.0.1, ::1, localhost).',
            });
          }
          let result;
          try {
            result = await sendTestWebhook(url, key);
          } catch (error) {
            throw new UserFacingError(`could not reach ${shown}: ${(error as Error).message}`, { exitCode: EXIT.unavailable, hint: 'Is the receiver running, and is the URL right?' });
          }
          ctx.io.stdout.write(`${shown} answered ${result.status}${result.bodySnippet ? `: ${result.bodySnippet}` : ''}\n`);
          if (result.status === 200) return EXIT.ok;
          return result.status === 401 || result.status === 403 ? EXIT.auth : EXIT.unavailable;
        }),
      }),
  handler: () => undefined,
});

async function serve(io: CliIo, args: WebhookArgs): Promise<number> {
  const apiKey = resolveWebhookKey(io, args['key-file']);
  const store = await openSelectionStore(args.store, { cwd: io.cwd, env: io.env });
  let receiver;
  try {
    receiver = await startWebhookReceiver({
      port: args.port ?? DEFAULT_WEBHOOK_PORT,
      host: args.host ?? '127.0.0.1',
      apiKey,
      store,
      maxBodyBytes: args['max-body-bytes'] ?? 1024 * 1024,
      // One line per request on stderr: no key, no names or emails.
      onRequest: (event) =>
        io.stderr.write(
          `webhook ${event.status} ${event.outcome}${event.manuscriptId !== undefined ? ` manuscript=${event.manuscriptId} order=${event.order}` : ''}${event.reason && event.outcome === 'rejected' ? ` (${event.reason})` : ''}\n`,
        ),
    });
  } catch (error) {
    await store.close();
    if (error instanceof UserFacingError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UserFacingError(`cannot start the webhook receiver: ${code === 'EADDRINUSE' ? `port ${args.port} is already in use` : (error as Error).message}`, {
      hint: 'Pick another --port (0 picks a free one), or check --host.',
      cause: error,
    });
  }
  io.stdout.write(`listening on ${receiver.url} (store: ${store.location})\n`);
  await untilStopped(io.signal);
  await receiver.close();
  await store.close();
  return EXIT.ok;
}


const REFEREE_COLUMNS = ['origin_id', 'manuscript_id', 'order', 'author_id', 'name', 'email', 'orcid', 'score', 'marked_by', 'groups'] as const;

function refereeRows(selections: readonly StoredSelection[]): string[][] {
  return selections.flatMap((s) =>
    s.referees.map((r) => [
      s.origin_id ?? '',
      String(s.manuscript_id),
      String(s.order),
      String(r.author_id),
      r.name,
      r.email ?? '',
      r.orcid ?? '',
      String(r.score),
      r.marked_by,
      r.authors_groups.map((g) => `${g.group_id}${g.client_id ? `:${g.client_id}` : ''}`).join(' '),
    ]),
  );
}

export function renderReferees(selections: readonly StoredSelection[]): string {
  if (selections.length === 0) return '(no referee selections stored)\n';
  const lines: string[] = [];
  for (const s of selections) {
    lines.push(`manuscript ${s.origin_id ?? '(no origin_id)'} (id ${s.manuscript_id}), event order ${s.order}: ${s.referees.length} referee${s.referees.length === 1 ? '' : 's'}`);
    if (s.referees.length > 0) {
      const rows = refereeRows([s]).map((row) => [row[3]!, row[4]!, row[5]! || '-', row[7]!, row[8]!, row[9]! || '-']);
      lines.push(renderTable(['author_id', 'name', 'email', 'score', 'marked_by', 'groups'], rows));
    }
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/** CSV (RFC 4180, CRLF) with cells Excel would run as formulas neutralised (docs/security-and-personal-data.md). */
export function renderRefereesCsv(selections: readonly StoredSelection[]): string {
  const cell = (text: string) => {
    const safe = escapeFormula(text);
    return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  return [REFEREE_COLUMNS.join(','), ...refereeRows(selections).map((row) => row.map(cell).join(','))].map((line) => `${line}\r\n`).join('');
}
