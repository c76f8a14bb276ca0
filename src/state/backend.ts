/**
 * The state contract: what every state backend offers (the embedded SQLite store in sqlite/, the
 * shared PostgreSQL store in postgres/), the types it stores and the errors it raises. Code above
 * the state depends on this file only, never on one backend.
 *
 * A state holds the inventory of what the pipeline owns, a journal of every write outcome, the
 * run history, the lock, the identity the state is bound to (service, group, pipeline), the
 * claims shared with other pipelines and the plan-signing secret. Why an inventory: the service
 * cannot list the members of a group, so only records recorded here are ever deleted, and a lost
 * state means deletions cannot be computed.
 *
 * The surface is synchronous on purpose: apply journals an operation `sent` before its call and
 * its outcome right after, and a synchronous store makes "durable before the next call is sent"
 * hold by construction. The PostgreSQL backend keeps that contract by running its client in a
 * worker thread and waiting for each answer (src/state/postgres/sync-connection.ts).
 */
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';
import type { FieldValue } from '../client/schemas.js';
import type { StateIdentity, Target } from './identity.js';

export type { StateIdentity, Target } from './identity.js';

// --- what the state stores ------------------------------------------------------------------

/** A record the pipeline owns, with the managed fields it last applied. */
export interface OwnedRecord {
  clientId: string;
  /** Last-applied managed fields, canonical JSON. */
  fieldsJson: string;
  hash: string;
  runId: string;
  sourceRow: number | null;
}

/** A successful create or update, as `recordApplied` records it. */
export interface AppliedRecord {
  journalId: number;
  /** Replaces the undo values journaled before the call (an adoption found the record existing). */
  undoJson?: string | undefined;
  clientId: string;
  fieldsJson: string;
  hash: string;
  /** The raw row's key (src/mapping/row-key.ts) when the fields came from a row of the roster. */
  rowKey?: string | undefined;
  runId: string;
  sourceRow: number | null;
  status: number;
  attempts: number;
}

/** A successful delete, as `recordDeleted` records it. */
export interface DeletedRecord {
  journalId: number;
  clientId: string;
  status: number;
  attempts: number;
}

/** A record adopted from the group (`state import`): the service's values become the last-applied ones. */
export interface AdoptedRecord {
  clientId: string;
  fieldsJson: string;
  hash: string;
  runId: string;
}

/** A row key to store while the record still holds `hash` (the fields the row maps to). */
export interface RowKeyEntry {
  clientId: string;
  rowKey: string;
  hash: string;
}

/**
 * A page of the inventory's row keys: `rowKeys` holds `count` keys of ROW_KEY_LENGTH characters
 * each, end to end, and `clientIds` the client_ids joined by NUL, the i-th key being that of the
 * i-th client_id's row. Text rather than an array: a million client_ids as strings cost about
 * 30 MB of heap, and the fast path keeps them as this text (src/plan/known-rows.ts). A client_id
 * holding NUL cannot have a row key (its row has none), and PostgreSQL text holds no NUL at all.
 */
export interface RowKeyPage {
  rowKeys: string;
  clientIds: string;
  count: number;
}

/**
 * Where a journaled write stands. `planned` is only found in states written by older versions
 * (a write is journaled `sent` just before its call); `abandoned`: an unfinished write of a
 * target the state was moved away from (`retarget`).
 */
export type JournalState = 'planned' | 'sent' | 'done' | 'failed' | 'abandoned';

/**
 * One journaled write, as `rostersync revert` reads it. `undoJson`: the values the write changed
 * (src/apply/undo-record.ts); null for an entry journaled before they were kept. `target`: the
 * service and group the write went to; null for an entry journaled before they were kept
 * (state schema 4 and before) or without a bound service.
 */
export interface JournalEntry {
  id: number;
  runId: string;
  clientId: string;
  action: string;
  state: JournalState;
  status: number | null;
  undoJson: string | null;
  target: Target | null;
}

