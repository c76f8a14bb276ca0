/**
 * `rostersync state show|forget|import|set-group` and `rostersync unlock`: inspect and repair a
 * pipeline's inventory. None of these writes to the service.
 */
import { closeSync, fchmodSync, openSync, readFileSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { checkBaseUrl } from '../../client/config.js';
import { loadPipeline } from '../../config/load.js';
import { UserFacingError } from '../../errors/user-facing-error.js';
import { adoptRecords } from '../../sync/adopt.js';
import { newRunId } from '../../sync/run-id.js';
import { holdLock } from '../../state/lock.js';
import { retargetState } from '../../state/binding.js';
import { openState } from '../../state/open.js';
import type { StateBackend } from '../../state/backend.js';
import { connectState, LATEST_PG_VERSION, migrate, sharedStateUrl } from '../../state/shared-database.js';
import type { StateStoreOptions } from '../../state/backend.js';
import { exportState, importState } from '../../state/transfer.js';
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

/** What a state command does with the pipeline's opened state. */
type StateBody<T> = (store: StateBackend, pipeline: ReturnType<typeof loadPipeline>) => Promise<T>;

function withState<T>(ctx: CommandContext, args: StateArgs, body: StateBody<T>, storeOptions: StateStoreOptions = {}): Promise<T> {
  const pipeline = loadPipeline(resolve(ctx.io.cwd, String(args.pipeline)));
  const store = openState(pipeline, { ...(args['state-dir'] ? { stateDir: args['state-dir'] } : {}), cwd: ctx.io.cwd, env: ctx.io.env }, storeOptions);
  return body(store, pipeline).finally(() => store.close());
}

/**
 * `withState` under the pipeline's lock, the one a run holds: a command that changes the state
 * (or reads it whole, as export does) never interleaves with a run, which would go on recording
 * its writes into a state that was moved under it. Refused, naming the holder, while a run goes.
 */
function withLockedState<T>(ctx: CommandContext, args: StateArgs, body: StateBody<T>, storeOptions: StateStoreOptions = {}): Promise<T> {
  return withState(
    ctx,
    args,
    async (store, pipeline) => {
      const unlock = holdLock(store, newRunId(Date.now()));
      try {
        return await body(store, pipeline);
      } finally {
        unlock();
      }
    },
    storeOptions,
  );
}

const stateDirOption = { type: 'string', describe: 'State directory (overrides state_dir)' } as const;

const pipelineArg = (y: Argv) =>
  y.positional('pipeline', { type: 'string', demandOption: true, describe: 'Pipeline file' }).option('state-dir', stateDirOption);

/** The state subcommands, in the order `--help` lists them; each declares its flags and its handler. */
const STATE_SUBCOMMANDS: readonly CommandFactory[] = [
  (ctx) => ({
    command: 'show <pipeline>',
    describe: 'Group, owned records, lock and recent runs',
    builder: (s: Argv) => pipelineArg(s).option('json', { type: 'boolean', default: false }),
    handler: action(ctx, (args: StateArgs) => withState(ctx, args, async (store) => showState(ctx, store, Boolean(args.json)))),
  }),
  (ctx) => ({
    command: 'forget <pipeline> <client-id>',
    describe: 'Drop one record from the inventory (the service keeps it; the pipeline no longer owns it)',
    builder: (s: Argv) => pipelineArg(s).positional('client-id', { type: 'string', demandOption: true }),
    handler: action(ctx, (args: StateArgs) => withLockedState(ctx, args, async (store) => forgetRecord(ctx, store, String(args['client-id'])))),
  }),
  (ctx) => ({
    command: 'import <pipeline>',
    describe: 'Adopt records that already exist in the group (--file: client_ids, one per line, each fetched with GET), or load a `state export` (--jsonl: no call to the service)',
    builder: (s: Argv) =>
      withConnectionOptions(pipelineArg(s))
        .option('file', { type: 'string', describe: 'File with one client_id per line' })
        .option('jsonl', { type: 'string', describe: 'A `rostersync state export` file, loaded into this (empty) state' })
        .conflicts('file', 'jsonl')
        .check((a) => (a.file !== undefined || a.jsonl !== undefined ? true : 'give --file (client_ids to adopt) or --jsonl (a state export)')),
    handler: action(ctx, (args: StateArgs) => (args.jsonl !== undefined ? importExport(ctx, args) : adoptListed(ctx, args))),
  }),
  (ctx) => ({
    command: 'export <pipeline>',
    describe: "Write the pipeline's whole state as JSON lines (to move it to another backend with `state import --jsonl`)",
    builder: (s: Argv) => pipelineArg(s).option('out', { type: 'string', describe: 'File to write (mode 0600); default: standard output' }),
    handler: action(ctx, (args: StateArgs) =>
      withLockedState(ctx, args, async (store) => exportToFileOrStdout(ctx, store, typeof args.out === 'string' ? resolve(ctx.io.cwd, args.out) : undefined)),
    ),
  }),
  (ctx) => ({
    command: 'migrate [pipeline]',
    describe: "Bring the shared PostgreSQL state database's schema up to date (ROSTERSYNC_STATE_URL, or the pipeline's `state:`)",
    builder: (s: Argv) =>
      s
        .positional('pipeline', { type: 'string', describe: 'Pipeline file whose `state:` names the database (not needed with ROSTERSYNC_STATE_URL)' })
        .option('state-dir', stateDirOption),
    handler: action(ctx, (args: StateArgs) => migrateState(ctx, args)),
  }),
  (ctx) => ({
    command: 'set-group <pipeline> [group-id]',
    describe: 'Record the target group id by hand (after an ambiguous group creation or a lost state), or --clear the creation intent',
    builder: (s: Argv) =>
      pipelineArg(s)
        .positional('group-id', { type: 'number', describe: 'The group id shown in the service UI' })
        .option('clear', { type: 'boolean', default: false, describe: 'Forget an unfinished group creation (the group does not exist)' })
        .option('release-owned', { type: 'boolean', default: false, describe: 'Move a state that owns records to another group; they stay behind, no longer owned' }),
    handler: action(ctx, (args: StateArgs) => withLockedState(ctx, args, async (store) => setGroup(ctx, store, args))),
  }),
  (ctx) => ({
    command: 'rebind <pipeline>',
    describe: 'Bind the state to another service (and group): after a move from staging to production, say',
    builder: (s: Argv) =>
      pipelineArg(s)
        .option('base-url', { type: 'string', demandOption: true, describe: 'The service the state is to be used against from now on' })
        .option('group-id', { type: 'number', describe: 'The group on that service (default: the same id)' })
        .option('release-owned', { type: 'boolean', default: false, describe: 'Let the owned records go (they stay behind, no longer owned); needed when the state owns records' }),
    handler: action(ctx, (args: StateArgs) =>
      withLockedState(ctx, args, async (store) => {
        // Checked as a run checks it: a URL the next run would refuse is refused now.
        const to = { baseUrl: checkBaseUrl(String(args['base-url'])), ...(args['group-id'] !== undefined ? { groupId: Number(args['group-id']) } : {}) };
        ctx.io.stdout.write(`${retargetState(store, to, { releaseOwned: args['release-owned'] === true })}\n`);
        return 0;
      }),
    ),
  }),
];

export const stateCommand: CommandFactory = (ctx) => ({
  command: 'state <command>',
  describe: "Inspect or repair a pipeline's inventory (never writes to the service)",
  builder: (y: Argv) =>
    STATE_SUBCOMMANDS.reduce((parent, subcommand) => parent.command(subcommand(ctx)), y).demandCommand(
      1,
      'Name a state command: show, forget, import, export, migrate, set-group or rebind.',
    ),
  handler: () => {},
});

/** `state show`: the group, the owned records, the lock and the recent runs, as text or (--json) whole. */
function showState(ctx: CommandContext, store: StateBackend, json: boolean): number {
  const identity = store.identity();
  const summary = {
    pipeline: store.pipeline,
    path: store.path,
    service: identity.baseUrl,
    groupId: store.groupId(),
    groupCreatedHere: identity.groupCreatedHere,
    ...(identity.groupName !== null ? { groupName: identity.groupName } : {}),
    groupIntent: store.groupIntent(),
    serial: store.serial(),
    owned: store.ownedCount(),
    lock: store.readLock() ?? null,
    runs: store.recentRuns(10),
    // The text lists a screenful; --json is for scripts, which get every record.
    records: store.listOwned(json ? Number.MAX_SAFE_INTEGER : 20).map((r) => ({ clientId: r.clientId, hash: r.hash, runId: r.runId, sourceRow: r.sourceRow })),
  };
  const out = ctx.io.stdout;
  if (json) {
    out.write(`${JSON.stringify(summary, null, 2)}\n`);
    return 0;
  }
  out.write(`pipeline   ${summary.pipeline}\nstate      ${summary.path} (serial ${summary.serial})\n`);
  out.write(`service    ${summary.service ?? '(not bound yet: the first real run binds it)'}\n`);
  out.write(`group      ${summary.groupId ?? '(not created yet)'}${summary.groupName !== undefined ? ` "${summary.groupName}"` : ''}${summary.groupCreatedHere ? ' (created by this pipeline)' : ''}${summary.groupIntent ? `  ! creation of "${summary.groupIntent.name}" started ${summary.groupIntent.at} with unknown outcome` : ''}\n`);
  out.write(`owned      ${summary.owned} records\n`);
  out.write(`lock       ${summary.lock ? `${summary.lock.owner}@${summary.lock.host} pid ${summary.lock.pid} since ${summary.lock.startedAt} (heartbeat ${summary.lock.heartbeatAt})` : 'free'}\n`);
  out.write('recent runs:\n');
  for (const run of summary.runs) out.write(`  ${run.id}  ${run.dryRun ? 'dry ' : 'real'}  ${run.outcome ?? 'unfinished'}  valid=${run.validRecords ?? '-'}\n`);
  if (summary.owned > 0) {
    out.write(`first ${summary.records.length} owned client_ids:\n`);
    for (const record of summary.records) out.write(`  ${record.clientId}  (row ${record.sourceRow ?? '-'}, run ${record.runId})\n`);
  }
  return 0;
}

/** `state forget`: the service keeps the record; the pipeline no longer owns it, so never deletes it. */
function forgetRecord(ctx: CommandContext, store: StateBackend, clientId: string): number {
  if (!store.forget(clientId)) {
    throw new UserFacingError(`"${clientId}" is not in the inventory of pipeline "${store.pipeline}".`, { hint: 'List owned records with `rostersync state show`.' });
  }
  ctx.io.stdout.write(`forgot ${clientId}: the pipeline no longer owns it and will never delete it.\n`);
  return 0;
}

/**
 * `state import --file`: adopts the listed client_ids that are in the group, under the lock.
 * Exit 2 when some were skipped (not in the group, or owned by another pipeline): a partial adoption.
 */
function adoptListed(ctx: CommandContext, args: StateArgs): Promise<number> {
  return withLockedState(ctx, args, async (store, pipeline) => {
    const text = readInputFile(ctx, String(args.file), 'Give a text file with one client_id per line.');
    const clientIds = [...new Set(text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line && !line.startsWith('#')))];
    const service = connectService(args, ctx.io);
    const result = await adoptRecords({ pipeline, store, client: service.client, baseUrl: service.config.baseUrl, clientIds, runId: newRunId(Date.now()) });
    ctx.io.stdout.write(`adopted ${result.adopted.length} records into the inventory of "${pipeline.name}".\n`);
    if (result.claimedElsewhere.size > 0) {
      ctx.io.stdout.write(`owned by another pipeline (skipped): ${[...result.claimedElsewhere].slice(0, 20).map(([id, owner]) => `${id} (${owner})`).join(', ')}\n`);
    }
    if (result.notFound.length > 0) {
      ctx.io.stdout.write(`not in the group (skipped): ${result.notFound.length}: ${result.notFound.slice(0, 20).join(', ')}${result.notFound.length > 20 ? ', ...' : ''}\n`);
    }
    return result.notFound.length > 0 || result.claimedElsewhere.size > 0 ? 2 : 0;
  });
}

