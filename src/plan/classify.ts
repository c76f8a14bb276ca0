/**
 * First, streaming half of planning: each desired record is compared by hash with its inventory
 * entry as it is mapped, so a roster of a million unchanged rows keeps only its ids in memory
 * (the inventory itself stays on disk: the caller looks hashes up in batches).
 * Records that changed are kept whole for the second half (`buildPlan`); new ones go to a spool
 * (new-records.ts), which a first sync of a million rows needs.
 * Pure but for that spool: the caller feeds records, their inventory hashes and the owned ids in.
 */
import type { DesiredRecord } from '../mapping/types.js';
import { canonicalJson, hashJson } from './canonical.js';
import { NewRecords, type ClassifiedRecord } from './new-records.js';
import type { RowKeyRepairs } from './row-key-repairs.js';

export type { ClassifiedRecord } from './new-records.js';

type Status = 'changed' | 'unchanged';

export interface Classification {
  /** Not in the inventory, kept out of memory until apply. */
  created: NewRecords;
  /** In the inventory with a different hash. */
  changed: ClassifiedRecord[];
  /** In the inventory with the same hash (kept whole only with `keepUnchanged`, for --refresh=all). */
  unchanged: ClassifiedRecord[];
  unchangedCount: number;
  /** Owned client_ids the roster no longer has. */
  missing: string[];
}

export class RosterClassifier {
  private readonly keepUnchanged: boolean;
  private readonly rewrite: ReadonlySet<string>;
  /**
   * Status of the owned records that are not unchanged (and of all, with `keepUnchanged`). An
   * owned id of the roster absent here is unchanged: a million unchanged rows cost no entry.
   */
  private readonly status = new Map<string, Status>();
  private readonly kept = new Map<string, ClassifiedRecord>();
  /** Where the row keys of unchanged records whose rows took the full path go. */
  private readonly rowKeys: RowKeyRepairs | undefined;
  private readonly created: NewRecords;

  /**
   * `rewrite`: client_ids whose last write failed or never finished. The service may hold
   * something else than the inventory says, so they are never taken as unchanged. `rowKeys`
   * receives the row keys to store (the fast path's repairs), when the records carry them.
   * `created` receives the new records (the caller disposes of it once the run is over); one in
   * memory by default.
   */
  constructor(options: { keepUnchanged?: boolean; rewrite?: ReadonlySet<string>; rowKeys?: RowKeyRepairs; created?: NewRecords } = {}) {
    this.keepUnchanged = options.keepUnchanged ?? false;
    this.rewrite = options.rewrite ?? new Set();
    this.rowKeys = options.rowKeys;
    this.created = options.created ?? new NewRecords({ pagesInMemory: Infinity });
  }

  /**
   * Adds a desired record with the hash its inventory entry holds (undefined: not owned).
   * A repeated client_id replaces the earlier one (the mapping decides duplicates): `replaces`
   * says so (an owned record's entry is simply replaced; a new one's is marked in the spool).
   */
  add(record: DesiredRecord, ownedHash: string | undefined, replaces = false): void {
    const fieldsJson = canonicalJson(record.fields);
    const hash = hashJson(fieldsJson);
    if (ownedHash === undefined) {
      this.created.add({ record, fieldsJson, hash }, replaces);
      return;
    }
    const status: Status = ownedHash === hash && !this.rewrite.has(record.clientId) ? 'unchanged' : 'changed';
    if (status === 'unchanged' && record.rowKey !== undefined) this.rowKeys?.add({ clientId: record.clientId, rowKey: record.rowKey, hash });
    if (status !== 'unchanged' || this.keepUnchanged) {
      this.status.set(record.clientId, status);
      this.kept.set(record.clientId, { record, fieldsJson, hash });
    } else {
      this.addUnchanged(record.clientId);
    }
  }

  /** Adds a record known unchanged without mapping it (the fast path: its row key matched). */
  addUnchanged(clientId: string): void {
    this.status.delete(clientId);
    this.kept.delete(clientId);
  }

  /**
   * Closes the stream. `rosterIds` holds every client_id the roster's valid rows carried (each
   * added here). `owned` is the inventory: its size, and its client_ids (streamed, to find those
   * the roster no longer has; not read at all when every owned id is in the roster). `drop` holds
   * client_ids that are in the roster but must not be written: rows rejected for their values, and
   * duplicates found after the first row streamed by. Being in the roster, they are never deleted
   * either.
   */
  finish(rosterIds: { has(clientId: string): boolean; readonly size: number }, owned: { count: number; ids: () => Iterable<string> }, drop: ReadonlySet<string> = new Set()): Classification {
    const created = this.created.distinct;
    const result: Classification = { created: this.created, changed: [], unchanged: [], unchangedCount: 0, missing: [] };
    const createdKept = this.created.finish((clientId) => drop.has(clientId));
    // Walks what is not unchanged (few, on a nightly run), not the million that are.
    let notUnchanged = createdKept;
    for (const [clientId, status] of this.status) {
      if (drop.has(clientId)) continue;
      result[status].push(this.kept.get(clientId)!);
      if (status !== 'unchanged') notUnchanged += 1;
    }
    let dropped = 0;
    for (const clientId of drop) if (rosterIds.has(clientId)) dropped += 1;
    result.unchangedCount = rosterIds.size - dropped - notUnchanged;
    // Every roster id not created is owned; if they are as many as the inventory, none is missing.
    if (rosterIds.size - created !== owned.count) {
      for (const clientId of owned.ids()) if (!rosterIds.has(clientId) && !drop.has(clientId)) result.missing.push(clientId);
    }
    this.rowKeys?.keepOnly((clientId) => !drop.has(clientId) && (this.status.get(clientId) ?? 'unchanged') === 'unchanged');
    // The records are the classification's now. The row keys' filter above keeps this classifier
    // alive until the run ends: without this, the changed records would be held twice over (as
    // classified, and as the plan's items) through apply and the report.
    this.kept.clear();
    return result;
  }
}
