/**
 * csv-parse's `Parser`, emitting rostersync's `SourceItem`s (rows with provenance, or errors that
 * name the line) instead of string arrays.
 */
import { Parser, type CsvError } from 'csv-parse';
import type { TransformCallback } from 'node:stream';
import { PackedRow } from './cells-text.js';
import { CELL_SEPARATOR, type CellValue, type SourceItem } from './types.js';
import type { CsvDelimiter } from './csv-sniff.js';
import { headerNames, truncate } from './headers.js';
import { SourceError } from './source-error.js';

/**
 * A quoted cell longer than this is taken as a quote that was never closed: reading stops with a
 * SourceError instead of pulling the rest of the file into one cell (memory stays bounded).
 */
export const MAX_QUOTED_CELL_BYTES = 1024 * 1024;

interface RosterCsvParserArgs {
  file: string;
  /** Rows as `PackedRow`s (cells joined in one string, no object per row): for the worker-thread reader. */
  packRows?: boolean;
  delimiter: CsvDelimiter;
  /** Physical lines skipped before the stream starts (title lines above the header). */
  lineOffset: number;
  headerRow: number;
}

/**
 * csv-parse's `Parser`, emitting `SourceItem`s instead of string arrays. Records are converted in
 * `push`, which csv-parse calls synchronously for each record, so `this.info` is live: `lines` is
 * the line on which the record ends and `empty_lines` the blank lines skipped so far.
 *
 * Line numbers: a record starts on the line after the previous record ended, plus any blank lines
 * skipped in between. csv-parse counts a CRLF inside a quoted field as two lines, so for records
 * spanning lines (rare, checked only then) the CRLFs inside fields are subtracted.
 */
/** Cells beyond the header that a message quotes; the rest are counted. */
const EXTRA_CELLS_SHOWN = 3;

export class RosterCsvParser extends Parser {
  headers: string[] = [];
  headerLine = 0;
  readonly headerReady: Promise<void>;
  /** Resolves true when a first item after the header was produced, false when the file ended first. */
  readonly firstItemOrEnd: Promise<boolean>;

  private readonly file: string;
  private readonly packRows: boolean;
  private readonly lineOffset: number;
  private readonly headerRow: number;
  private readonly delimiter: string;
  private headerDone = false;
  private prevEnd = 0;
  private prevEmpty = 0;
  private crlfOvercount = 0;
  private spanStart = 0;
  private spanEnd = 0;
  private resolveHeader!: () => void;
  private rejectHeader!: (error: unknown) => void;
  private resolveFirst!: (seen: boolean) => void;

  constructor(args: RosterCsvParserArgs) {
    super({
      delimiter: args.delimiter,
      // Quotes inside unquoted fields (`Dr. "Bob" Smith`) are kept as text; a quote that opens a
      // field and swallows following lines is caught in recordToItem.
      relax_quotes: true,
      relax_column_count: true,
      skip_empty_lines: true,
      skip_records_with_error: true,
    });
    this.file = args.file;
    this.packRows = args.packRows ?? false;
    this.lineOffset = args.lineOffset;
    this.headerRow = args.headerRow;
    this.delimiter = args.delimiter;
    this.headerReady = new Promise<void>((resolve, reject) => {
      this.resolveHeader = resolve;
      this.rejectHeader = reject;
    });
    this.headerReady.catch(() => undefined);
    this.firstItemOrEnd = new Promise<boolean>((resolve) => {
      this.resolveFirst = resolve;
    });
    this.on('skip', (error: CsvError) => this.onSkip(error));
    this.on('error', (error) => {
      this.rejectHeader(error);
      this.resolveFirst(false);
    });
  }

  /** Bytes handed to the parser so far (csv-parse's `info.bytes` stops at the last delimiter it saw). */
  private fed = 0;

  override _transform(chunk: Buffer, encoding: BufferEncoding, callback: TransformCallback): void {
    // csv-parse advances `info.bytes` at each delimiter outside quotes. A megabyte fed without one
    // is a quote that was never closed (a file with NUL bytes, the other way to get there, was
    // refused before parsing): stop instead of pulling the rest of the file into one cell.
    if (this.fed - this.info.bytes > MAX_QUOTED_CELL_BYTES) {
      const row = this.prevEnd + 1 + (this.info.empty_lines - this.prevEmpty) + this.lineOffset;
      callback(
        new SourceError(
          this.file,
          `${this.file}: a quote (") opened on line ${row} is still open ${MAX_QUOTED_CELL_BYTES / 1024 / 1024} MB later, ` +
            `so the rest of the file cannot be read (rows before line ${row} were read).`,
          { hint: `Fix the quoting on line ${row}: put quotes around the whole cell, and double any quote inside it.` },
        ),
      );
      return;
    }
    this.fed += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    super._transform(chunk, encoding, callback);
  }

