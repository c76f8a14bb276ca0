/**
 * Apply: the only module of a run that writes to the service (and, with it, the inventory).
 * This file writes the plan's records; group.ts creates the target group when there is none.
 *
 * Every outcome is journaled the moment it is known: an operation
 * is journaled `sent` before its call and `done` or `failed` after, and a successful write
 * updates the inventory in the same transaction. A kill at any point leaves the inventory
 * claiming only writes that happened; the next run replans the rest, and record writes and
 * deletes are idempotent, so at worst one write is repeated.
 */
import { NotFoundError, ServiceError } from '../client/errors.js';
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';
import { recordChangeOf, type Fields, type Plan, type PlanItem } from '../plan/types.js';
import { DONE_FIRST_TIME, type ApplyResult, type ItemOutcome, type Overwritten } from '../plan/outcomes.js';
import { isEmptyValue } from '../plan/build.js';
import type { RowKeyRepairs } from '../plan/row-key-repairs.js';
import type { StateBackend } from '../state/backend.js';
import { undoRecordAfter, undoRecordFromRead, undoRecordOf, type HeldRecord, type UndoRecord } from './undo-record.js';

/** Per-call options apply passes: the service client reports the attempts a success took. */
export interface WriteOptions {
  onSucceeded?: (attempts: number) => void;
}

/** The three record writes apply needs, and the read before some of them; the service client implements them. */
export interface RecordWriter {
  /**
   * Reads a record before a create-if-absent (so an adoption can name the values it replaces) and
   * before sending fields to write only where it holds no value (`PlanItem.ifEmpty`).
   */
  getAuthor?(groupId: number, clientId: string): Promise<object>;
  putAuthor(groupId: number, clientId: string, body: Fields, options?: WriteOptions): Promise<unknown>;
  patchAuthor(groupId: number, clientId: string, body: Fields, options?: WriteOptions): Promise<unknown>;
  deleteAuthor(groupId: number, clientId: string, options?: WriteOptions): Promise<unknown>;
}

/** What one planned write did beyond being written (see ItemOutcome). */
interface Sent {
  sent: 'written' | 'recreated' | 'adopted';
  kept: string[];
  overwritten?: Overwritten[];
}

/**
 * Why a run's signal was aborted when it was not SIGINT/SIGTERM: the pipeline lock was taken
 * from it. The run then says exactly that instead of reporting a signal nobody sent.
 */
export class LockLostError extends Error {
  override name = 'LockLostError';
}

/**
 * A full POST answered 404. docs/service-contract.md, call 2 creates a record that is absent, so the only thing that can be
 * missing is the group itself: deleted in the service's UI (or another organization's).
 */
export class GroupGoneError extends Error {
  override name = 'GroupGoneError';
  constructor(
    readonly groupId: number,
    options: { cause: unknown },
  ) {
    super(`group ${groupId} no longer exists`, options);
  }
}


export interface ApplyOptions {
  plan: Pick<Plan, 'items' | 'newRecords' | 'stateRepairs' | 'rowKeySalt'>;
  /** Row keys to store before any call (the fast path's repairs, gathered beside the plan). */
  rowKeys?: Pick<RowKeyRepairs, 'read' | 'added'>;
  groupId: number;
  writer: RecordWriter;
  store: StateBackend;
  runId: string;
  /** Workers pulling from the queue; the client's limiter still caps the request rate. */
  concurrency: number;
  /** Aborted by SIGINT/SIGTERM: no new calls start, calls in flight finish. */
  signal?: AbortSignal;
  /** Epoch ms after which no new calls start (`--max-duration`). */
  deadline?: number;
  now?: () => number;
  /** Consecutive "service unavailable" failures after which the run gives up (exit 5). */
  unavailableLimit?: number;
  onOutcome?: (item: PlanItem, outcome: ItemOutcome) => void;
}