/** `state export`: the whole state as JSON lines, to `out` (mode 0600) or to standard output. */
function exportToFileOrStdout(ctx: CommandContext, store: StateBackend, out: string | undefined): number {
  const fd = out ? openSync(out, 'w', 0o600) : undefined;
  try {
    // It holds the last-applied fields, emails included: owner-only, like every report,
    // also when the file existed before with a wider mode (open keeps that mode).
    if (fd !== undefined) fchmodSync(fd, 0o600);
    const counts = exportState(store, (line) => (fd === undefined ? ctx.io.stdout.write(line) : writeSync(fd, line)));
    if (out) ctx.io.stdout.write(`exported ${counts.records} records, ${counts.unfinished} unfinished writes and ${counts.runs} runs of "${store.pipeline}" to ${out}.\n`);
    return 0;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** `state migrate`: the shared PostgreSQL database's schema; a SQLite state needs nothing. */
async function migrateState(ctx: CommandContext, args: StateArgs): Promise<number> {
  const pipeline = args.pipeline === undefined ? undefined : loadPipeline(resolve(ctx.io.cwd, String(args.pipeline)));
  const shared = pipeline ? sharedStateUrl(pipeline, ctx.io.env) : sharedStateUrl({ file: '(no pipeline)', config: {} }, ctx.io.env);
  if (!shared && !pipeline) {
    throw new UserFacingError('state migrate needs the database: set ROSTERSYNC_STATE_URL, or name a pipeline file whose `state:` names it.', {
      hint: 'ROSTERSYNC_STATE_URL=postgres://user@host:5432/db PGPASSWORD=... rostersync state migrate',
    });
  }
  if (!shared) {
    // SQLite migrates its own file on open: it belongs to one pipeline on one host.
    return withState(ctx, args, async (store) => {
      ctx.io.stdout.write(`the state of "${store.pipeline}" is SQLite (${store.path}); it is migrated when opened, nothing to do.\n`);
      return 0;
    });
  }
  const connection = connectState(shared.url, shared, { env: ctx.io.env });
  try {
    const result = migrate(connection);
    if (result.applied.length === 0) ctx.io.stdout.write(`${connection.label}: schema already at version ${LATEST_PG_VERSION}.\n`);
    for (const step of result.applied) ctx.io.stdout.write(`${connection.label}: applied migration ${step.version}: ${step.description}\n`);
    return 0;
  } finally {
    connection.close();
  }
}

/** `state set-group`: the group id by hand, or (--clear) forget a group creation of unknown outcome. */
function setGroup(ctx: CommandContext, store: StateBackend, args: StateArgs): number {
  if (args.clear) {
    store.clearGroupIntent();
    ctx.io.stdout.write('cleared the group creation intent; the next run with --create-group creates the group.\n');
    return 0;
  }
  const groupId = Number(args['group-id']);
  if (!Number.isInteger(groupId) || groupId <= 0) {
    throw new UserFacingError('set-group needs the group id (a positive integer) or --clear.', { hint: 'rostersync state set-group pipelines/x.yaml 42' });
  }
  ctx.io.stdout.write(`${retargetState(store, { groupId }, { releaseOwned: args['release-owned'] === true })}\n`);
  return 0;
}

/** `state import --jsonl`: loads an export into this pipeline's (empty) state, under its lock. */
function importExport(ctx: CommandContext, args: StateArgs): Promise<number> {
  const text = readInputFile(ctx, String(args.jsonl), 'Give the file `rostersync state export` wrote.');
  const clock = { at: Date.now() };
  return withLockedState(
    ctx,
    args,
    async (store) => {
      const counts = importState(store, clock, text, String(args.jsonl));
      ctx.io.stdout.write(`imported ${counts.records} records, ${counts.unfinished} unfinished writes and ${counts.runs} runs into the state of "${store.pipeline}" (${store.path}).\n`);
      return 0;
    },
    { now: () => clock.at },
  );
}

/** A file named on the command line (relative to the working directory), or a message naming it. */
function readInputFile(ctx: CommandContext, name: string, hint: string): string {
  try {
    return readFileSync(resolve(ctx.io.cwd, name), 'utf8');
  } catch (error) {
    throw new UserFacingError(`cannot read ${name}: ${(error as Error).message}`, { hint });
  }
}

export const unlockCommand: CommandFactory = (ctx) => ({
  command: 'unlock <pipeline>',
  describe: 'Clear the lock of a pipeline whose run died (check that no run is still going first)',
  builder: (y: Argv) => pipelineArg(y),
  handler: action(ctx, async (args: StateArgs) =>
    withState(ctx, args, async (store) => {
      // Judged before removing: on PostgreSQL, removing ends the holder's session.
      const held = store.readLock();
      const wasStale = held === undefined || store.isStale(held);
      const removed = store.forceUnlock();
      if (!removed) {
        ctx.io.stdout.write(`pipeline "${store.pipeline}" was not locked.\n`);
        return 0;
      }
      const stale = wasStale ? 'stale' : 'NOT stale (its owner may still be running)';
      ctx.io.stdout.write(`removed the lock of run ${removed.runId}: ${removed.owner}@${removed.host} pid ${removed.pid} since ${removed.startedAt}; it was ${stale}.\n`);
      return 0;
    }),
  ),
});
