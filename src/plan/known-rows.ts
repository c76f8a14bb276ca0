/**
 * The plan's fast path: which raw rows the inventory already knows, and for which client_id.
 *
 * The inventory stores, beside each record's hash, the key of the raw row that mapped to it
 * (src/mapping/row-key.ts). A row of the roster whose key is found here maps to exactly the
 * record the inventory holds, so the planner takes it as unchanged without mapping it.
 *
 * A million keys as strings in a JS Map cost about 100 MB of heap; this open-addressing table
 * keeps 120 bits of each key in typed arrays (about 29 MB for a million records, outside the
 * garbage-collected heap), and the client_id strings once (the roster's id map reuses them).
 * 120 bits of sha1 make a false match within a million-row roster about 1e-24 likely.
 */
import { ROW_KEY_LENGTH } from '../mapping/row-key.js';
import type { RowKeyPage } from '../state/store.js';

/** Bits kept per key: 4 words of 30 bits, from the first 20 base64url characters. */
const WORDS = 4;
const CHARS_PER_WORD = 5;
const EMPTY = -1;
/** A key two records claim (only a damaged state can hold that): neither is trusted. */
const AMBIGUOUS = -2;

/** Slots for `count` keys: at most 70 % full (about 2 probes a hit, 6 a miss, with linear probing). */
function capacityFor(count: number): number {
  return Math.max(16, Math.ceil(count / 0.7));
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const SEXTET = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64URL.length; i++) SEXTET[BASE64URL.charCodeAt(i)] = i;

export class KnownRows {
  private readonly keys: Uint32Array;
  private readonly slots: Int32Array;
  private readonly clientIds: string[] = [];
  /** Scratch words of the key being looked up (no allocation per row). */
  private readonly probe = new Uint32Array(WORDS);

  private constructor(capacity: number) {
    this.keys = new Uint32Array(capacity * WORDS);
    this.slots = new Int32Array(capacity).fill(EMPTY);
  }

  /**
   * Builds the table from the store's `rowKeyPages()`, a page at a time; `expected` (the
   * inventory's size) sizes it, and it grows if there are more.
   */
  static from(pages: Iterable<RowKeyPage>, expected: number): KnownRows {
    let table = new KnownRows(capacityFor(expected));
    for (const page of pages) {
      // A page whose keys are not all ROW_KEY_LENGTH characters (only a damaged state) is left
      // out whole: its rows take the full path.
      if (page.rowKeys.length !== page.clientIds.length * ROW_KEY_LENGTH) continue;
      if (capacityFor(table.size + page.clientIds.length) > table.slots.length) table = table.grown(table.size + page.clientIds.length);
      for (let i = 0; i < page.clientIds.length; i++) table.add(page.rowKeys, i * ROW_KEY_LENGTH, page.clientIds[i]!);
    }
    return table;
  }

  get size(): number {
    return this.clientIds.length;
  }

  /** The client_id whose stored row key is `rowKey`, if any. */
  clientIdOf(rowKey: string): string | undefined {
    if (rowKey.length !== ROW_KEY_LENGTH || !this.readKey(rowKey, 0)) return undefined;
    for (let slot = this.probe[0]! % this.slots.length; ; slot = slot + 1 === this.slots.length ? 0 : slot + 1) {
      const index = this.slots[slot]!;
      if (index === EMPTY) return undefined;
      if (this.matches(slot)) return index === AMBIGUOUS ? undefined : this.clientIds[index];
    }
  }

  /** The same entries in a table sized for `count`. */
  private grown(count: number): KnownRows {
    const bigger = new KnownRows(capacityFor(count));
    for (let slot = 0; slot < this.slots.length; slot++) {
      const index = this.slots[slot]!;
      if (index === EMPTY) continue;
      const word = slot * WORDS;
      bigger.probe.set(this.keys.subarray(word, word + WORDS));
      bigger.place(index === AMBIGUOUS ? AMBIGUOUS : bigger.clientIds.push(this.clientIds[index]!) - 1);
    }
    return bigger;
  }

  private add(text: string, at: number, clientId: string): void {
    // A stored key that is not base64url (a damaged row) is left out: its row takes the full path.
    if (!this.readKey(text, at)) return;
    for (let slot = this.probe[0]! % this.slots.length; this.slots[slot] !== EMPTY; slot = slot + 1 === this.slots.length ? 0 : slot + 1) {
      if (this.matches(slot)) {
        this.slots[slot] = AMBIGUOUS;
        return;
      }
    }
    this.place(this.clientIds.push(clientId) - 1);
  }

  /** Puts the key in `probe` (not yet in the table) in the first free slot, for entry `index`. */
  private place(index: number): void {
    let slot = this.probe[0]! % this.slots.length;
    while (this.slots[slot] !== EMPTY) slot = slot + 1 === this.slots.length ? 0 : slot + 1;
    this.slots[slot] = index;
    this.keys.set(this.probe, slot * WORDS);
  }

  private matches(slot: number): boolean {
    const at = slot * WORDS;
    const { keys, probe } = this;
    return keys[at] === probe[0] && keys[at + 1] === probe[1] && keys[at + 2] === probe[2] && keys[at + 3] === probe[3];
  }

  /** Fills `probe` with the first 120 bits of the key at `text[at]`; false when it is not base64url. */
  private readKey(text: string, at: number): boolean {
    for (let word = 0; word < WORDS; word++) {
      let value = 0;
      for (let i = at + word * CHARS_PER_WORD, end = i + CHARS_PER_WORD; i < end; i++) {
        const code = text.charCodeAt(i);
        const sextet = code < 128 ? SEXTET[code]! : -1;
        if (sextet < 0) return false;
        value = value * 64 + sextet;
      }
      this.probe[word] = value;
    }
    return true;
  }
}
