/**
 * The identities the same-person check compares (src/mapping/duplicate-people.ts), stored by
 * column so that a million-row roster costs tens of megabytes, not hundreds: one object per row
 * (with its strings and arrays) took about 370 bytes; here a row is a few typed-array cells and
 * its texts as UTF-8 in shared chunks, about 25 bytes plus the bytes of its name, ORCID iDs and
 * emails (the client_id's string is the roster's). Nothing is hashed into a Map per row: a client_id is found, and a later row of the
 * same client_id found to replace an earlier one, by sorting (`compact`).
 *
 * Bounded: at most MAX_STORED_ROWS rows and MAX_STORED_KEYS ORCID iDs and emails (both far above
 * a million-row roster; the packing of sort keys needs them below 2^24), and MAX_TEXT_BYTES of
 * text; `add` answers false past any of them, and the check says it was skipped.
 */
import type { Provenance } from '../sources/types.js';

/** Rows kept at most (the sort keys hold a row number in 24 bits). */
export const MAX_STORED_ROWS = 16_000_000;
/** ORCID iDs and emails kept at most, over all rows. */
export const MAX_STORED_KEYS = 16_000_000;
const CHUNK_BITS = 20;
const CHUNK_BYTES = 1 << CHUNK_BITS;
/** Text positions are 32-bit: 4,095 chunks of 1 MiB. */
const MAX_TEXT_BYTES = 4095 * CHUNK_BYTES;
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
 * Records of texts as UTF-8 in 1 MiB chunks: a record is a few counts and texts, each behind its
 * length (one byte below 128), and never crosses a chunk (a record larger than a chunk gets a
 * buffer of its own, over as many positions). A record, and each text in it, is a position.
 */
class TextPool {
  /** By position / CHUNK_BYTES: the buffer, and where in it that MiB of positions starts. */
  private readonly slots: Array<{ buffer: Buffer; base: number }> = [];
  /** The buffer being filled, its first slot, and the bytes of it used. */
  private buffer: Buffer | undefined;
  private firstSlot = 0;
  private used = CHUNK_BYTES;
  /** The position after the last value read. */
  next = 0;

  /** The record's position, or undefined when the pool is full. */
  add(counts: readonly number[], texts: readonly string[]): number | undefined {
    const lengths = texts.map((text) => Buffer.byteLength(text));
    let room = 0;
    for (const count of counts) room += varintSize(count);
    for (const length of lengths) room += varintSize(length) + length;
    if (this.used + room > CHUNK_BYTES) {
      const slots = Math.ceil(room / CHUNK_BYTES) || 1;
      if ((this.slots.length + slots) * CHUNK_BYTES > MAX_TEXT_BYTES) return undefined;
      const buffer = Buffer.allocUnsafe(slots * CHUNK_BYTES);
      this.firstSlot = this.slots.length;
      for (let slot = 0; slot < slots; slot++) this.slots.push({ buffer, base: slot * CHUNK_BYTES });
      this.buffer = buffer;
      this.used = 0;
    }
    const buffer = this.buffer!;
    const at = this.firstSlot * CHUNK_BYTES + this.used;
    let offset = this.used;
    for (const count of counts) offset = writeVarint(buffer, offset, count);
    texts.forEach((text, i) => {
      offset = writeVarint(buffer, offset, lengths[i]!);
      offset += buffer.write(text, offset, 'utf8');
    });
    this.used = offset;
    return at;
  }

  /** The count at `at`; `next` is the position after it. */
  count(at: number): number {
    const { buffer, base } = this.slots[Math.floor(at / CHUNK_BYTES)]!;
    const start = base + (at % CHUNK_BYTES);
    let offset = start;
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = buffer[offset++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) break;
    }
    this.next = at + (offset - start);
    return value;
  }

  /** The text at `at`; `next` is the position after it. */
  text(at: number): string {
    const length = this.count(at);
    const { buffer, base } = this.slots[Math.floor(at / CHUNK_BYTES)]!;
    const start = base + (this.next - at) + (at % CHUNK_BYTES);
    const text = buffer.toString('utf8', start, start + length);
    this.next += length;
    return text;
  }

  /** Skips the text at `at`: the position after it. */
  skip(at: number): number {
    const length = this.count(at);
    return (this.next += length);
  }
}