export async function writePlan(options: ApplyOptions): Promise<ApplyResult> {
  const { plan } = options;
  storeRepairs(options);
  // Where every write goes, journaled with it: a revert acts there or refuses (src/sync/revert.ts).
  const bound = options.store.identity();
  const run: ApplyRun = {
    options,
    writer: groupAware(options.writer, options.groupId),
    now: options.now ?? Date.now,
    unavailableLimit: options.unavailableLimit ?? Math.max(5, options.concurrency * 2),
    target: bound.baseUrl !== null ? { baseUrl: bound.baseUrl, groupId: options.groupId } : null,
    outcomes: new Map(),
    stopped: undefined,
    consecutiveUnavailable: 0,
  };

  // Creates and updates first (the new records, read a page at a time, then the plan's other
  // writes), then deletes; deletes wait for the first phase to finish so a stop never leaves
  // deletes done and their replacements undone.
  let newRecordsReached = 0;
  const writePages = function* (): Generator<WritePage> {
    for (const page of plan.newRecords?.pages() ?? []) yield { items: page, newRecords: true };
    yield { items: plan.items.filter((i) => i.action !== 'delete'), newRecords: false };
  };
  await runWorkers(run, writePages(), (item, newRecord) => {
    if (newRecord) newRecordsReached += 1;
    return run.outcomes.has(item.clientId) ? undefined : writeOne(run, item, newRecord);
  });
  if (!run.stopped) {
    const deletes = plan.items.filter((i) => i.action === 'delete');
    holdUnpairedDeletes(run, deletes);
    await runWorkers(run, [{ items: deletes, newRecords: false }], (item) => (run.outcomes.has(item.clientId) ? undefined : writeOne(run, item, false)));
  }
  return { outcomes: run.outcomes, newRecordsReached, ...(run.stopped ? { stopped: run.stopped } : {}) };
}

/** One apply under way: what it was given, and what it has found so far. */
interface ApplyRun {
  readonly options: ApplyOptions;
  readonly writer: RecordWriter;
  readonly now: () => number;
  readonly unavailableLimit: number;
  /** The service and group every write is journaled with; null for a state bound to no service. */
  readonly target: { baseUrl: string; groupId: number } | null;
  readonly outcomes: Map<string, ItemOutcome>;
  stopped: ApplyResult['stopped'];
  consecutiveUnavailable: number;
}

interface WritePage {
  items: readonly PlanItem[];
  newRecords: boolean;
}

/** The inventory corrections that need no call, and the row keys to store, before any write. */
function storeRepairs({ plan, store, runId, rowKeys }: ApplyOptions): void {
  // The keys this apply stores are salted so: the next plan with the same salt loads them.
  if (plan.rowKeySalt !== undefined) store.setRowKeySalt(plan.rowKeySalt);
  for (const repair of plan.stateRepairs) {
    store.adopt({ clientId: repair.clientId, fieldsJson: repair.fieldsJson, hash: repair.hash, runId });
  }
  store.setRowKeys(plan.stateRepairs.flatMap(({ clientId, rowKey, hash }) => (rowKey !== undefined ? [{ clientId, rowKey, hash }] : [])));
  // Read a page at a time: after a mapping change there is a repair for every record.
  if (rowKeys) store.setRowKeyPages(rowKeys.read(), rowKeys.added);
}

/** Whether the run must start no new call: stopped already, by a signal, a lost lock or the deadline. */
function stopNow(run: ApplyRun): boolean {
  if (run.stopped) return true;
  const { signal, deadline } = run.options;
  if (signal?.aborted && signal.reason instanceof LockLostError) {
    run.stopped = { reason: 'lock_lost', message: `${signal.reason.message}: calls in flight finished, no new call was started; the rest is left for the next run`, exitCode: EXIT.partial };
  } else if (signal?.aborted) {
    run.stopped = { reason: 'interrupted', message: 'stopped by a signal: calls in flight finished, the rest is left for the next run', exitCode: EXIT.interrupted };
  } else if (deadline !== undefined && run.now() >= deadline) {
    run.stopped = { reason: 'deadline', message: 'reached --max-duration: the rest is left for the next run', exitCode: EXIT.ok };
  }
  return run.stopped !== undefined;
}

