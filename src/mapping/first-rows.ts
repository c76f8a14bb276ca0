/**
 * The first row of each client_id of a roster, kept compactly while it streams through the
 * mapping (src/mapping/roster.ts): duplicate detection, and the rows the drift check names.
 */
import { Column, hashText, mustStayString, TextPool } from './text-pool.js';

/** Known records, numbered 0 to count - 1 (entries). */
export interface KnownRecords {
  readonly count: number;
  /** The entry whose stored row key is `rowKey`, or -1. */
  entryOfRowKey(rowKey: string): number;
  /** The entry of `clientId`, or -1. */
  entryOfClientId(clientId: string): number;
  clientIdAt(entry: number): string;
}

/** The client_ids of the roster's valid rows, with the first row of each. */
export interface RosterIds {
  has(clientId: string): boolean;
  get(clientId: string): number | undefined;
  readonly size: number;
}

/**
 * First row of each client_id. A million unchanged rows would make a Map of a million entries
 * (about 30 MB, and more while it grows); the ids of known records take 4 bytes each in a typed
 * array by entry instead, whichever way their row came (known or mapped), and an IdTable holds
 * the rest (a first run's million new ids: about 30 MB there, against about 60 MB as strings in a
 * Map, which also kept every client_id's string alive for the whole run).
 */
export class FirstRows implements RosterIds {
  private readonly byId = new IdTable();
  /** First row by entry; 0 = not met (rows are numbered from 1). */
  private readonly byEntry: Int32Array;
  private entriesMet = 0;

  constructor(private readonly known: KnownRecords | undefined) {
    this.byEntry = new Int32Array(known?.count ?? 0);
  }

  /** The entry of `clientId` among the known records, or -1. */
  entryOf(clientId: string): number {
    return this.known ? this.known.entryOfClientId(clientId) : -1;
  }

  /** First row of the id that is `entry` (when ≥ 0) or else `clientId`. */
  firstRow(clientId: string | undefined, entry: number): number | undefined {
    return entry >= 0 ? this.byEntry[entry] || undefined : this.byId.get(clientId!);
  }

  add(clientId: string | undefined, entry: number, row: number): void {
    if (entry < 0) {
      this.byId.set(clientId!, row);
      return;
    }
    this.byEntry[entry] = row;
    this.entriesMet++;
  }

  get(clientId: string): number | undefined {
    return this.firstRow(clientId, this.entryOf(clientId));
  }

  has(clientId: string): boolean {
    return this.get(clientId) !== undefined;
  }

  get size(): number {
    return this.byId.size + this.entriesMet;
  }
}

/**
 * client_id to a number, by open addressing over the ids' hashes: each id as UTF-8 in a TextPool,
 * its hash and number in typed arrays, the table a Uint32Array of entries; no string, object or
 * Map entry per id. About 4 bytes a slot (two to four slots an id: the table doubles past half full) plus 12 an id and its bytes.
 */
export class IdTable {
  private readonly texts = new TextPool();
  /** By entry: where its id is in `texts`, its hash, its number. */
  private readonly textAt = new Column((n) => new Uint32Array(n));
  private readonly hashes = new Column((n) => new Uint32Array(n));
  private readonly values = new Column((n) => new Int32Array(n));
  /** Entry + 1 by slot, 0 for an empty slot; grown (doubled) at half full. */
  private slots = new Uint32Array(1024);
  /** Ids UTF-8 would not give back as they are (mustStayString). */
  private readonly strings = new Map<string, number>();
  private entries = 0;

  get size(): number {
    return this.entries + this.strings.size;
  }

  get(id: string): number | undefined {
    if (mustStayString(id)) return this.strings.get(id);
    const entry = this.slots[this.slotOf(id, hashText(id))]! - 1;
    return entry < 0 ? undefined : this.values.get(entry);
  }

  set(id: string, value: number): void {
    if (mustStayString(id)) {
      this.strings.set(id, value);
      return;
    }
    const hash = hashText(id);
    const slot = this.slotOf(id, hash);
    const found = this.slots[slot]! - 1;
    if (found >= 0) {
      this.values.set(found, value);
      return;
    }
    const at = this.texts.add([], [id]);
    // 4 GiB of client_ids: hundreds of millions, far past any memory that could read them.
    if (at === undefined) throw new Error(`more client_ids than can be kept (${this.entries})`);
    this.textAt.push(at);
    this.hashes.push(hash);
    this.values.push(value);
    this.slots[slot] = ++this.entries;
    if (this.entries * 2 > this.slots.length) this.grow();
  }

  /** The slot that holds `id`, or the empty slot where it goes. */
  private slotOf(id: string, hash: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]! - 1;
      if (entry < 0 || (this.hashes.get(entry) === hash && this.texts.equals(this.textAt.get(entry), id))) return slot;
    }
  }

  private grow(): void {
    const slots = new Uint32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let entry = 0; entry < this.entries; entry++) {
      let slot = this.hashes.get(entry) & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = entry + 1;
    }
    this.slots = slots;
  }
}