function writeVarint(buffer: Buffer, offset: number, value: number): number {
  let rest = value;
  while (rest >= 0x80) {
    buffer[offset++] = (rest % 0x80) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  buffer[offset++] = rest;
  return offset;
}

function varintSize(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;
}

type Typed = Float64Array | Uint32Array | Int32Array | Uint16Array | Uint8Array;

const COLUMN_CHUNK_BITS = 16;
const COLUMN_CHUNK = 1 << COLUMN_CHUNK_BITS;

/**
 * Numbers in typed arrays of 65,536, one more as values are pushed: nothing is copied as it grows
 * (a doubling array leaves its old copies for the collector, outside the heap it watches).
 */
class Column<T extends Typed> {
  private readonly chunks: T[] = [];
  length = 0;

  constructor(private readonly make: (size: number) => T) {}

  push(value: number): void {
    if ((this.length & (COLUMN_CHUNK - 1)) === 0) this.chunks.push(this.make(COLUMN_CHUNK));
    this.chunks[this.chunks.length - 1]![this.length++ & (COLUMN_CHUNK - 1)] = value;
  }

  get(i: number): number {
    return this.chunks[i >>> COLUMN_CHUNK_BITS]![i & (COLUMN_CHUNK - 1)]!;
  }
}

/** A 32-bit FNV-1a hash of a string's UTF-16 code units. */
export function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
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
  private readonly clientIds: string[] = [];
  /** Index + 1 into `places` (file and sheet), 0 without a provenance. */
  private readonly place = new Column((n) => new Uint16Array(n));
  private readonly row = new Column((n) => new Uint32Array(n));
  private readonly affiliation = new Column((n) => new Int32Array(n));
  /** 1: from the inventory (a roster row of its client_id wins). */
  private readonly flags = new Column((n) => new Uint8Array(n));
  /** The row's texts (`texts`): its ORCID iDs' and emails' counts, its name, ORCID iDs and emails. */
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
    return this.clientIds.length;
  }

  /** False when a bound is reached (nothing is added then). */
  add(identity: StoredIdentity, fromInventory: boolean): boolean {
    const keys = this.keys + identity.orcids.length + identity.emails.length;
    if (this.clientIds.length >= MAX_STORED_ROWS || keys > MAX_STORED_KEYS) return false;
    const place = identity.provenance ? this.placeOf(identity.provenance) : 0;
    if (place > 0xffff) return false;
    const record = this.texts.add([identity.orcids.length, identity.emails.length], [identity.name, ...identity.orcids, ...identity.emails]);
    if (record === undefined) return false;
    this.keys = keys;
    this.order = this.lookup = undefined;
    this.clientIds.push(identity.clientId);
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
    return this.clientIds[this.compact()[logical]!]!;
  }

  nameOf(logical: number): string {
    const at = this.record.get(this.compact()[logical]!);
    this.texts.count(at);
    this.texts.count(this.texts.next);
    return this.texts.text(this.texts.next);
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
    const orcidCount = texts.count(this.record.get(at));
    const emailCount = texts.count(texts.next);
    const name = texts.text(texts.next);
    const keys = (count: number) => {
      if (count === 0) return NONE;
      const out: string[] = [];
      for (let k = 0; k < count; k++) out.push(texts.text(texts.next));
      return out;
    };
    const orcids = keys(orcidCount);
    const emails = keys(emailCount);
    let letters = 0;
    for (let i = 0; i < name.length; i++) letters |= 1 << (name.charCodeAt(i) & 31);
    return {
      clientId: this.clientIds[at]!,
      provenance: where === undefined ? undefined : where.sheet === undefined ? { file: where.file, row: this.row.get(at) } : { file: where.file, sheet: where.sheet, row: this.row.get(at) },
      name,
      abbreviated: name.split(' ').some((word) => word.length === 1),
      letters,
      affiliation: this.affiliation.get(at),
      orcids,
      emails,
    };
  }

  /** The logical number of a client_id, or undefined. */
  indexOf(clientId: string): number | undefined {
    const { byId, logicalOf } = (this.lookup ??= this.idLookup());
    const hash = hashText(clientId) & HASH_MASK;
    // The first key of this hash, then each of its rows.
    let low = 0;
    let high = byId.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (Math.floor(byId[middle]! / TWO_24) < hash) low = middle + 1;
      else high = middle;
    }
    for (let i = low; i < byId.length && Math.floor(byId[i]! / TWO_24) === hash; i++) {
      const physical = byId[i]! % TWO_24;
      if (this.clientIds[physical] === clientId) return logicalOf[physical]!;
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
    const rows = this.clientIds.length;
    const byId = new Float64Array(rows);
    for (let i = 0; i < rows; i++) byId[i] = (hashText(this.clientIds[i]!) & HASH_MASK) * TWO_24 + i;
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
          if (this.clientIds[other] === this.clientIds[physical]) {
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
      let low = 0;
      let high = sorted.length;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (Math.floor(sorted[middle]! / TWO_24) < hash) low = middle + 1;
        else high = middle;
      }
      const rows: number[] = [];
      for (let i = low; i < sorted.length && Math.floor(sorted[i]! / TWO_24) === hash; i++) {
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
      // Past the name (and the ORCID iDs, for emails) to the tier's keys, each read where it is.
      let at = texts.skip(texts.next);
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
