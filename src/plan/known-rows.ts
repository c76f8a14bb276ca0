/**
 * The plan's fast path: which raw rows the inventory already knows, and for which client_id.
 *
 * The inventory stores, beside each record's hash, the key of the raw row that mapped to it
 * (src/mapping/row-key.ts). A row of the roster whose key is found here maps to exactly the
 * record the inventory holds, so the planner takes it as unchanged without mapping it.
 *
 * Each record is an entry, numbered from 0. The roster (src/mapping/roster.ts) keeps its first
 * row per entry in a typed array rather than a Map keyed by client_id.
 *
 * Memory matters at a million records. A million keys as strings in a Map cost about 100 MB of
 * heap, and a million client_id strings about 30 MB. So this table keeps:
 * - 90 bits of each key and its entry, 16 bytes a slot in one typed array, so a probe reads one
 *   cache line;
 * - the client_ids as the store's pages give them (joined by NUL, one string per page), found by
 *   their offsets;
 * - an index from client_id to entry, also open addressing.
 * That is about 40 MB for a million records, mostly outside the garbage-collected heap, built in
 * about 200 ms from pages read in about 250 ms. 90 bits of sha1 make a false match within a
 * million-row roster against a million keys about 1e-15 likely.
 */
import { ROW_KEY_LENGTH } from '../mapping/row-key.js';
import type { RowKeyPage } from '../state/backend.js';

/** Words per slot: 3 words of 30 bits of the key (its first 15 base64url characters), then the entry. */
const SLOT_WORDS = 4;
const KEY_WORDS = 3;
const CHARS_PER_WORD = 5;
const EMPTY = 0xffffffff;
/** A key two records claim (only a damaged state can hold that): neither is trusted. */
const AMBIGUOUS = 0xfffffffe;
const NUL = 0;

/** Client_ids to leave out (a Set, or the keys of a Map). */
type ClientIdSet = { has(clientId: string): boolean; readonly size: number };

/** Slots for `count` keys: at most 70 % full (about 2 probes a hit, 6 a miss, with linear probing). */
function capacityFor(count: number): number {
  return Math.max(16, Math.ceil(count / 0.7));
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const SEXTET = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64URL.length; i++) SEXTET[BASE64URL.charCodeAt(i)] = i;

/** FNV-1a over the UTF-16 code units of `text` from `start` to the next NUL or the end. */
function hashId(text: string, start: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === NUL) break;
    hash = Math.imul(hash ^ code, 0x01000193);
  }
  return hash >>> 0;
}

export class KnownRows {
  /** Key slots: SLOT_WORDS words each (the key's bits, then its entry, EMPTY or AMBIGUOUS). */
  private slots: Uint32Array;
  /** The pages' client_ids (joined by NUL), and the first entry of each page (ascending). */
  private readonly pageTexts: string[] = [];
  private readonly pageFirstEntry: number[] = [];
  /** Entry → offset of its client_id in its page's text. */
  private idStart: Int32Array;
  private entries = 0;
  /** client_id → entry (open addressing), built once every page is in. */
  private idSlots = new Uint32Array(0);
  /** Scratch words of the key being looked up (no allocation per row). */
  private readonly probe = new Uint32Array(KEY_WORDS);

  private constructor(expected: number) {
    this.slots = new Uint32Array(capacityFor(expected) * SLOT_WORDS).fill(EMPTY);
    this.idStart = new Int32Array(Math.max(16, expected));
  }

  /**
   * Builds the table from the store's `rowKeyPages()`, a page at a time; `expected` (the
   * inventory's size) sizes it, and it grows if there are more. Records in `skip` (whose last
   * write failed or never finished) are left out: their rows are always mapped.
   */
  static from(pages: Iterable<RowKeyPage>, expected: number, skip: ClientIdSet = new Set()): KnownRows {
    const table = new KnownRows(expected);
    for (const page of pages) table.addPage(page, skip);
    table.indexClientIds();
    return table;
  }

  /** Entries: 0 to count - 1. */
  get count(): number {
    return this.entries;
  }

  /** The entry whose stored row key is `rowKey`, or -1. */
  entryOfRowKey(rowKey: string): number {
    if (rowKey.length !== ROW_KEY_LENGTH || !this.readKey(rowKey, 0)) return -1;
    const { slots } = this;
    const capacity = slots.length / SLOT_WORDS;
    for (let slot = this.probe[0]! % capacity; ; slot = slot + 1 === capacity ? 0 : slot + 1) {
      const entry = slots[slot * SLOT_WORDS + KEY_WORDS]!;
      if (entry === EMPTY) return -1;
      if (this.matches(slot)) return entry === AMBIGUOUS ? -1 : entry;
    }
  }

  /** The entry of `clientId`, or -1. */
  entryOfClientId(clientId: string): number {
    const { idSlots } = this;
    if (idSlots.length === 0) return -1;
    for (let slot = hashId(clientId, 0) % idSlots.length; ; slot = slot + 1 === idSlots.length ? 0 : slot + 1) {
      const entry = idSlots[slot]!;
      if (entry === EMPTY) return -1;
      if (this.idEquals(entry, clientId)) return entry;
    }
  }

