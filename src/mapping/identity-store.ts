/**
 * The identities the same-person check compares (src/mapping/duplicate-people.ts), stored by
 * column so that a million-row roster costs tens of megabytes, not hundreds: one object per row
 * (with its strings and arrays) took about 370 bytes; here a row is a few typed-array cells and
 * its texts as UTF-8 in shared chunks (src/mapping/text-pool.ts), about 20 bytes plus the bytes of
 * its client_id, name, ORCID iDs and emails: no string is kept per row, so the roster's client_id
 * strings are not held for the check. Nothing is hashed into a Map per row: a client_id is found,
 * and a later row of the same client_id found to replace an earlier one, by sorting (`compact`).
 *
 * Bounded: at most MAX_STORED_ROWS rows and MAX_STORED_KEYS ORCID iDs and emails (both far above
 * a million-row roster; the packing of sort keys needs them below 2^24), and MAX_TEXT_BYTES of
 * text; `add` answers false past any of them, and the check says it was skipped.
 */
import type { Provenance } from '../sources/types.js';
import { Column, hashText, mustStayString, TextPool } from './text-pool.js';

/** Rows kept at most (the sort keys hold a row number in 24 bits). */
export const MAX_STORED_ROWS = 16_000_000;
/** ORCID iDs and emails kept at most, over all rows. */
export const MAX_STORED_KEYS = 16_000_000;
const TWO_24 = 2 ** 24;
/** Sort keys: 29 bits of a hash above 24 bits of a number, exact in a double (53 bits). */
const HASH_MASK = 0x1fffffff;

/**
 * One row's identity as the finder reads it: strings and arrays, built only while compared.
 * `abbreviated` and `letters` are not stored: they are read from the name.
 */
export interface StoredIdentity {
  clientId: string;
  provenance?: Provenance;
  /** Normalised, words sorted; '' without an affiliation or a name. */
  name: string;
  abbreviated: boolean;
  letters: number;
  /** Index into the finder's normalised affiliations; -1 for none. */
  affiliation: number;
  orcids: string[];
  emails: string[];
}

/**
 * Every key (ORCID iD or email) shared by rows of one tier: its text, its rows (logical numbers,
 * in order, each once), in the order a scan of the rows meets its second row.
 */
export interface SharedKey {
  key: string;
  members: number[];
}

/** The rows added, by column. Rows are physical (as added); `compact` numbers the client_ids. */
export class IdentityStore {
  /** Rows added. */
  private added = 0;
  /** The client_ids UTF-8 would not give back as they are (mustStayString), by physical row. */
  private readonly oddIds = new Map<number, string>();
  /** Index + 1 into `places` (file and sheet), 0 without a provenance. */
  private readonly place = new Column((n) => new Uint16Array(n));
  private readonly row = new Column((n) => new Uint32Array(n));
  private readonly affiliation = new Column((n) => new Int32Array(n));
  /** 1: from the inventory (a roster row of its client_id wins). */
  private readonly flags = new Column((n) => new Uint8Array(n));
  /** The row's texts (`texts`): its ORCID iDs' and emails' counts, its client_id, name, ORCID iDs and emails. */
  private readonly record = new Column((n) => new Uint32Array(n));
  private readonly texts = new TextPool();
  /** ORCID iDs and emails kept. */
  private keys = 0;
  private readonly places: Array<{ file: string; sheet?: string }> = [];
  private readonly placeIndex = new Map<string, number>();
  /** From `compact`: the physical row of each client_id, in the order of its first row. */
  private order: Uint32Array | undefined;
  /**
   * For `indexOf` only (a run with an inventory), made on its first call: client_ids' hash and
   * physical row, sorted, and the logical number of each physical row. A first run never asks, so
   * it never holds them (12 bytes a row).
   */
  private lookup: { byId: Float64Array; logicalOf: Uint32Array } | undefined;

  get rows(): number {
    return this.added;
  }

