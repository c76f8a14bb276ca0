/**
 * The first row of each client_id of a roster, kept compactly while it streams through the
 * mapping (src/mapping/roster.ts): duplicate detection, and the rows the drift check names.
 */

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
 * array by entry instead, whichever way their row came (known or mapped), and the Map holds the rest.
 */
export class FirstRows implements RosterIds {
  private readonly byId = new Map<string, number>();
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