/** Writes one item: journaled before its call, the inventory updated with its outcome. */
async function writeOne(run: ApplyRun, item: PlanItem, newRecord: boolean): Promise<void> {
  const { store, runId, groupId } = run.options;
  let journalId: number | undefined;
  let outcome: ItemOutcome;
  let attempts = 1;
  const write: WriteOptions = { onSucceeded: (count) => (attempts = count) };
  try {
    // Read first when the write needs it; journaled after the read, before the write: a run
    // stopped during the read wrote nothing and journals nothing.
    const prepared = await prepareWrite(run.writer, groupId, item, write);
    // The values the write changes, kept for `rostersync revert` (src/apply/undo-record.ts).
    journalId = store.journalSent(runId, item.clientId, recordChangeOf(item.action), JSON.stringify(prepared.undo), run.target);
    const { sent, kept, overwritten } = await prepared.send();
    outcome =
      attempts === 1 && sent === 'written' && kept.length === 0
        ? DONE_FIRST_TIME
        : {
            outcome: 'done',
            httpStatus: 200,
            attempts,
            ...(sent === 'recreated' ? { recreated: true } : sent === 'adopted' ? { adopted: true } : {}),
            ...(kept.length > 0 ? { kept } : {}),
            ...(overwritten?.length ? { overwritten } : {}),
          };
    run.consecutiveUnavailable = 0;
    if (item.action === 'delete') store.recordDeleted({ journalId, clientId: item.clientId, status: 200, attempts });
    else {
      const undo = undoRecordAfter(item, outcome);
      store.recordApplied({ journalId, clientId: item.clientId, ...item.desired!, runId, sourceRow: item.provenance?.row ?? null, status: 200, attempts, ...(undo ? { undoJson: JSON.stringify(undo) } : {}) });
    }
  } catch (error) {
    outcome = failedWrite(run, item, error, journalId);
  }
  // A new record done first time is told by its place (outcomeOf): a million entries otherwise.
  if (!newRecord || outcome !== DONE_FIRST_TIME) run.outcomes.set(item.clientId, outcome);
  run.options.onOutcome?.(item, outcome);
}

/** The outcome of a write that threw, journaled; stops the run when the error says the rest would fail too. */
function failedWrite(run: ApplyRun, item: PlanItem, error: unknown, journalId: number | undefined): ItemOutcome {
  const { store } = run.options;
  const service = error instanceof ServiceError ? error : undefined;
  const tries = service?.attempts ?? 1;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof GroupGoneError) {
    if (journalId !== undefined) store.journalFailed(journalId, 404, error.message, tries);
    // Said once for the run (the stop message), not as one 404 per record.
    run.stopped ??= {
      reason: 'group_gone',
      message:
        `group ${error.groupId} no longer exists in the service (deleted in its user interface?); nothing more was written. ` +
        'Point the pipeline at an existing group: `target.group_id` in the pipeline file, or ' +
        '`rostersync state set-group <pipeline> <id>` for a pipeline that creates its group',
      exitCode: EXIT.partial,
    };
    return { outcome: 'skipped', httpStatus: 404, attempts: tries, error: `not written: ${error.message}` };
  }
  if (item.action === 'delete' && error instanceof NotFoundError && journalId !== undefined) {
    // Already gone (deleted in the UI, or a repeat after a crash): the goal is reached.
    store.recordDeleted({ journalId, clientId: item.clientId, status: 404, attempts: tries });
    return { outcome: 'done', httpStatus: 404, attempts: tries };
  }
  // A read that failed sent no write: nothing to journal.
  if (journalId !== undefined) store.journalFailed(journalId, service?.status ?? null, message, tries);
  const exitCode = error instanceof UserFacingError ? error.exitCode : undefined;
  if (exitCode === EXIT.auth && !run.stopped) {
    run.stopped = { reason: 'auth', message: `the service refused the key or the plan: ${message}`, exitCode: EXIT.auth };
  } else if (exitCode === EXIT.unavailable) {
    run.consecutiveUnavailable += 1;
    if (run.consecutiveUnavailable >= run.unavailableLimit && !run.stopped) {
      run.stopped = { reason: 'unavailable', message: `the service kept failing (${run.consecutiveUnavailable} calls in a row past the retry budget): ${message}`, exitCode: EXIT.unavailable };
    }
  }
  return { outcome: 'failed', ...(service?.status ? { httpStatus: service.status } : {}), attempts: tries, error: message };
}