  /** False when a bound is reached (nothing is added then). */
  add(identity: StoredIdentity, fromInventory: boolean): boolean {
    const keys = this.keys + identity.orcids.length + identity.emails.length;
    if (this.added >= MAX_STORED_ROWS || keys > MAX_STORED_KEYS) return false;
    const place = identity.provenance ? this.placeOf(identity.provenance) : 0;
    if (place > 0xffff) return false;
    const odd = mustStayString(identity.clientId);
    const record = this.texts.add([identity.orcids.length, identity.emails.length], [odd ? '' : identity.clientId, identity.name, ...identity.orcids, ...identity.emails]);
    if (record === undefined) return false;
    this.keys = keys;
    this.order = this.lookup = undefined;
    if (odd) this.oddIds.set(this.added, identity.clientId);
    this.added++;
    this.place.push(place);
    this.row.push(identity.provenance?.row ?? 0);
    this.affiliation.push(identity.affiliation);
    this.flags.push(fromInventory ? 1 : 0);
    this.record.push(record);
    return true;
  }

  private placeOf(provenance: Provenance): number {
    const id = provenance.sheet === undefined ? provenance.file : `${provenance.file}\u0000${provenance.sheet}`;
    let index = this.placeIndex.get(id);
    if (index === undefined) {
      index = this.places.push(provenance.sheet === undefined ? { file: provenance.file } : { file: provenance.file, sheet: provenance.sheet });
      this.placeIndex.set(id, index);
    }
    return index;
  }

  /** Client_ids (each once), numbered in the order of their first row. */
  get size(): number {
    return this.compact().length;
  }

  clientId(logical: number): string {
    return this.idAt(this.compact()[logical]!);
  }

  /** The client_id of a physical row. */
  private idAt(physical: number): string {
    const texts = this.texts;
    texts.count(this.record.get(physical));
    texts.count(texts.next);
    const clientId = texts.text(texts.next);
    return clientId === '' && this.oddIds.size > 0 ? (this.oddIds.get(physical) ?? clientId) : clientId;
  }

  nameOf(logical: number): string {
    const texts = this.texts;
    texts.count(this.record.get(this.compact()[logical]!));
    texts.count(texts.next);
    return texts.text(texts.skip(texts.next));
  }

  affiliationOf(logical: number): number {
    return this.affiliation.get(this.compact()[logical]!);
  }

  /** The row as the finder compares it (strings and arrays built now, for this comparison). */
  identity(logical: number): StoredIdentity {
    const at = this.compact()[logical]!;
    const place = this.place.get(at);
    const where = place === 0 ? undefined : this.places[place - 1]!;
    const texts = this.texts;
    const clientId = this.idAt(at);
    const orcidCount = texts.count(this.record.get(at));
    const emailCount = texts.count(texts.next);
    const name = texts.text(texts.skip(texts.next));
    const keys = (count: number) => {
      if (count === 0) return NONE;
      const out: string[] = [];
      for (let k = 0; k < count; k++) out.push(texts.text(texts.next));
      return out;
    };
    const orcids = keys(orcidCount);
    const emails = keys(emailCount);
    return {
      clientId,
      provenance: where === undefined ? undefined : where.sheet === undefined ? { file: where.file, row: this.row.get(at) } : { file: where.file, sheet: where.sheet, row: this.row.get(at) },
      name,
      abbreviated: isAbbreviated(name),
      letters: nameLetters(name),
      affiliation: this.affiliation.get(at),
      orcids,
      emails,
    };
  }

  /** The logical number of a client_id, or undefined. */
  indexOf(clientId: string): number | undefined {
    const { byId, logicalOf } = (this.lookup ??= this.idLookup());
    const hash = hashText(clientId) & HASH_MASK;
    for (let i = firstOfHash(byId, hash); i < byId.length && Math.floor(byId[i]! / TWO_24) === hash; i++) {
      const physical = byId[i]! % TWO_24;
      if (this.idAt(physical) === clientId) return logicalOf[physical]!;
    }
    return undefined;
  }

  /**
   * Numbers the client_ids: one per client_id, in the order of its first row, holding its last
   * roster row (duplicate policy `last`), or its inventory record when no roster row has it.
   */
  private compact(): Uint32Array {
    if (this.order) return this.order;
    this.order = this.number(this.sortedIds()).order;
    return this.order;
  }