  clientIdAt(entry: number): string {
    const text = this.pageTexts[this.pageOf(entry)]!;
    const start = this.idStart[entry]!;
    const end = text.indexOf('\0', start);
    return text.slice(start, end < 0 ? text.length : end);
  }

  private addPage(page: RowKeyPage, skip: ClientIdSet): void {
    const { rowKeys, clientIds: text, count } = page;
    // A page whose keys and client_ids do not line up (only a damaged state) is left out whole:
    // its rows take the full path.
    if (rowKeys.length !== count * ROW_KEY_LENGTH || count === 0) return;
    let ids = 1;
    for (let at = text.indexOf('\0'); at >= 0; at = text.indexOf('\0', at + 1)) ids++;
    if (ids !== count) return;

    if (capacityFor(this.entries + count) > this.slots.length / SLOT_WORDS) this.growSlots(this.entries + count);
    if (this.entries + count > this.idStart.length) {
      const bigger = new Int32Array(Math.max(this.entries + count, Math.ceil(this.idStart.length * 1.5)));
      bigger.set(this.idStart);
      this.idStart = bigger;
    }
    const firstEntry = this.entries;
    for (let i = 0, start = 0; i < count; i++) {
      const end = i + 1 < count ? text.indexOf('\0', start) : text.length;
      // A stored key that is not base64url (a damaged row) is left out: its row takes the full path.
      if ((skip.size === 0 || !skip.has(text.slice(start, end))) && this.readKey(rowKeys, i * ROW_KEY_LENGTH) && this.place(this.entries)) {
        this.idStart[this.entries++] = start;
      }
      start = end + 1;
    }
    if (this.entries === firstEntry) return;
    this.pageFirstEntry.push(firstEntry);
    this.pageTexts.push(text);
  }

  /**
   * Puts the key in `probe` in the first free slot, for `entry`; false when another entry holds
   * the same key (both are then trusted for neither).
   */
  private place(entry: number): boolean {
    const { slots } = this;
    const capacity = slots.length / SLOT_WORDS;
    let slot = this.probe[0]! % capacity;
    for (; slots[slot * SLOT_WORDS + KEY_WORDS] !== EMPTY; slot = slot + 1 === capacity ? 0 : slot + 1) {
      if (this.matches(slot)) {
        slots[slot * SLOT_WORDS + KEY_WORDS] = AMBIGUOUS;
        return false;
      }
    }
    slots.set(this.probe, slot * SLOT_WORDS);
    slots[slot * SLOT_WORDS + KEY_WORDS] = entry;
    return true;
  }

  /** Rehashes the key slots for `count` entries (entries keep their numbers). */
  private growSlots(count: number): void {
    const old = this.slots;
    const slots = new Uint32Array(capacityFor(count) * SLOT_WORDS).fill(EMPTY);
    const capacity = slots.length / SLOT_WORDS;
    for (let at = 0; at < old.length; at += SLOT_WORDS) {
      if (old[at + KEY_WORDS] === EMPTY) continue;
      let slot = old[at]! % capacity;
      while (slots[slot * SLOT_WORDS + KEY_WORDS] !== EMPTY) slot = slot + 1 === capacity ? 0 : slot + 1;
      slots.set(old.subarray(at, at + SLOT_WORDS), slot * SLOT_WORDS);
    }
    this.slots = slots;
  }

  private indexClientIds(): void {
    const idSlots = new Uint32Array(capacityFor(this.entries)).fill(EMPTY);
    for (let page = 0; page < this.pageTexts.length; page++) {
      const text = this.pageTexts[page]!;
      const last = page + 1 < this.pageFirstEntry.length ? this.pageFirstEntry[page + 1]! : this.entries;
      for (let entry = this.pageFirstEntry[page]!; entry < last; entry++) {
        let slot = hashId(text, this.idStart[entry]!) % idSlots.length;
        while (idSlots[slot] !== EMPTY) slot = slot + 1 === idSlots.length ? 0 : slot + 1;
        idSlots[slot] = entry;
      }
    }
    this.idSlots = idSlots;
  }

  /** The page holding `entry` (binary search over the pages' first entries). */
  private pageOf(entry: number): number {
    let low = 0;
    let high = this.pageFirstEntry.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.pageFirstEntry[middle]! <= entry) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  private idEquals(entry: number, clientId: string): boolean {
    const text = this.pageTexts[this.pageOf(entry)]!;
    const start = this.idStart[entry]!;
    const end = start + clientId.length;
    if (end > text.length || (end < text.length && text.charCodeAt(end) !== NUL)) return false;
    for (let i = 0; i < clientId.length; i++) if (text.charCodeAt(start + i) !== clientId.charCodeAt(i)) return false;
    return true;
  }

  private matches(slot: number): boolean {
    const at = slot * SLOT_WORDS;
    const { slots, probe } = this;
    return slots[at] === probe[0] && slots[at + 1] === probe[1] && slots[at + 2] === probe[2];
  }

  /** Fills `probe` with the first 90 bits of the key at `text[at]`; false when it is not base64url. */
  private readKey(text: string, at: number): boolean {
    for (let word = 0; word < KEY_WORDS; word++) {
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
