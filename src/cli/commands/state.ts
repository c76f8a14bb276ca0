/**
 * `rostersync state show|forget|import|set-group` and `rostersync unlock`: inspect and repair a
 * pipeline's inventory. None of these writes to the service.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { loadPipeline } from '../../config/load.js';
import { UserFacingError } from '../../errors.js';
import { adoptRecords } from '../../sync/adopt.js';
import { newRunId } from '../../sync/run-id.js';
import { holdLock } from '../../state/lock.js';
import { openState } from '../../state/paths.js';
import type { StateBackend } from '../../state/backend.js';
import { action, type CommandContext, type CommandFactory } from '../command.js';
import { connectService, withConnectionOptions } from '../service-options.js';

interface StateArgs {
  pipeline?: string;
  'client-id'?: string;
  'group-id'?: number;
  clear?: boolean;
  file?: string;
  json?: boolean;
  'state-dir'?: string;
  'base-url'?: string;
  'api-key-file'?: string;
  [flag: string]: unknown;
}

function withState<T>(ctx: CommandContext, args: StateArgs, body: (store: StateBackend, pipeline: ReturnType<typeof loadPipeline>) => Promise<T>): Promise<T> {
  const pipeline = loadPipeline(resolve(ctx.io.cwd, String(args.pipeline)));
  const store = openState(pipeline, { ...(args['state-dir'] ? { stateDir: args['state-dir'] } : {}), cwd: ctx.io.cwd });
  return body(store, pipeline).finally(() => store.close());
}

const pipelineArg = (y: Argv) =>
  y
    .positional('pipeline', { type: 'string', demandOption: true, describe: 'Pipeline file' })
    .option('state-dir', { type: 'string', describe: 'State directory (overrides state_dir)' });

export const stateCommand: CommandFactory = (ctx) => ({
  command: 'state <command>',
  describe: "Inspect or repair a pipeline's inventory (never writes to the service)",
  builder: (y: Argv) =>
    y
      .command({
        command: 'show <pipeline>',
        describe: 'Group, owned records, lock and recent runs',
        builder: (s: Argv) => pipelineArg(s).option('json', { type: 'boolean', default: false }),
        handler: action(ctx, async (args: StateArgs) =>
          withState(ctx, args, async (store) => {
            const summary = {
              pipeline: store.pipeline,
              path: store.path,
              groupId: store.groupId(),
              groupIntent: store.groupIntent(),
              serial: store.serial(),
              owned: store.ownedCount(),
              lock: store.readLock() ?? null,
              runs: store.recentRuns(10),
              records: store.listOwned(args.json ? Number.MAX_SAFE_INTEGER : 20).map((r) => ({ clientId: r.clientId, hash: r.hash, runId: r.runId, sourceRow: r.sourceRow })),
            };
            if (args.json) {
              ctx.io.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
              return 0;
            }
            const out = ctx.io.stdout;
            out.write(`pipeline   ${summary.pipeline}\nstate      ${summary.path} (serial ${summary.serial})\n`);
            out.write(`group      ${summary.groupId ?? '(not created yet)'}${summary.groupIntent ? `  ! creation of "${summary.groupIntent.name}" started ${summary.groupIntent.at} with unknown outcome` : ''}\n`);
            out.write(`owned      ${summary.owned} records\n`);
            out.write(`lock       ${summary.lock ? `${summary.lock.owner}@${summary.lock.host} pid ${summary.lock.pid} since ${summary.lock.startedAt} (heartbeat ${summary.lock.heartbeatAt})` : 'free'}\n`);
            out.write('recent runs:\n');
            for (const run of summary.runs) out.write(`  ${run.id}  ${run.dryRun ? 'dry ' : 'real'}  ${run.outcome ?? 'unfinished'}  valid=${run.validRecords ?? '-'}\n`);
            if (summary.owned > 0) {
              out.write(`first ${summary.records.length} owned client_ids:\n`);
              for (const record of summary.records) out.write(`  ${record.clientId}  (row ${record.sourceRow ?? '-'}, run ${record.runId})\n`);
            }
            return 0;
          }),
        ),
      })
      .command({
        command: 'forget <pipeline> <client-id>',
        describe: 'Drop one record from the inventory (the service keeps it; the pipeline no longer owns it)',
        builder: (s: Argv) => pipelineArg(s).positional('client-id', { type: 'string', demandOption: true }),
        handler: action(ctx, async (args: StateArgs) =>
          withState(ctx, args, async (store) => {
            const clientId = String(args['client-id']);
            if (!store.forget(clientId)) {
              throw new UserFacingError(`"${clientId}" is not in the inventory of pipeline "${store.pipeline}".`, { hint: 'List owned records with `rostersync state show`.' });
            }
            ctx.io.stdout.write(`forgot ${clientId}: the pipeline no longer owns it and will never delete it.\n`);
            return 0;
          }),
        ),
      })
      .command({
        command: 'import <pipeline>',
        describe: 'Adopt records that already exist in the group (a file of client_ids, one per line; each is fetched with GET)',
        builder: (s: Argv) =>
          withConnectionOptions(pipelineArg(s)).option('file', { type: 'string', demandOption: true, describe: 'File with one client_id per line' }),
        handler: action(ctx, async (args: StateArgs) =>
          withState(ctx, args, async (store, pipeline) => {
            const text = await readFile(resolve(ctx.io.cwd, String(args.file)), 'utf8').catch((error: Error) => {
              throw new UserFacingError(`cannot read ${String(args.file)}: ${error.message}`, { hint: 'Give a text file with one client_id per line.' });
            });
            const clientIds = [...new Set(text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line && !line.startsWith('#')))];
            const runId = newRunId(Date.now());
            const unlock = holdLock(store, runId);
            try {
              const result = await adoptRecords({ pipeline, store, client: connectService(args, ctx.io).client, clientIds, runId });
              ctx.io.stdout.write(`adopted ${result.adopted.length} records into the inventory of "${pipeline.name}".\n`);
              if (result.notFound.length > 0) {
                ctx.io.stdout.write(`not in the group (skipped): ${result.notFound.length}: ${result.notFound.slice(0, 20).join(', ')}${result.notFound.length > 20 ? ', ...' : ''}\n`);
              }
              return result.notFound.length > 0 ? 2 : 0;
            } finally {
              unlock();
            }
          }),
        ),
      })
      .command({
        command: 'set-group <pipeline> [group-id]',
        describe: 'Record the target group id by hand (after an ambiguous group creation), or --clear the creation intent',
        builder: (s: Argv) =>
          pipelineArg(s)
            .positional('group-id', { type: 'number', describe: 'The group id shown in the service UI' })
            .option('clear', { type: 'boolean', default: false, describe: 'Forget an unfinished group creation (the group does not exist)' }),
        handler: action(ctx, async (args: StateArgs) =>
          withState(ctx, args, async (store) => {
            if (args.clear) {
              store.clearGroupIntent();
              ctx.io.stdout.write('cleared the group creation intent; the next run creates the group.\n');
              return 0;
            }
            const groupId = Number(args['group-id']);
            if (!Number.isInteger(groupId) || groupId <= 0) {
              throw new UserFacingError('set-group needs the group id (a positive integer) or --clear.', { hint: 'rostersync state set-group pipelines/x.yaml 42' });
            }
            store.setGroupId(groupId);
            ctx.io.stdout.write(`pipeline "${store.pipeline}" now targets group ${groupId}.\n`);
            return 0;
          }),
        ),
      })
      .demandCommand(1, 'Name a state command: show, forget, import or set-group.'),
  handler: () => {},
});

export const unlockCommand: CommandFactory = (ctx) => ({
  command: 'unlock <pipeline>',
  describe: 'Clear the lock of a pipeline whose run died (check that no run is still going first)',
  builder: (y: Argv) => pipelineArg(y),
  handler: action(ctx, async (args: StateArgs) =>
    withState(ctx, args, async (store) => {
      const removed = store.forceUnlock();
      if (!removed) {
        ctx.io.stdout.write(`pipeline "${store.pipeline}" was not locked.\n`);
        return 0;
      }
      const stale = store.isStale(removed) ? 'stale' : 'NOT stale (its owner may still be running)';
      ctx.io.stdout.write(`removed the lock of run ${removed.runId}: ${removed.owner}@${removed.host} pid ${removed.pid} since ${removed.startedAt}; it was ${stale}.\n`);
      return 0;
    }),
  ),
});
