/**
 * Compact storage for a million rows' texts and numbers outside the JS heap's objects: texts as
 * UTF-8 in shared 1 MiB chunks (TextPool), numbers in typed arrays that grow by chunks (Column).
 * The same-person check's identities (identity-store.ts) and the roster's client_ids with their
 * first row (first-rows.ts) are kept this way: a string and a Map entry per row cost about 60
 * bytes, a client_id here its length plus a few.
 */

const CHUNK_BITS = 20;
const CHUNK_BYTES = 1 << CHUNK_BITS;
/** Text positions are 32-bit: 4,095 chunks of 1 MiB. */
const MAX_TEXT_BYTES = 4095 * CHUNK_BYTES;

/**
 * Records of texts as UTF-8 in 1 MiB chunks: a record is a few counts and texts, each behind its
 * length (one byte below 128), and never crosses a chunk (a record larger than a chunk gets a
 * buffer of its own, over as many positions). A record, and each text in it, is a position.
 */
export class TextPool {
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

  /**
   * Whether the text at `at` is `text`; `next` is the position after it. A plain ASCII text is
   * compared in place, byte by byte: no string is made.
   */
  equals(at: number, text: string): boolean {
    const length = this.count(at);
    const { buffer, base } = this.slots[Math.floor(at / CHUNK_BYTES)]!;
    const start = base + (this.next - at) + (at % CHUNK_BYTES);
    this.next += length;
    if (length === text.length) {
      // As many bytes as UTF-16 units: equal only as plain ASCII (any other character takes more bytes).
      for (let i = 0; i < length; i++) {
        const c = text.charCodeAt(i);
        if (c >= 0x80 || buffer[start + i] !== c) return false;
      }
      return true;
    }
    return length > text.length && buffer.toString('utf8', start, start + length) === text;
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
export class Column<T extends Typed> {
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

  set(i: number, value: number): void {
    this.chunks[i >>> COLUMN_CHUNK_BITS]![i & (COLUMN_CHUNK - 1)] = value;
  }
}

/** A 32-bit FNV-1a hash of a string's UTF-16 code units. */
export function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}


/**
 * Texts with a surrogate, kept as strings beside the pool: UTF-8 would not give a lone one back as
 * it was (it becomes U+FFFD), and a paired one (an emoji) is rare enough in a client_id to keep
 * with them. No roster seen has either; they must still be found.
 */
export function mustStayString(text: string): boolean {
  return /[\uD800-\uDFFF]/.test(text);
}
