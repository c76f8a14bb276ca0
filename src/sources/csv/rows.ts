/**
 * The CSV records of a roster (split-records.ts) as rostersync's `SourceItem`s: rows with
 * provenance, or errors that name the line, the cell and the cause.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { PackedRow } from '../cells-text.js';
import { CELL_SEPARATOR, type CellValue, type SourceItem } from '../types.js';
import type { CsvDelimiter } from './sniff.js';
import { CsvTokenizer, type CsvRecordInfo } from './split-records.js';
import { headerNames, truncate } from '../headers.js';
import { SourceError } from '../source-error.js';

/**
 * A record longer than this (in characters) is a quote that was never closed, or a line that is no
 * roster line: reading stops with a SourceError instead of pulling the rest of the file into one
 * cell (memory stays bounded).
 */
export const MAX_RECORD_CHARS = 1024 * 1024;

interface RosterCsvParserArgs {
  file: string;
  /** Rows as `PackedRow`s (cells joined in one string, no object per row): for the worker-thread reader. */
  packRows?: boolean;
  delimiter: CsvDelimiter;
  /** Physical lines skipped before the stream starts (title lines above the header). */
  lineOffset: number;
  headerRow: number;
  /** Adds a note to the source's notes (read after the rows). */
  note?: (text: string) => void;
}

/** Cells beyond the header that a message quotes; the rest are counted. */
const EXTRA_CELLS_SHOWN = 3;

/**
 * Text in, `SourceItem`s out. Records are converted as the tokenizer finds them, so a row costs
 * its cells and one item; line numbers are physical lines, counted by the tokenizer.
 */
export class RosterCsvParser extends Transform {
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
  private readonly note: (text: string) => void;
  private notedTextAfterQuote = false;
  private readonly tokenizer: CsvTokenizer;
  private readonly utf8 = new StringDecoder('utf8');
  private headerDone = false;
  private failure: Error | undefined;
  private resolveHeader!: () => void;
  private rejectHeader!: (error: unknown) => void;
  private resolveFirst!: (seen: boolean) => void;