  /** Client_ids' hash and physical row, sorted: rows of one client_id together, in row order. */
  private sortedIds(): Float64Array {
    const rows = this.added;
    const byId = new Float64Array(rows);
    for (let i = 0; i < rows; i++) byId[i] = (hashText(this.idAt(i)) & HASH_MASK) * TWO_24 + i;
    return byId.sort();
  }

  /** The lookup `indexOf` searches (the numbers are compact's). */
  private idLookup(): { byId: Float64Array; logicalOf: Uint32Array } {
    const byId = this.sortedIds();
    return { byId, logicalOf: this.number(byId).logicalOf };
  }

  /** Numbers the client_ids of `byId` (see compact): the holder of each, and each physical row's number. */
  private number(byId: Float64Array): { order: Uint32Array; logicalOf: Uint32Array } {
    const rows = byId.length;
    /** For the first row of each client_id, the row that holds it; -1 for every other row. */
    const holder = new Int32Array(rows).fill(-1);
    const firstOf = new Uint32Array(rows);
    for (let run = 0; run < rows; ) {
      const hash = Math.floor(byId[run]! / TWO_24);
      let end = run + 1;
      while (end < rows && Math.floor(byId[end]! / TWO_24) === hash) end++;
      // Within one hash, rows in order; each client_id's first row is the first met.
      for (let i = run; i < end; i++) {
        const physical = byId[i]! % TWO_24;
        let first = physical;
        for (let j = run; j < i; j++) {
          const other = byId[j]! % TWO_24;
          if (this.idAt(other) === this.idAt(physical)) {
            first = firstOf[other]!;
            break;
          }
        }
        firstOf[physical] = first;
        // A roster row replaces an earlier one (`last`) and an inventory record; a record never replaces.
        if (holder[first]! < 0 || this.flags.get(physical) === 0) holder[first] = physical;
      }
      run = end;
    }
    let count = 0;
    for (let i = 0; i < rows; i++) if (holder[i]! >= 0) count++;
    const order = new Uint32Array(count);
    // Each client_id's number, kept by its first row (in `firstOf` then), then given to every row of it.
    const logicalOf = new Uint32Array(rows);
    for (let i = 0, next = 0; i < rows; i++) {
      if (holder[i]! < 0) continue;
      logicalOf[i] = next;
      order[next++] = holder[i]!;
    }
    for (let i = 0; i < rows; i++) logicalOf[i] = logicalOf[firstOf[i]!]!;
    return { order, logicalOf };
  }

  /**
   * The keys (ORCID iDs, or emails) that two rows or more share, found by sorting hashes, not in a
   * Map of every key; each with its rows, in the order a scan of the rows in order meets a second
   * row of it (a block is then listed as a Map of every key, filled in that scan, would list it).
   */
  sharedKeys(tier: 'orcid' | 'email'): { shared: SharedKey[]; sizeOf: ReadonlyMap<string, number> } {
    const { sorted, rowOf, keyOf } = this.sortedKeys(tier);
    const found: Array<SharedKey & { met: number }> = [];
    for (let run = 0; run < sorted.length; ) {
      const hash = Math.floor(sorted[run]! / TWO_24);
      let end = run + 1;
      while (end < sorted.length && Math.floor(sorted[end]! / TWO_24) === hash) end++;
      if (end - run > 1) this.splitRun(sorted.subarray(run, end), rowOf, keyOf, found);
      run = end;
    }
    found.sort((x, y) => x.met - y.met);
    const sizeOf = new Map<string, number>();
    for (const block of found) sizeOf.set(block.key, block.members.length);
    return { shared: found.map(({ key, members }) => ({ key, members })), sizeOf };
  }