export interface UnfinishedWrite {
  action: 'create' | 'update' | 'delete';
  state: JournalState;
  /** HTTP status of the failure; null when no answer came (or none was recorded before a crash). */
  status: number | null;
}

/**
 * Whether the service may have performed a write the journal could not confirm: no answer
 * (sent, then a crash or a network failure), a server error or a rate-limit answer after the
 * handler may have run. A definite refusal (400, 401, 403, 404, 422) did not write.
 */
export function mayHaveWritten(write: UnfinishedWrite): boolean {
  return write.state !== 'failed' || write.status === null || write.status >= 500 || write.status === 429 || write.status === 408;
}

export interface RunRow {
  id: string;
  startedAt: string;
  finishedAt: string | null;
  outcome: string | null;
  dryRun: boolean;
  validRecords: number | null;
  sourceSha256: string | null;
  countsJson: string | null;
}

export interface LockInfo {
  owner: string;
  host: string;
  pid: number;
  /** Identity of the owner's process (boot id, start time, PID namespace: src/state/liveness.ts) so a reused pid or another namespace's pid is not taken for it; null when unknown. */
  processStart: string | null;
  startedAt: string;
  heartbeatAt: string;
  runId: string;
}

/** A pipeline writing to a target, and the client_id prefixes it declared when it shares the group. */
export interface TargetRegistration {
  pipeline: string;
  /** Null: the pipeline did not declare sharing (it expects the group to itself). */
  sharedPrefixes: string[] | null;
}

/** The intent to create a group, journaled before the (non-idempotent) call. */
export interface GroupIntent {
  name: string;
  at: string;
}

export interface StateStoreOptions {
  /** Injectable clock (ms since epoch). @default Date.now */
  now?: () => number;
}

/** How often a run renews its lock. */
export const HEARTBEAT_MS = 15_000;

// --- the contract ---------------------------------------------------------------------------

export interface StateBackend {
  /** Where the state is, for messages (a file, or the database and the pipeline). */
  readonly path: string;
  readonly pipeline: string;
  /** Client_ids per inventory lookup (`ownedHashesOf`, `claimOwners`) that suits this backend. */
  readonly lookupBatch: number;

  close(): void;
  /**
   * Runs `body` as one transaction: every store call inside it commits together or not at all
   * (`state import`). Synchronous, like the store.
   */
  transaction<T>(body: () => T): T;

  // meta and identity
  getMeta(key: string): string | undefined;
  setMeta(key: string, value: string): void;
  /** Increases on every change of the inventory; saved plans are bound to it. */
  serial(): number;
  groupId(): number | null;
  /**
   * Records a group id (after creation, or by hand with `state set-group` while the inventory is
   * empty). `createdHere`: this pipeline just created the group, so it owns all of it from the
   * start. Moving an inventory that owns records to another group is `retarget`.
   */
  setGroupId(groupId: number, options?: { createdHere?: boolean; name?: string }): void;
  /** Records the name of the group the state is bound to (a state made before names were kept, or a renamed group). */
  setGroupName(name: string): void;
  /** What this state is bound to: service, group and pipeline. */
  identity(): StateIdentity;
  /** Binds the state to a service on its first run (normalized; see `normalizeServiceUrl`). */
  bindService(baseUrl: string): void;
  /**
   * Moves the state to another service and/or group (`state rebind`, `state set-group`). The
   * records this pipeline owned stay where they are, untouched and no longer owned (nor claimed):
   * the inventory is emptied, unfinished writes of the old target are abandoned, and the group no
   * longer counts as created here. Returns how many records were let go.
   */
  retarget(target: { baseUrl: string | null; groupId: number | null }): { released: number };
  /**
   * The secret that keys saved-plan digests (HMAC), created on first use. It never leaves the
   * state, so a plan edited outside rostersync cannot be given a matching digest.
   */
  planSecret(): string;
  /** The intent to create a group, recorded before the (non-idempotent) call. */
  groupIntent(): GroupIntent | null;
  recordGroupIntent(name: string): void;
  clearGroupIntent(): void;