  constructor(args: RosterCsvParserArgs) {
    super({ readableObjectMode: true, decodeStrings: false });
    this.file = args.file;
    this.packRows = args.packRows ?? false;
    this.lineOffset = args.lineOffset;
    this.headerRow = args.headerRow;
    this.delimiter = args.delimiter;
    this.note = args.note ?? (() => undefined);
    this.tokenizer = new CsvTokenizer(args.delimiter.charCodeAt(0), (fields, info) => this.onRecord(fields, info), MAX_RECORD_CHARS);
    this.headerReady = new Promise<void>((resolve, reject) => {
      this.resolveHeader = resolve;
      this.rejectHeader = reject;
    });
    this.headerReady.catch(() => undefined);
    this.firstItemOrEnd = new Promise<boolean>((resolve) => {
      this.resolveFirst = resolve;
    });
    this.on('error', (error) => {
      this.rejectHeader(error);
      this.resolveFirst(false);
    });
  }

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.feed(typeof chunk === 'string' ? chunk : this.utf8.write(chunk), false, callback);
  }

  override _flush(callback: TransformCallback): void {
    this.feed(this.utf8.end(), true, (error) => {
      if (error) {
        callback(error);
        return;
      }
      if (!this.headerDone) {
        this.rejectHeader(
          new SourceError(this.file, `${this.file} has no header row: from line ${this.headerRow} on it holds only blank lines.`, {
            hint: 'Export the roster again with its column names, or fix csv.header_row.',
          }),
        );
      }
      this.resolveFirst(false);
      callback();
    });
  }

  private feed(text: string, final: boolean, callback: TransformCallback): void {
    const overlong = this.tokenizer.push(text, final);
    if (this.failure) {
      callback(this.failure);
      return;
    }
    if (overlong === undefined) {
      callback();
      return;
    }
    const row = overlong.startLine + this.lineOffset;
    const mb = MAX_RECORD_CHARS / 1024 / 1024;
    const read = `so the rest of the file cannot be read (rows before line ${row} were read)`;
    const fixQuotes = { hint: `Fix the quoting on line ${row}: put quotes around the whole cell, and double any quote inside it.` };
    callback(
      overlong.kind === 'open-quote'
        ? new SourceError(this.file, `${this.file}: a quote (") opened on line ${row} is still open ${mb} MB later, ${read}.`, fixQuotes)
        : new SourceError(
            this.file,
            `${this.file}: line ${row} runs on for more than ${mb} MB without a line break (and it has no open quote), so it is not a roster row; the rest of the file cannot be read (rows before line ${row} were read).`,
            { hint: `Look at line ${row}: the file may be damaged, or hold binary data or an embedded document. Export the roster again.` },
          ),
    );
  }

  private onRecord(fields: string[], info: Readonly<CsvRecordInfo>): void {
    if (this.failure) return;
    const item = this.recordToItem(fields, info);
    if (item === undefined) return;
    this.resolveFirst(true);
    this.push(item);
  }

  private recordToItem(record: string[], info: Readonly<CsvRecordInfo>): SourceItem | undefined {
    const row = info.startLine + this.lineOffset;
    const end = info.endLine + this.lineOffset;
    if (!this.headerDone) {
      this.acceptHeader(record, row, info);
      return undefined;
    }
    if (info.unclosed) {
      return this.errorItem(
        row,
        `A quote (") opened on line ${row} is never closed, so ${end > row ? `lines ${row}–${end}` : `line ${row}`} could not be read. ` +
          'Fix the quoting on that line (put quotes around the whole cell, and double any quote inside it).',
        undefined,
      );
    }
    if (info.multiLine !== -1 && (info.textAfterQuote !== -1 || record.length > this.headers.length)) {
      // A quote that was never closed where it should have been: the lines up to some later quote
      // were read as one cell, which then ends oddly (text after its closing quote, where RFC 4180
      // has none and Excel and Python read on in their own ways) or leaves too many cells. A
      // multi-line cell closed as RFC 4180 says is read as written, even when its lines look like
      // rows: Excel and Python read it so too.
      return this.errorItem(
        row,
        `Lines ${row}–${end} were read as one row because a quote (") opened on line ${row} ` +
          `is closed only on line ${end}. Fix the quoting on line ${row} (put quotes around the whole cell, ` +
          'and double any quote inside it) and read the file again.',
        record[info.multiLine],
      );
    }
    if (info.strayQuote !== -1) {
      const column = info.strayQuote;
      return this.errorItem(
        row,
        `Line ${row}, column ${column + 1} (${JSON.stringify(this.headers[column] ?? '')}): the cell's closing quote (") is followed by more text and then another quote, ` +
          'which spreadsheet programs and CSV readers split in different ways, so the row is not read. ' +
          'Fix the quoting: put quotes around the whole cell, and double every quote inside it.',
        record[column],
      );
    }
    if (info.textAfterQuote !== -1 && !this.notedTextAfterQuote) {
      this.notedTextAfterQuote = true;
      this.note(
        `Line ${row}, column ${info.textAfterQuote + 1}: text follows the cell's closing quote (as in "Smith, John" Jr); ` +
          'it was read as Excel and Python read it, joined to the cell (Smith, John Jr), here and in any later cell like it.',
      );
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

  private acceptHeader(record: string[], line: number, info: Readonly<CsvRecordInfo>): void {
    this.headerDone = true;
    this.headerLine = line;
    const bad = info.unclosed ? record.length - 1 : info.strayQuote !== -1 ? info.strayQuote : info.textAfterQuote;
    // A quoted header cell holding delimiters and line breaks, closed as RFC 4180 says, is a column name like any other.
    if (bad !== -1) {
      // Column names decide where every value goes: a header whose quoting is malformed is refused
      // rather than read one way among several.
      const cause = info.unclosed
        ? `a quote (") opened in column ${bad + 1} is never closed`
        : info.multiLine !== -1 && info.endLine > info.startLine
          ? `a quote (") opened in column ${info.multiLine + 1} runs on to line ${info.endLine + this.lineOffset}`
          : `column ${bad + 1} has text after its closing quote (")`;
      this.failWith(
        new SourceError(this.file, `${this.file}: the header row (line ${line}) has malformed quoting: ${cause}: ${JSON.stringify(truncate(record[bad] ?? '', 60))}.`, {
          hint: `Fix the quotes in the header on line ${line}: a column name is either unquoted, or quoted whole with any quote inside doubled ("" for ").`,
        }),
      );
      return;
    }
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
      this.failWith(error as Error);
    }
  }

  private failWith(error: Error): void {
    this.failure = error;
    this.rejectHeader(error);
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