  /**
   * A lookup of the keys of one tier that the rows `wanted` accepts: a key to its rows (logical
   * numbers, in order, each once), from sorted hashes; `size` is how many keys it holds.
   */
  keyLookup(tier: 'orcid' | 'email', wanted: (logical: number) => boolean): { size: number; rowsOf: (key: string) => number[] } {
    const { sorted, rowOf, keyOf } = this.sortedKeys(tier, wanted);
    const rowsOf = (key: string): number[] => {
      const hash = hashText(key) & HASH_MASK;
      const rows: number[] = [];
      for (let i = firstOfHash(sorted, hash); i < sorted.length && Math.floor(sorted[i]! / TWO_24) === hash; i++) {
        const seq = sorted[i]! % TWO_24;
        // In scan order: a row that holds the key twice is next to itself.
        if (this.texts.text(keyOf[seq]!) === key && rows[rows.length - 1] !== rowOf[seq]) rows.push(rowOf[seq]!);
      }
      return rows;
    };
    return { size: sorted.length, rowsOf };
  }

  /**
   * Every key of a tier (of the rows `wanted` accepts), numbered in scan order (rows in order,
   * each row's keys in order), sorted by hash then number: `rowOf` and `keyOf` by number.
   */
  private sortedKeys(tier: 'orcid' | 'email', wanted?: (logical: number) => boolean): { sorted: Float64Array; rowOf: Uint32Array; keyOf: Uint32Array } {
    const order = this.compact();
    const texts = this.texts;
    // Counted first, so that the arrays are made once at their size.
    let total = 0;
    for (let logical = 0; logical < order.length; logical++) {
      if (wanted && !wanted(logical)) continue;
      const orcidCount = texts.count(this.record.get(order[logical]!));
      const emailCount = texts.count(texts.next);
      total += tier === 'orcid' ? orcidCount : emailCount;
    }
    const sorted = new Float64Array(total);
    const rowOf = new Uint32Array(total);
    const keyOf = new Uint32Array(total);
    let n = 0;
    for (let logical = 0; logical < order.length; logical++) {
      if (wanted && !wanted(logical)) continue;
      const orcidCount = texts.count(this.record.get(order[logical]!));
      const emailCount = texts.count(texts.next);
      // Past the client_id and the name (and the ORCID iDs, for emails) to the tier's keys, each read where it is.
      let at = texts.skip(texts.skip(texts.next));
      if (tier === 'email') for (let k = 0; k < orcidCount; k++) at = texts.skip(at);
      for (let k = 0, count = tier === 'orcid' ? orcidCount : emailCount; k < count; k++) {
        const key = texts.text(at);
        sorted[n] = (hashText(key) & HASH_MASK) * TWO_24 + n;
        rowOf[n] = logical;
        keyOf[n++] = at;
        at = texts.next;
      }
    }
    return { sorted: sorted.sort(), rowOf, keyOf };
  }

  /** One run of equal hashes (in scan order): its keys by text, those with two rows or more. */
  private splitRun(run: Float64Array, rowOf: Uint32Array, keyOf: Uint32Array, found: Array<SharedKey & { met: number }>): void {
    const byText = new Map<string, { members: number[]; met: number }>();
    for (const entry of run) {
      const seq = entry % TWO_24;
      const key = this.texts.text(keyOf[seq]!);
      const logical = rowOf[seq]!;
      const block = byText.get(key);
      if (block === undefined) byText.set(key, { members: [logical], met: -1 });
      // Entries come in scan order: a row's repeats of a key are next to each other.
      else if (block.members[block.members.length - 1] !== logical) {
        if (block.met < 0) block.met = seq;
        block.members.push(logical);
      }
    }
    for (const [key, block] of byText) if (block.met >= 0) found.push({ key, members: block.members, met: block.met });
  }
}

/** One empty list for every row without a key. */
const NONE: string[] = [];

/**
 * In entries sorted by `hash * 2^24 + number`, the first whose hash is `hash` (or where it would
 * be): a binary search, the entries of that hash following it.
 */
function firstOfHash(sorted: ArrayLike<number>, hash: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (Math.floor(sorted[middle]! / TWO_24) < hash) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** A normalised name's letters as a bitmask (two names with few letters in common are not similar). */
export function nameLetters(name: string): number {
  let letters = 0;
  for (let i = 0; i < name.length; i++) letters |= 1 << (name.charCodeAt(i) & 31);
  return letters;
}

/** Whether a normalised name has an initial (a word of one letter). */
export function isAbbreviated(name: string): boolean {
  return name.split(' ').some((word) => word.length === 1);
}
