/**
 * The plan's fast path: which raw rows the inventory already knows, and for which client_id.
 *
 * The inventory stores, beside each record's hash, the key of the raw row that mapped to it
 * (src/mapping/row-key.ts). A row of the roster whose key is found here maps to exactly the
 * record the inventory holds, so the planner takes it as unchanged without mapping it.
 *
 * A million keys in a JS Map cost about 100 MB of heap; this open-addressing table keeps 120 bits
 * of each key in typed arrays and the client_ids packed in one buffer (about 45 MB for a million
 * records, outside the garbage-collected heap). 120 bits of sha1 make a false match between two
 * different rows of a million-row roster about 1e-24 likely.
 */

/** Bits kept per key: 4 words of 30 bits, from the first 20 base64url characters. */
const WORDS = 4;
const CHARS_PER_WORD = 5;
const EMPTY = -1;
/** A key two records claim (only a damaged state can hold that): neither is trusted. */
const AMBIGUOUS = -2;

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const SEXTET = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64URL.length; i++) SEXTET[BASE64URL.charCodeAt(i)] = i;

export class KnownRows {
  private readonly keys: Uint32Array;
  private readonly slots: Int32Array;
  private readonly mask: number;
  /** client_id i is idBytes[idStart[i], idStart[i + 1]) in UTF-8. */
  private readonly idStart: Uint32Array;
  private idBytes: Buffer;
  /** Scratch words of the key being looked up (no allocation per row). */
  private readonly probe = new Uint32Array(WORDS);
  size = 0;

  private constructor(keys: Uint32Array, slots: Int32Array, idStart: Uint32Array, idBytes: Buffer) {
    this.keys = keys;
    this.slots = slots;
    this.mask = slots.length - 1;
    this.idStart = idStart;
    this.idBytes = idBytes;
  }

  /**
   * Builds the table from [row key, client_id] pairs (the store's `rowKeys()`), streamed: at most
   * `expected` of them (the inventory's size) are taken.
   */
  static from(entries: Iterable<readonly [string, string]>, expected: number): KnownRows {
    let capacity = 16;
    while (capacity < expected * 2) capacity *= 2;
    const table = new KnownRows(new Uint32Array(capacity * WORDS), new Int32Array(capacity).fill(EMPTY), new Uint32Array(expected + 1), Buffer.allocUnsafe(expected * 16));
    for (const [rowKey, clientId] of entries) {
      if (table.size === expected) break;
      table.add(rowKey, clientId);
    }
    return table;
  }

  /** The client_id whose stored row key is `rowKey`, if any. */
  clientIdOf(rowKey: string): string | undefined {
    if (!this.readKey(rowKey)) return undefined;
    const probe = this.probe;
    for (let slot = probe[0]! & this.mask; ; slot = (slot + 1) & this.mask) {
      const index = this.slots[slot]!;
      if (index === EMPTY) return undefined;
      if (this.matches(slot)) return index === AMBIGUOUS ? undefined : this.idBytes.toString('utf8', this.idStart[index], this.idStart[index + 1]);
    }
  }

  private add(rowKey: string, clientId: string): void {
    // A stored key that is not a row key (a damaged row) is left out: its row takes the full path.
    if (!this.readKey(rowKey)) return;
    let slot = this.probe[0]! & this.mask;
    for (; this.slots[slot] !== EMPTY; slot = (slot + 1) & this.mask) {
      if (this.matches(slot)) {
        this.slots[slot] = AMBIGUOUS;
        return;
      }
    }
    const index = this.size++;
    const start = this.idStart[index]!;
    const length = Buffer.byteLength(clientId);
    if (start + length > this.idBytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.idBytes.length * 2, start + length));
      this.idBytes.copy(grown, 0, 0, start);
      this.idBytes = grown;
    }
    this.idStart[index + 1] = start + this.idBytes.write(clientId, start);
    this.slots[slot] = index;
    this.keys.set(this.probe, slot * WORDS);
  }

  private matches(slot: number): boolean {
    const at = slot * WORDS;
    const { keys, probe } = this;
    return keys[at] === probe[0] && keys[at + 1] === probe[1] && keys[at + 2] === probe[2] && keys[at + 3] === probe[3];
  }

  /** Fills `probe` with the key's first 120 bits; false when the text is not a base64url sha1. */
  private readKey(rowKey: string): boolean {
    if (rowKey.length !== 27) return false;
    for (let word = 0; word < WORDS; word++) {
      let value = 0;
      for (let i = word * CHARS_PER_WORD, end = i + CHARS_PER_WORD; i < end; i++) {
        const code = rowKey.charCodeAt(i);
        const sextet = code < 128 ? SEXTET[code]! : -1;
        if (sextet < 0) return false;
        value = value * 64 + sextet;
      }
      this.probe[word] = value;
    }
    return true;
  }
}
