/**
 * Byte-level facts of a buffer that the decoder and the CSV sniffer both read: where a UTF-8
 * sequence is cut at the end of a chunk, the first byte that breaks UTF-8, and the line breaks.
 */
import { isUtf8 } from 'node:buffer';

/**
 * How many bytes at the end of `buf` start a UTF-8 sequence that continues in the next chunk
 * (0 when the buffer ends on a character boundary).
 */
export function incompleteUtf8Tail(buf: Buffer): number {
  const len = buf.length;
  for (let back = 1; back <= 3 && back <= len; back++) {
    const byte = buf[len - back] as number;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? back : 0;
  }
  return 0;
}

/** Byte index of the first byte that breaks UTF-8 (`buf.length` when none does). */
export function firstInvalidUtf8Index(buf: Buffer): number {
  for (let i = 0; i < buf.length; ) {
    const lead = buf[i]!;
    if (lead < 0x80) {
      i++;
      continue;
    }
    const length = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (length === 0 || !isUtf8(buf.subarray(i, i + length))) return i;
    i += length;
  }
  return buf.length;
}

/** Line breaks (`\n`, `\r\n` once, lone `\r`) in `buf`; the line of a byte is 1 + those before it. */
export function lineBreaksIn(buf: Buffer): number {
  let breaks = 0;
  for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) breaks++;
  for (let i = buf.indexOf(0x0d); i !== -1; i = buf.indexOf(0x0d, i + 1)) if (buf[i + 1] !== 0x0a) breaks++;
  return breaks;
}
