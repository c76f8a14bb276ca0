/**
 * Pure detection helpers for the CSV reader, run once on a small sample at the start of the file
 * (never per row): files that are not CSV at all, byte-order marks, the delimiter,
 * and where the header line starts. Decoding and UTF-8 validity are ../encoding/; parsing is rows.ts.
 */
import { SourceError } from '../source-error.js';
import { lineBreaksIn } from '../encoding/bytes.js';

export type CsvDelimiter = ',' | ';' | '\t' | '|';

/** Candidates in order of preference when two score the same. */
export const DELIMITERS: readonly CsvDelimiter[] = [',', ';', '\t', '|'];

export const DELIMITER_NAMES: Record<CsvDelimiter, string> = {
  ',': 'comma',
  ';': 'semicolon',
  '\t': 'tab',
  '|': 'pipe',
};

export type ByteOrderMark = 'utf-8' | 'utf-16le' | 'utf-16be' | 'utf-32le' | 'utf-32be';

export function detectBom(buf: Buffer): { bom: ByteOrderMark; length: number } | undefined {
  const [b0, b1, b2, b3] = [buf[0], buf[1], buf[2], buf[3]];
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) return { bom: 'utf-8', length: 3 };
  if (b0 === 0xff && b1 === 0xfe && b2 === 0 && b3 === 0) return { bom: 'utf-32le', length: 4 };
  if (b0 === 0 && b1 === 0 && b2 === 0xfe && b3 === 0xff) return { bom: 'utf-32be', length: 4 };
  if (b0 === 0xff && b1 === 0xfe) return { bom: 'utf-16le', length: 2 };
  if (b0 === 0xfe && b1 === 0xff) return { bom: 'utf-16be', length: 2 };
  return undefined;
}

/**
 * Byte offset where 1-based line `line` starts, counting `\n`, `\r\n` and lone `\r` as line breaks,
 * or undefined when `buf` has fewer lines. Title lines above the header are plain text, so this
 * does not look at quotes.
 */
export function lineStartOffset(buf: Buffer, line: number, from = 0): number | undefined {
  let remaining = line - 1;
  let pos = from;
  while (remaining > 0) {
    const nl = buf.indexOf(0x0a, pos);
    const cr = buf.indexOf(0x0d, pos);
    if (nl === -1 && cr === -1) return undefined;
    let next: number;
    if (cr !== -1 && (nl === -1 || cr < nl)) {
      if (cr + 1 === buf.length) return undefined; // cannot tell \r from \r\n yet
      next = buf[cr + 1] === 0x0a ? cr + 2 : cr + 1;
    } else {
      next = (nl as number) + 1;
    }
    pos = next;
    remaining--;
  }
  return pos;
}

/** Line breaks (`\n`, `\r\n`, lone `\r`) in a sample, for "the file has only N lines" messages. */
export function countLines(buf: Buffer): number {
  const breaks = lineBreaksIn(buf);
  // A last line without a line break counts too.
  return buf.length > 0 && buf[buf.length - 1] !== 0x0a && buf[buf.length - 1] !== 0x0d ? breaks + 1 : breaks;
}

export interface DelimiterGuess {
  delimiter: CsvDelimiter;
  /** False when no candidate appears in the header line (a one-column file, or not CSV at all). */
  found: boolean;
}

/**
 * Picks the delimiter on the sample text starting at the header line: each candidate is counted
 * outside quotes on each record; the winner appears in the header and has the same count on the
 * most records (then the most columns). `complete` says the sample is the whole file, otherwise its
 * last record may be cut short and is ignored.
 */
export function detectDelimiter(text: string, complete: boolean, maxRecords = 50): DelimiterGuess {
  const records = countDelimitersPerRecord(text, maxRecords + 1);
  if (!complete && records.length > 1) records.pop();
  const usable = records.slice(0, maxRecords);
  let best: { delimiter: CsvDelimiter; consistency: number; columns: number } | undefined;
  for (let c = 0; c < DELIMITERS.length; c++) {
    const delimiter = DELIMITERS[c] as CsvDelimiter;
    const header = usable[0]?.[c] ?? 0;
    if (header === 0) continue;
    let same = 0;
    for (const counts of usable) if (counts[c] === header) same++;
    const consistency = same / usable.length;
    if (
      best === undefined ||
      consistency > best.consistency ||
      (consistency === best.consistency && header > best.columns)
    ) {
      best = { delimiter, consistency, columns: header };
    }
  }
  return best ? { delimiter: best.delimiter, found: true } : { delimiter: ',', found: false };
}

/** Per non-blank record, the count of each candidate in DELIMITERS order, outside double quotes. */
function countDelimitersPerRecord(text: string, maxRecords: number): number[][] {
  const records: number[][] = [];
  let counts = [0, 0, 0, 0];
  let inQuotes = false;
  let nonBlank = false;
  for (let i = 0; i < text.length && records.length < maxRecords; i++) {
    const ch = text[i];
    if (ch === '"') {
      inQuotes = !inQuotes; // "" inside quotes toggles twice, which is what we want
      nonBlank = true;
    } else if (inQuotes) {
      continue;
    } else if (ch === '\n' || ch === '\r') {
      if (nonBlank) records.push(counts);
      counts = [0, 0, 0, 0];
      nonBlank = false;
    } else {
      const index = DELIMITERS.indexOf(ch as CsvDelimiter);
      if (index !== -1) counts[index]!++;
      if (ch !== ' ') nonBlank = true;
    }
  }
  if (nonBlank && records.length < maxRecords) records.push(counts);
  return records;
}

/** Files that are clearly not text get one clear message instead of a page of garbage rows. */
export function checkNotCsv(sample: Buffer, file: string): void {
  if (sample[0] === 0x50 && sample[1] === 0x4b && sample[2] === 0x03 && sample[3] === 0x04) {
    throw new SourceError(file, `${file} is a zip file (probably an Excel workbook), not a CSV file.`, {
      hint: 'Rename it to .xlsx or set `format: xlsx` in the pipeline source, or save it from Excel as "CSV UTF-8".',
    });
  }
  if (sample[0] === 0xd0 && sample[1] === 0xcf && sample[2] === 0x11 && sample[3] === 0xe0) {
    throw new SourceError(file, `${file} is a legacy Excel (.xls) file, not a CSV file.`, {
      hint: 'Open it in Excel and save it as "Excel Workbook (.xlsx)" or "CSV UTF-8".',
    });
  }
  if (detectBom(sample) === undefined && sample.includes(0)) {
    throw new SourceError(file, `${file} contains NUL bytes: it is UTF-16 text or a binary file, not a CSV file.`, {
      hint: 'Re-save it as UTF-8 CSV (in Excel: "CSV UTF-8 (Comma delimited)").',
    });
  }
}

export function chooseDelimiter(
  requested: 'auto' | CsvDelimiter,
  text: string,
  complete: boolean,
  notes: string[],
): CsvDelimiter {
  if (requested !== 'auto') {
    notes.push(`Delimiter: ${DELIMITER_NAMES[requested]} (set in the pipeline).`);
    return requested;
  }
  const guess = detectDelimiter(text, complete);
  notes.push(
    guess.found
      ? `Delimiter: ${DELIMITER_NAMES[guess.delimiter]} (detected).`
      : 'Delimiter: none found in the header line; reading the file as a single column (set csv.delimiter if that is wrong).',
  );
  return guess.delimiter;
}