  // claims and targets, shared by every pipeline of one state location (or database)
  /** The pipeline that claims each of these client_ids on the target (this one included); unclaimed ids are absent. */
  claimOwners(target: Target, clientIds: readonly string[]): Map<string, string>;
  /**
   * Claims client_ids on the target for this pipeline, before writing them. Returns the ids
   * another pipeline already claims (those are not claimed and must not be written), with their owner.
   */
  claim(target: Target, clientIds: readonly string[]): Map<string, string>;
  /** Gives up this pipeline's claims (after a delete, `state forget`). Claims of other pipelines are left alone. */
  releaseClaims(target: Target, clientIds: readonly string[]): void;
  /**
   * Claims every owned record on the target (a state made before claims existed, or bound just
   * now). Returns owned ids another pipeline claims: they are shared by mistake and need a person.
   */
  claimOwned(target: Target): Map<string, string>;
  /** Records that this pipeline writes to the target, and the client_id prefixes it declared if it shares the group. */
  registerTarget(target: Target, sharedPrefixes: readonly string[] | null): void;
  /** Every pipeline registered on the target (this one included). */
  targetsOn(target: Target): TargetRegistration[];

  // inventory
  ownedCount(): number;
  /**
   * Hashes of the given client_ids that are owned. The planner asks in batches of `lookupBatch`,
   * which keeps a million-record inventory on disk instead of in memory.
   */
  ownedHashesOf(clientIds: readonly string[]): Map<string, string>;
  /** Every owned client_id, streamed. */
  ownedIds(): IterableIterator<string>;
  /**
   * The row keys the inventory knows, with their client_ids, in pages: the plan's fast path
   * (src/plan/known-rows.ts). A row key is only ever stored together with the hash its row maps
   * to (recordApplied, setRowKeys), and cleared by any other write of the record. Read every page
   * before writing: SQLite allows no write while a query is open.
   */
  rowKeyPages(pageSize?: number): IterableIterator<RowKeyPage>;
  /**
   * The salt of the row keys the last apply stored, by name (`rowKeySaltName` in
   * src/mapping/row-key.ts). Only a hint: a run whose salt differs loads no key (none can match),
   * which saves loading a million useless keys after a mapping, listing or version change. A
   * wrong hint only costs time.
   */
  rowKeySalt(): string | undefined;
  setRowKeySalt(salt: string): void;
  /**
   * Stores the row keys of records whose row mapped to exactly what the inventory holds. A key is
   * kept only if the record still has `hash` (a write since planning leaves it unset).
   */
  setRowKeys(entries: readonly RowKeyEntry[]): void;
  /** `setRowKeys` for pages of entries, in one transaction (SQLite) or one per page; `expected` is about how many. */
  setRowKeyPages(pages: Iterable<readonly RowKeyEntry[]>, expected: number): void;
  getOwned(clientId: string): OwnedRecord | undefined;
  /** Last-applied fields of the given owned records (those the plan needs to diff). */
  lastApplied(clientIds: Iterable<string>): Map<string, Record<string, FieldValue>>;
  /** Owned records in client_id order. @default limit: all */
  listOwned(limit?: number): OwnedRecord[];
  /** Writes the outcome of a successful create/update together with its journal entry. */
  recordApplied(entry: AppliedRecord): void;
  /** Writes the outcome of a successful delete together with its journal entry, and releases its claim. */
  recordDeleted(entry: DeletedRecord): void;
  /** Adopts a record that already exists in the group (`state import`). */
  adopt(entry: AdoptedRecord): void;
  /** Drops a record from the inventory without touching the service (`state forget`). */
  forget(clientId: string): boolean;

