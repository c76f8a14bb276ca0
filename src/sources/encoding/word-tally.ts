/**
 * The non-ASCII words of a whole file, for the encoding detector (detect.ts): each distinct
 * run of bytes between delimiters that holds a byte above 0x7F, how often it occurs, and the line
 * it first occurs on. The detector weighs these, so its decision rests on every non-ASCII byte of
 * the file, not on a sample, and each word's reading can be checked before a row is read.
 *
 * Words are cut at the bytes no legacy encoding uses inside a character (tab, line breaks, space,
 * comma, semicolon, quote): a double-byte character of Shift_JIS or Big5 never holds one, so a
 * word decodes alone as it does in the file. Memory is bounded: at most MAX_WORDS distinct words
 * of at most MAX_WORD_BYTES are kept (rosters repeat names and affiliations); a file with more is
 * still weighed on those, and the reader checks every later chunk as it decodes it.
 */
import { open } from 'node:fs/promises';

export const MAX_WORDS = 100_000;
const MAX_WORD_BYTES = 256;
const TALLY_CHUNK_BYTES = 1024 * 1024;

export interface TalliedWord {
  /** The word's bytes. */
  bytes: Buffer;
  count: number;
  /** Line of the file where it first occurs. */
  line: number;
}

export interface WordTally {
  words: Map<string, TalliedWord>;
  /** Distinct words left out once MAX_WORDS were kept. */
  dropped: number;
}

const CUTS = new Uint8Array(256);
for (const byte of [0x09, 0x0a, 0x0d, 0x20, 0x22, 0x2c, 0x3b]) CUTS[byte] = 1;

/** Adds the non-ASCII words of `bytes` (starting on line `line`) to the tally; returns the next line's number. */
export function tallyWords(bytes: Buffer, line: number, tally: WordTally): number {
  let start = 0;
  let high = false;
  for (let i = 0; i <= bytes.length; i++) {
    const byte = i < bytes.length ? (bytes[i] as number) : 0x0a;
    if (byte > 0x7f) {
      high = true;
      continue;
    }
    if (CUTS[byte] === 0) continue;
    if (high) addWord(tally, bytes.subarray(start, Math.min(i, start + MAX_WORD_BYTES)), line);
    high = false;
    start = i + 1;
    // A line break: LF, or CR not followed by LF (classic Mac); the last line's end is no break.
    if (i < bytes.length && (byte === 0x0a || (byte === 0x0d && bytes[i + 1] !== 0x0a))) line++;
  }
  return line;
}

function addWord(tally: WordTally, bytes: Buffer, line: number): void {
  const key = bytes.toString('latin1');
  const known = tally.words.get(key);
  if (known) known.count++;
  else if (tally.words.size < MAX_WORDS) tally.words.set(key, { bytes: Buffer.from(bytes), count: 1, line });
  else tally.dropped++;
}

/** The tally of a whole file from `offset` (which starts line `firstLine`) to its end. */
export async function tallyFile(path: string, offset: number, firstLine: number): Promise<WordTally> {
  const tally: WordTally = { words: new Map(), dropped: 0 };
  const handle = await open(path, 'r');
  const buf = Buffer.alloc(TALLY_CHUNK_BYTES);
  let line = firstLine;
  let carry = Buffer.alloc(0);
  try {
    for (let pos = offset; ; ) {
      const { bytesRead } = await handle.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      const bytes = carry.length > 0 ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
      // The last word (and a CR that may be half of a CRLF) waits for the next chunk.
      let cut = bytes.length;
      while (cut > 0 && (CUTS[bytes[cut - 1] as number] === 0 || bytes[cut - 1] === 0x0d)) cut--;
      if (bytes.length - cut > MAX_WORD_BYTES * 4) cut = bytes.length;
      line = tallyWords(bytes.subarray(0, cut), line, tally);
      carry = Buffer.from(bytes.subarray(cut));
    }
    tallyWords(carry, line, tally);
  } finally {
    await handle.close();
  }
  return tally;
}

/** The tally of a buffer held in memory (a sample, or a whole small file). */
export function tallyBuffer(bytes: Buffer, firstLine = 1): WordTally {
  const tally: WordTally = { words: new Map(), dropped: 0 };
  tallyWords(bytes, firstLine, tally);
  return tally;
}
