/**
 * Zip-bomb guard for the parts of a workbook that are actually read. Parts that are
 * never opened (other sheets, images, pivot caches) are not looked at: a real workbook with one
 * huge sheet must still be readable when the roster sheet is small.
 *
 * Limits, chosen from measurements (docs/mapping.md, "XLSX: zip-bomb guard"): real workbook XML
 * compresses between about 5:1 and 40:1 (a 50 MB sheet written by LibreOffice, XlsxWriter or
 * exceljs stays below 40:1). A part is refused when it inflates past BOMB_MIN_BYTES *and* past
 * BOMB_RATIO times its compressed size. Parts held whole in memory (shared strings, styles, the
 * workbook and its relationships) also have an absolute cap; the sheet itself is streamed, so its
 * size costs time, not memory, and has no cap beyond the ratio.
 *
 * Checked twice: on the sizes the central directory declares (before reading) and on the bytes
 * actually inflated (while reading), so a forged directory does not get through.
 */
import { SourceError } from '../source-error.js';

export const BOMB_MIN_BYTES = 32 * 1024 * 1024;
export const BOMB_RATIO = 100;
/** Largest part held whole in memory (shared strings, styles...): far above any roster's. */
export const IN_MEMORY_PART_MAX_BYTES = 512 * 1024 * 1024;

export interface GuardedPart {
  /** Part name inside the zip, for messages. */
  name: string;
  compressedSize: number;
  /** Whether the whole part is kept in memory (then the absolute cap applies). */
  heldInMemory: boolean;
}

const HINT = 'Open the workbook in Excel, delete what the roster does not need and save it again, or export the roster sheet as CSV.';

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Throws when `inflatedBytes` of the part (declared or counted so far) look like a zip bomb. */
export function checkInflatedSize(file: string, part: GuardedPart, inflatedBytes: number): void {
  if (inflatedBytes > BOMB_MIN_BYTES && inflatedBytes > part.compressedSize * BOMB_RATIO) {
    throw new SourceError(
      file,
      `${file} looks like a zip bomb: its part ${part.name} inflates from ${mb(part.compressedSize)} to ${mb(inflatedBytes)} ` +
        `(${Math.round(inflatedBytes / Math.max(part.compressedSize, 1))}:1), far more than a roster holds.`,
      { hint: HINT },
    );
  }
  if (part.heldInMemory && inflatedBytes > IN_MEMORY_PART_MAX_BYTES) {
    throw new SourceError(
      file,
      `${file}: its part ${part.name} inflates to more than ${mb(IN_MEMORY_PART_MAX_BYTES)}, far more than a roster holds, and would have to be held in memory.`,
      { hint: HINT },
    );
  }
}