/**
 * One owner per record: a client_id is claimed for this pipeline before it is first written, a
 * page at a time. One that another pipeline sharing the state claimed since planning is not written.
 */
function claimCreates(run: ApplyRun, page: readonly PlanItem[]): void {
  const { target } = run;
  if (target === null) return;
  const creates = page.filter((i) => i.action === 'create').map((i) => i.clientId);
  if (creates.length === 0) return;
  for (const [clientId, owner] of run.options.store.claim(target, creates)) {
    run.outcomes.set(clientId, { outcome: 'failed', error: `not written: pipeline "${owner}" owns this record (it claimed it in the shared state)` });
  }
}

/**
 * A delete paired with a create (a changed client_id) waits until its replacement exists:
 * otherwise a failed create would leave the person out of the group until the next run.
 */
function holdUnpairedDeletes(run: ApplyRun, deletes: readonly PlanItem[]): void {
  for (const item of deletes) {
    if (item.pairedWith !== undefined && run.outcomes.get(item.pairedWith)?.outcome === 'failed') {
      const skipped: ItemOutcome = { outcome: 'skipped', error: `not deleted: the create of ${item.pairedWith} that replaces it failed; retried on the next run` };
      run.outcomes.set(item.clientId, skipped);
      run.options.onOutcome?.(item, skipped);
    }
  }
}

/**
 * `concurrency` workers taking the items in order, page after page (each page claimed as it is
 * read), until they run out or the run stops. `take` is called for every item reached.
 */
async function runWorkers(run: ApplyRun, pages: Iterable<WritePage>, take: (item: PlanItem, newRecord: boolean) => Promise<void> | undefined): Promise<void> {
  const source = pages[Symbol.iterator]();
  let page: WritePage = { items: [], newRecords: false };
  let next = 0;
  const nextItem = (): PlanItem | undefined => {
    while (next >= page.items.length) {
      const read = source.next();
      if (read.done) return undefined;
      page = read.value;
      next = 0;
      claimCreates(run, page.items);
    }
    return page.items[next++];
  };
  const worker = async () => {
    while (!stopNow(run)) {
      const item = nextItem();
      if (item === undefined) return;
      await take(item, page.newRecords);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, run.options.concurrency) }, worker));
}

/** A write ready to send, with the undo record to journal before it. */
interface PreparedWrite {
  undo: UndoRecord;
  send: () => Promise<Sent>;
}

/**
 * Prepares one planned write. Most are sent as planned. A record is read first (ONE GET) for a
 * create-if-absent, for fields written only where the record holds no value (`ifEmpty`), and for
 * `readFirst` (`policy.undo: exact`); a revert's items carry the record it read (`held`). Then:
 * the full POST of every field when the record is absent (404), else the partial POST of the rest
 * (none when nothing is left). A create-if-absent that finds the record adopts it: every managed
 * field but the kept ones is written (2 calls, as for a new record: the estimate counts 2), and
 * the values it replaced are returned for the report (a name typed in the UI, say).
 */