  // csv-parse calls push(record) per record and push(null) at the end.
  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null) {
      if (!this.headerDone) {
        this.rejectHeader(
          new SourceError(this.file, `${this.file} has no header row: from line ${this.headerRow} on it holds only blank lines.`, {
            hint: 'Export the roster again with its column names, or fix csv.header_row.',
          }),
        );
      }
      this.resolveFirst(false);
      return super.push(null, encoding);
    }
    const item = this.recordToItem(chunk as string[]);
    if (item === undefined) return true;
    this.resolveFirst(true);
    return super.push(item);
  }

  /**
   * Sets `spanStart`/`spanEnd` to the physical lines of the record csv-parse just finished, and
   * keeps the bookkeeping for the next one. Fields, not a returned object: this runs per row.
   */
  private measureSpan(record: readonly string[] | undefined): void {
    const info = this.info;
    const start = this.prevEnd + 1 + (info.empty_lines - this.prevEmpty);
    let end = info.lines - this.crlfOvercount;
    if (end > start && record !== undefined) {
      for (const field of record) {
        for (let at = field.indexOf('\r\n'); at !== -1; at = field.indexOf('\r\n', at + 2)) this.crlfOvercount++;
      }
      end = Math.max(start, info.lines - this.crlfOvercount);
    }
    this.prevEnd = end;
    this.prevEmpty = info.empty_lines;
    this.spanStart = start;
    this.spanEnd = end;
  }

  private recordToItem(record: string[]): SourceItem | undefined {
    this.measureSpan(record);
    const start = this.spanStart;
    const end = this.spanEnd;
    const row = start + this.lineOffset;
    if (!this.headerDone) {
      this.acceptHeader(record, row);
      return undefined;
    }
    if (end > start) {
      // A field that still starts with a quote was never properly closed: csv-parse (relaxed) kept
      // reading until some later quote, swallowing the lines in between into one cell.
      for (const field of record) {
        if (field.charCodeAt(0) === 0x22 && (field.includes('\n') || field.includes('\r'))) {
          return this.errorItem(
            row,
            `Lines ${row}–${end + this.lineOffset} were read as one row because a quote (") opened on line ${row} ` +
              `is closed only on line ${end + this.lineOffset}. Fix the quoting on line ${row} (put quotes around the whole cell, ` +
              'and double any quote inside it) and read the file again.',
            field,
          );
        }
      }
    }
    const headers = this.headers;
    const count = headers.length;
    // Packed: the cells joined by CELL_SEPARATOR, an empty cell as nothing (the file holds no NUL:
    // the decoder refuses it), else one object keyed by header.
    const values: Record<string, CellValue> = {};
    let text = '';
    let filled = 0;
    for (let i = 0; i < count; i++) {
      const raw = record[i];
      let value: string | null = null;
      if (raw !== undefined && raw.length !== 0) {
        const trimmed = raw.trim();
        if (trimmed.length !== 0) {
          value = trimmed;
          filled++;
        }
      }
      if (this.packRows) text += i === 0 ? (value ?? '') : `${CELL_SEPARATOR}${value ?? ''}`;
      else values[headers[i] as string] = value;
    }
    if (record.length > count) {
      // Bounded whatever the row: a count and the first few cells (one 100,000-cell row once made
      // a 2.4 MB message, kept for the report with every other such row).
      const shown: string[] = [];
      let nonEmpty = 0;
      for (let i = count; i < record.length; i++) {
        const cell = (record[i] as string).trim();
        if (cell.length === 0) continue;
        nonEmpty++;
        if (shown.length < EXTRA_CELLS_SHOWN) shown.push(`column ${i + 1}: "${truncate(cell, 40)}"`);
      }
      if (nonEmpty > 0) {
        const more = nonEmpty > shown.length ? `, … and ${nonEmpty - shown.length} more` : '';
        return this.errorItem(
          row,
          `Line ${row} has ${record.length} cells but the header has ${count} columns; ${nonEmpty} value${nonEmpty === 1 ? '' : 's'} beyond the header (${shown.join(', ')}${more}). ` +
            'Remove the stray delimiter or quote the cell that contains it, or add a column name to the header.',
          record.slice(0, count + EXTRA_CELLS_SHOWN).join(this.delimiter),
        );
      }
    }
    if (filled === 0) return undefined; // a line of empty cells (e.g. ";;;;") counts as blank
    const provenance = { file: this.file, row };
    return { kind: 'row', row: this.packRows ? new PackedRow(text, provenance, headers) : { values, provenance } };
  }

  private acceptHeader(record: string[], line: number): void {
    this.headerDone = true;
    this.headerLine = line;
    try {
      this.headers = headerNames(
        record.map((cell) => {
          const trimmed = cell.trim();
          return trimmed.length === 0 ? null : trimmed;
        }),
        { file: this.file, where: `line ${line}`, columnLabel: (index) => `column ${index + 1}` },
      );
      this.resolveHeader();
    } catch (error) {
      this.rejectHeader(error);
    }
  }

  private onSkip(error: CsvError): void {
    // With relax_quotes the only error left is a quote still open at the end of the file.
    this.measureSpan(undefined);
    const row = this.spanStart + this.lineOffset;
    const last = this.spanEnd + this.lineOffset;
    const message =
      error.code === 'CSV_QUOTE_NOT_CLOSED'
        ? `A quote (") opened on line ${row} is never closed, so ${last > row ? `lines ${row}–${last}` : `line ${row}`} could not be read. ` +
          'Fix the quoting on that line (put quotes around the whole cell, and double any quote inside it).'
        : `Line ${row} could not be read: ${error.message}`;
    if (!this.headerDone) {
      this.headerDone = true;
      this.rejectHeader(new SourceError(this.file, `${this.file}: the header row could not be read. ${message}`));
      return;
    }
    const item = this.errorItem(row, message, undefined);
    this.resolveFirst(true);
    super.push(item);
  }

  private errorItem(row: number, message: string, raw: string | undefined): SourceItem {
    return {
      kind: 'error',
      error: {
        provenance: { file: this.file, row },
        message,
        ...(raw === undefined ? {} : { raw: truncate(raw, 200) }),
      },
    };
  }
}