  // journal
  /**
   * Journals a write as sent, just before its call, durably, with the values it changes
   * (`undoJson`, for `rostersync revert`) and the service and group it goes to; returns the entry's id.
   */
  journalSent(runId: string, clientId: string, action: string, undoJson?: string | null, target?: Target | null): number;
  journalFailed(id: number, status: number | null, error: string, attempts: number): void;
  /**
   * The last journaled write of every client_id whose last write failed or never finished
   * (journaled `sent`, then a crash). The planner writes these again.
   */
  unfinishedOrFailed(): Map<string, UnfinishedWrite>;
  /** Every write a run journaled, in journal order. */
  runJournal(runId: string): JournalEntry[];
  /** Every journaled write of the given client_ids, in journal order (revert looks for later ones). */
  journalOf(clientIds: readonly string[]): JournalEntry[];

  // runs
  startRun(run: { id: string; dryRun: boolean; sourceSha256: string }): void;
  finishRun(run: { id: string; outcome: string; validRecords: number; counts: unknown }): void;
  /**
   * The last real (not dry) run that applied its plan to the end, even if some rows were rejected
   * or some records failed; the source-drop guard compares the roster against it. A revert
   * (source `revert:<run id>`, src/sync/revert.ts) read no roster, so it is not that baseline.
   */
  lastSuccessfulRun(): RunRow | undefined;
  /** One run of the history by id. */
  findRun(id: string): RunRow | undefined;
  /** The newest runs first. @default limit: 10 */
  recentRuns(limit?: number): RunRow[];
  /**
   * The newest real run that journaled a write, or whose recorded counts say it wrote (a run
   * whose journal did not travel with `state import`), however many runs came after it.
   */
  lastWritingRun(): RunRow | undefined;

  // lock
  /** Takes the pipeline's lock, or refuses (StateError) naming the current holder. */
  acquireLock(runId: string, owner?: string): LockInfo;
  /** Renews the lock; false when it is no longer ours (cleared with `unlock`, taken over as stale, or its session lost). */
  heartbeat(runId: string): boolean;
  releaseLock(runId: string): void;
  readLock(): LockInfo | undefined;
  /** Removes the lock whatever its state (`rostersync unlock`). Returns what was removed. */
  forceUnlock(): LockInfo | undefined;
  /** Whether a lock's holder is gone, so the lock may be taken over. */
  isStale(lock: LockInfo): boolean;
}

// --- errors ---------------------------------------------------------------------------------

/** The state cannot be used as it is (bound elsewhere, locked, damaged, unwritable). */
export class StateError extends UserFacingError {
  override name = 'StateError';
}

/** The refusal of a run whose pipeline another run holds, naming the holder; `hint` says what to do. */
export function lockedError(pipeline: string, holder: LockInfo | undefined, hint: string): StateError {
  const who = holder
    ? `run ${holder.runId}: ${holder.owner} on ${holder.host}, pid ${holder.pid}, since ${holder.startedAt} (heartbeat ${holder.heartbeatAt})`
    : 'a session that has not written its name yet';
  return new StateError(`pipeline "${pipeline}" is locked by ${who}.`, { hint });
}

/** The database stopped answering: the run must stop before sending another write. */
export class StateUnavailableError extends UserFacingError {
  override name = 'StateUnavailableError';
  constructor(label: string, detail: string) {
    super(`the state database ${label} is unreachable: ${detail}`, {
      exitCode: EXIT.stateUnavailable,
      hint: 'No write was sent after the database went away; writes in flight were journaled as sent and are written again on the next run. Bring the database back and run again: the run converges.',
    });
  }
}

/**
 * The run's lock was taken from it (`rostersync unlock`): on PostgreSQL that ends the run's
 * database session, so the run learns it from a failed call. Exit 2, "lock taken", as on SQLite.
 */
export class LockTakenError extends UserFacingError {
  override name = 'LockTakenError';
  constructor(detail: string) {
    super(`this run lost the pipeline lock: ${detail}; no write was sent after that.`, {
      exitCode: EXIT.partial,
      hint: 'Writes in flight were journaled as sent and are written again by the next run, which converges. Check that no other run of this pipeline is going before running again.',
    });
  }
}