async function prepareWrite(writer: RecordWriter, groupId: number, item: PlanItem, write: WriteOptions): Promise<PreparedWrite> {
  const ifEmpty = item.action === 'replace' ? [] : (item.ifEmpty ?? []);
  const read = item.held === undefined && ((item.action === 'create' && item.ifAbsent === true) || ifEmpty.length > 0 || item.readFirst === true);
  if (item.held === undefined && !read) return { undo: undoRecordOf(item), send: async () => ({ sent: await sendWhole(writer, groupId, item, write), kept: [] }) };
  const held = item.held !== undefined ? item.held : await readRecord(writer, groupId, item.clientId);
  if (item.action === 'delete') return { undo: undoRecordFromRead(item, held, {}, false), send: async () => ({ sent: await sendWhole(writer, groupId, item, write), kept: [] }) };
  if (held === null) {
    // A create's body is the whole record (a revert's re-create keeps fields no mapping manages).
    const body = item.action === 'create' && item.body ? item.body : fullBody(item);
    return { undo: undoRecordFromRead(item, null, body, true), send: async () => (await writer.putAuthor(groupId, item.clientId, body, write), { sent: item.action === 'create' ? 'written' : 'recreated', kept: [] }) };
  }
  if (item.action === 'replace') return { undo: undoRecordFromRead(item, held, item.body ?? {}, true), send: async () => ({ sent: await sendWhole(writer, groupId, item, write), kept: [] }) };
  const kept = ifEmpty.filter((field) => !isEmptyValue(held[field] as Fields[string] | undefined));
  const body = Object.fromEntries(Object.entries(item.action === 'create' ? managedFields(item) : (item.body ?? {})).filter(([field]) => !kept.includes(field)));
  return {
    undo: undoRecordFromRead(item, held, body, false),
    send: async () => {
      if (Object.keys(body).length > 0) await writer.patchAuthor(groupId, item.clientId, body, write);
      if (item.action !== 'create') return { sent: 'written', kept };
      const overwritten = Object.entries(body).flatMap(([field, after]) => {
        const before = (held[field] ?? null) as Fields[string];
        return isEmptyValue(before) || sameHeld(before, after) ? [] : [{ field, before, after }];
      });
      return { sent: 'adopted', kept, overwritten };
    },
  };
}

/** The record as the service holds it; null when absent (404). */
async function readRecord(writer: RecordWriter, groupId: number, clientId: string): Promise<HeldRecord | null> {
  if (!writer.getAuthor) throw new Error('this writer cannot read records, which create-if-absent, fields written if_empty and policy.undo: exact need');
  try {
    return (await writer.getAuthor(groupId, clientId)) as HeldRecord;
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

async function sendWhole(writer: RecordWriter, groupId: number, item: PlanItem, write: WriteOptions): Promise<'written' | 'recreated'> {
  switch (item.action) {
    case 'create':
      await writer.putAuthor(groupId, item.clientId, item.body ?? {}, write);
      return 'written';
    case 'delete':
      await writer.deleteAuthor(groupId, item.clientId, write);
      return 'written';
    case 'replace':
      await writer.putAuthor(groupId, item.clientId, item.body ?? {}, write);
      return 'written';
    case 'update':
      try {
        await writer.patchAuthor(groupId, item.clientId, item.body ?? {}, write);
        return 'written';
      } catch (error) {
        // docs/service-contract.md, call 3: a partial update of a missing record is a 404. The record was deleted
        // remotely since the last run; recreate it whole from the roster.
        if (!(error instanceof NotFoundError)) throw error;
        await writer.putAuthor(groupId, item.clientId, fullBody(item), write);
        return 'recreated';
      }
  }
}

/** The writer, with a 404 on a full POST (which creates absent records) turned into GroupGoneError. */
function groupAware(writer: RecordWriter, groupId: number): RecordWriter {
  return {
    ...(writer.getAuthor ? { getAuthor: (id: number, clientId: string) => writer.getAuthor!(id, clientId) } : {}),
    patchAuthor: (...args) => writer.patchAuthor(...args),
    deleteAuthor: (...args) => writer.deleteAuthor(...args),
    async putAuthor(...args) {
      try {
        return await writer.putAuthor(...args);
      } catch (error) {
        if (error instanceof NotFoundError) throw new GroupGoneError(groupId, { cause: error });
        throw error;
      }
    },
  };
}

/** Equal as the service keeps them: a list in another order (options, e-mails) is the same value. */
function sameHeld(held: Fields[string], value: Fields[string]): boolean {
  const canonical = (v: Fields[string]) => JSON.stringify(Array.isArray(v) ? [...v].sort() : v);
  return canonical(held) === canonical(value);
}

/** Every managed field of the roster row, empty ones as null (an adoption sets them all). */
function managedFields(item: PlanItem): Fields {
  return JSON.parse(item.desired!.fieldsJson) as Fields;
}

function fullBody(item: PlanItem): Fields {
  return Object.fromEntries(Object.entries(managedFields(item)).filter(([, value]) => value !== null));
}
