/**
 * First, streaming half of planning: each desired record is compared by hash with the inventory
 * as it is mapped, so a roster of a million unchanged rows keeps only its ids in memory.
 * Records that are new or changed are kept whole for the second half (`buildPlan`).
 * Pure: no I/O; the caller feeds records and inventory hashes in.
 */
import type { DesiredRecord } from '../mapping/types.js';
import { canonicalJson, hashJson } from './canonical.js';

export interface ClassifiedRecord {
  record: DesiredRecord;
  fieldsJson: string;
  hash: string;
}

type Status = 'created' | 'changed' | 'unchanged';

export interface Classification {
  /** Not in the inventory. */
  created: ClassifiedRecord[];
  /** In the inventory with a different hash. */
  changed: ClassifiedRecord[];
  /** In the inventory with the same hash (kept whole only with `keepUnchanged`, for --refresh=all). */
  unchanged: ClassifiedRecord[];
  unchangedCount: number;
  /** Owned client_ids the roster no longer has. */
  missing: string[];
}

export class RosterClassifier {
  private readonly owned: ReadonlyMap<string, string>;
  private readonly keepUnchanged: boolean;
  private readonly status = new Map<string, Status>();
  private readonly kept = new Map<string, ClassifiedRecord>();

  constructor(owned: ReadonlyMap<string, string>, options: { keepUnchanged?: boolean } = {}) {
    this.owned = owned;
    this.keepUnchanged = options.keepUnchanged ?? false;
  }

  /** Adds a desired record; a repeated client_id replaces the earlier one (the mapping decides duplicates). */
  add(record: DesiredRecord): void {
    const fieldsJson = canonicalJson(record.fields);
    const hash = hashJson(fieldsJson);
    const ownedHash = this.owned.get(record.clientId);
    const status: Status = ownedHash === undefined ? 'created' : ownedHash === hash ? 'unchanged' : 'changed';
    this.status.set(record.clientId, status);
    if (status !== 'unchanged' || this.keepUnchanged) this.kept.set(record.clientId, { record, fieldsJson, hash });
    else this.kept.delete(record.clientId);
  }

  /** Whether the roster carried this client_id (rejected duplicates included). */
  has(clientId: string): boolean {
    return this.status.has(clientId);
  }

  /**
   * Closes the stream. `drop` holds client_ids rejected after they streamed by (duplicates found
   * later in the roster): they are neither written nor, being in the roster, deleted.
   */
  finish(drop: ReadonlySet<string> = new Set()): Classification {
    const result: Classification = { created: [], changed: [], unchanged: [], unchangedCount: 0, missing: [] };
    for (const [clientId, status] of this.status) {
      if (drop.has(clientId)) continue;
      if (status === 'unchanged') result.unchangedCount += 1;
      const item = this.kept.get(clientId);
      if (item) result[status].push(item);
    }
    for (const clientId of this.owned.keys()) if (!this.status.has(clientId)) result.missing.push(clientId);
    return result;
  }
}
