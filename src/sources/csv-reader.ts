/**
 * Streaming CSV reader (issue 3, "Readers"). A small sample from the start of the file decides the
 * encoding, the delimiter and where the header line starts; then the file is streamed through
 * csv-parse with bounded memory.
 *
 * Speed matters (a 1M-row roster must stay close to a bare csv-parse read), so rows are turned into
 * `SourceItem`s inside the parser's own `push`, and the parser stream itself is the async iterable
 * handed out: no extra async layer and no per-row allocation beyond the row object itself.
 */
import { open } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { Transform, addAbortSignal, pipeline, type TransformCallback } from 'node:stream';
import { isAscii, isUtf8 } from 'node:buffer';
import { Parser, type CsvError } from 'csv-parse';
import iconv from 'iconv-lite';
import type { z } from 'zod';
import type { csvOptionsSchema } from '../config/pipeline.js';
import type { CellValue, OpenedSource, SourceItem } from './types.js';
import {
  DELIMITER_NAMES,
  classifyUtf8,
  firstInvalidUtf8Line,
  hasUtf8MultibyteSequence,
  countLines,
  detectBom,
  detectDelimiter,
  incompleteUtf8Tail,
  lineStartOffset,
  type CsvDelimiter,
  type CsvEncoding,
} from './csv-sniff.js';
import { headerNames, truncate } from './headers.js';
import { SourceError } from './source-error.js';

export type CsvOptions = z.input<typeof csvOptionsSchema>;

/** Bytes read up front to detect encoding and delimiter. */
export const CSV_SAMPLE_BYTES = 64 * 1024;

/**
 * A quoted cell longer than this is taken as a quote that was never closed: reading stops with a
 * SourceError instead of pulling the rest of the file into one cell (memory stays bounded).
 */
export const MAX_QUOTED_CELL_BYTES = 1024 * 1024;

/** Longest stretch of title lines we scan for `header_row` before giving up. */
const MAX_TITLE_SCAN_BYTES = 16 * 1024 * 1024;

export interface CsvOpenArgs {
  /** Absolute path of the file. */
  path: string;
  /** How the file is named in provenance and messages (as written in the pipeline). */
  file: string;
  options: CsvOptions | undefined;
  signal?: AbortSignal | undefined;
}

export async function openCsv({ path, file, options, signal }: CsvOpenArgs): Promise<OpenedSource> {
  const headerRow = options?.header_row ?? 1;
  const notes: string[] = [];

  const { sample, size } = await readSample(path, CSV_SAMPLE_BYTES);
  checkNotCsv(sample, file);
  const bom = detectBom(sample);
  if (bom && bom.bom !== 'utf-8') {
    throw new SourceError(file, `${file} is encoded as ${bom.bom.toUpperCase()}, which rostersync does not read.`, {
      hint: 'Re-save it as UTF-8: in Excel choose "CSV UTF-8 (Comma delimited)"; in other editors pick the UTF-8 encoding.',
    });
  }
  const bomLength = bom?.length ?? 0;
  if (bomLength === size) throw emptyFile(file);

  const headerOffset = await findHeaderOffset(path, sample, size, bomLength, headerRow, file);
  if (headerRow > 1) notes.push(`Skipped ${headerRow - 1} line(s) above the header row (line ${headerRow}).`);

  // Detection looks at the header line and what follows, not at the title lines above it.
  const headerSample = headerOffset === 0 ? sample : (await readSample(path, CSV_SAMPLE_BYTES, headerOffset)).sample;
  const sampleIsWholeFile = headerOffset + headerSample.length >= size;
  const encoding = chooseEncoding(options?.encoding ?? 'auto', bomLength > 0, headerSample, notes, { file, headerRow });
  const text = encoding === 'utf-8' ? headerSample.toString('utf8') : iconv.decode(headerSample, 'windows-1252');
  const delimiter = chooseDelimiter(options?.delimiter ?? 'auto', text, sampleIsWholeFile, notes);

  const decoder = new CsvDecoder({
    file,
    encoding,
    requested: options?.encoding ?? 'auto',
    startOffset: headerOffset,
    note: (note) => notes.push(note),
  });
  const parser = new RosterCsvParser({ file, delimiter, lineOffset: headerRow - 1, headerRow });
  const input = createReadStream(path, { start: headerOffset, highWaterMark: CSV_SAMPLE_BYTES });
  if (signal) addAbortSignal(signal, input);
  pipeline(input, decoder, parser, () => {
    // Errors reach the consumer through the parser stream (pipeline destroys it with the error).
  });

  let firstItemSeen: boolean;
  try {
    await parser.headerReady;
    firstItemSeen = await parser.firstItemOrEnd;
  } catch (error) {
    parser.destroy();
    throw error;
  }
  if (parser.headerLine !== headerRow) {
    notes.push(`The header row was found on line ${parser.headerLine} (the lines before it are blank).`);
  }
  if (!firstItemSeen) notes.push(`${file} has a header row but no data rows.`);

  return {
    file,
    path,
    format: 'csv',
    headers: parser.headers,
    notes,
    items: { [Symbol.asyncIterator]: () => parser[Symbol.asyncIterator]() as AsyncIterator<SourceItem> },
  };
}

function emptyFile(file: string): SourceError {
  return new SourceError(file, `${file} is empty.`, {
    hint: 'Export the roster again; the file must start with a header row naming the columns.',
  });
}

async function readSample(path: string, bytes: number, position = 0): Promise<{ sample: Buffer; size: number }> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const sample = Buffer.alloc(Math.max(0, Math.min(bytes, size - position)));
    const { bytesRead } = await handle.read(sample, 0, sample.length, position);
    return { sample: sample.subarray(0, bytesRead), size };
  } finally {
    await handle.close();
  }
}

/** Files that are clearly not text get one clear message instead of a page of garbage rows. */
function checkNotCsv(sample: Buffer, file: string): void {
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

/** Byte offset of the header line, reading past the sample if the title block is long. */
async function findHeaderOffset(
  path: string,
  sample: Buffer,
  size: number,
  bomLength: number,
  headerRow: number,
  file: string,
): Promise<number> {
  if (headerRow === 1) return bomLength;
  let buf = sample;
  for (;;) {
    const offset = lineStartOffset(buf, headerRow, bomLength);
    const wholeFile = buf.length >= size;
    if (offset !== undefined && (offset < buf.length || wholeFile)) {
      if (offset >= size) break;
      return offset;
    }
    if (wholeFile || buf.length >= MAX_TITLE_SCAN_BYTES) break;
    buf = (await readSample(path, Math.min(buf.length * 4, MAX_TITLE_SCAN_BYTES))).sample;
  }
  const lines = buf.length >= size ? countLines(buf.subarray(bomLength)) : undefined;
  throw new SourceError(
    file,
    lines === undefined
      ? `${file}: header_row is ${headerRow}, but no such line was found in the first ${MAX_TITLE_SCAN_BYTES} bytes.`
      : `${file}: header_row is ${headerRow}, but the file has only ${lines} line(s).`,
    { hint: 'Set csv.header_row to the line holding the column names (1 = first line).' },
  );
}

function chooseEncoding(
  requested: 'auto' | CsvEncoding,
  hasBom: boolean,
  sample: Buffer,
  notes: string[],
  where: { file: string; headerRow: number },
): CsvEncoding {
  if (requested !== 'auto') {
    notes.push(`Encoding: ${requested === 'utf-8' ? 'UTF-8' : 'Windows-1252'} (set in the pipeline).`);
    return requested;
  }
  if (hasBom) {
    notes.push('Encoding: UTF-8 (byte-order mark).');
    return 'utf-8';
  }
  const verdict = classifyUtf8(sample);
  if (verdict === 'mixed') {
    const line = where.headerRow - 1 + firstInvalidUtf8Line(sample);
    throw new SourceError(
      where.file,
      `${where.file} mixes encodings: it has UTF-8 text and, from line ${line}, bytes that are not UTF-8 (likely Windows-1252). Read either way, some names would be corrupted.`,
      { hint: 'Re-save the whole file as UTF-8 ("CSV UTF-8" in Excel), or set source.csv.encoding if you accept one reading.' },
    );
  }
  if (verdict === 'invalid') {
    notes.push('Encoding: Windows-1252 (detected: the file is not valid UTF-8).');
    return 'windows-1252';
  }
  notes.push(verdict === 'ascii' ? 'Encoding: UTF-8 (the start of the file is plain ASCII).' : 'Encoding: UTF-8 (detected).');
  return 'utf-8';
}

function chooseDelimiter(
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

/**
 * Hands bytes to csv-parse, decoding only when needed. UTF-8 passes through untouched (csv-parse
 * decodes it) after a native validity check per chunk. With `auto`, a file whose start was plain
 * ASCII but turns out not to be UTF-8 further down switches to Windows-1252 from that chunk: every
 * byte before was ASCII, which both encodings read the same, so nothing already read changes.
 */
class CsvDecoder extends Transform {
  private mode: 'utf-8' | 'utf-8-unchecked' | 'windows-1252';
  private carry: Buffer | undefined;
  private sawNonAscii = false;
  /** Byte offset in the file of the next chunk, for notes. */
  private offset: number;
  private readonly file: string;
  private readonly requested: 'auto' | CsvEncoding;
  private readonly note: (text: string) => void;

  constructor(args: { file: string; encoding: CsvEncoding; requested: 'auto' | CsvEncoding; startOffset: number; note: (text: string) => void }) {
    super({ highWaterMark: CSV_SAMPLE_BYTES });
    this.file = args.file;
    this.mode = args.encoding;
    this.requested = args.requested;
    this.offset = args.startOffset;
    this.note = args.note;
  }

  /**
   * With `auto`, a file that turns out to hold both UTF-8 text and bytes that are not UTF-8 is
   * refused: read either way, some names would be corrupted, and nothing tells which reading is
   * right. (An explicit `csv.encoding` is the operator's answer.)
   */
  private mixed(at: number): SourceError {
    return new SourceError(
      this.file,
      `${this.file} mixes encodings: it has UTF-8 text and bytes that are not UTF-8 (near byte ${at}). Read either way, some names would be corrupted.`,
      { hint: 'Re-save the whole file as UTF-8 ("CSV UTF-8" in Excel), or set source.csv.encoding if you accept one reading.' },
    );
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.mode === 'windows-1252') {
      if (this.requested === 'auto' && hasUtf8MultibyteSequence(chunk)) {
        callback(this.mixed(this.offset));
        return;
      }
      this.offset += chunk.length;
      callback(null, iconv.decode(chunk, 'windows-1252'));
      return;
    }
    let buf = chunk;
    if (this.carry) {
      buf = Buffer.concat([this.carry, chunk]);
      this.carry = undefined;
    }
    if (this.mode === 'utf-8-unchecked' || isAscii(buf)) {
      this.offset += buf.length;
      callback(null, buf);
      return;
    }
    const tail = incompleteUtf8Tail(buf);
    const body = tail === 0 ? buf : buf.subarray(0, buf.length - tail);
    if (isUtf8(body)) {
      // The held-back tail may be a Windows-1252 letter, not a UTF-8 lead byte: only the checked
      // body says whether the file has shown non-ASCII UTF-8 yet.
      this.sawNonAscii ||= !isAscii(body);
      if (tail > 0) this.carry = Buffer.from(buf.subarray(buf.length - tail));
      this.offset += body.length;
      callback(null, body);
      return;
    }
    if (this.requested === 'auto') {
      if (this.sawNonAscii || hasUtf8MultibyteSequence(buf)) {
        callback(this.mixed(this.offset));
        return;
      }
      this.mode = 'windows-1252';
      let first = 0;
      while (first < buf.length && (buf[first] as number) < 0x80) first++;
      this.note(
        `Encoding: switched to Windows-1252 at byte ${this.offset + first} (the file is not valid UTF-8 there; everything before was plain ASCII).`,
      );
      this.offset += buf.length;
      callback(null, iconv.decode(buf, 'windows-1252'));
      return;
    }
    this.mode = 'utf-8-unchecked';
    this.note(
      `The file is not valid UTF-8 after byte ${this.offset}; invalid characters were read as "\uFFFD". ` +
        'Re-save the file as UTF-8, or set csv.encoding: windows-1252 if it is a Windows export.',
    );
    callback(null, buf);
  }

  override _flush(callback: TransformCallback): void {
    const carry = this.carry;
    this.carry = undefined;
    if (carry === undefined) callback();
    else callback(null, this.mode === 'windows-1252' ? iconv.decode(carry, 'windows-1252') : carry);
  }
}

interface RosterCsvParserArgs {
  file: string;
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
class RosterCsvParser extends Parser {
  headers: string[] = [];
  headerLine = 0;
  readonly headerReady: Promise<void>;
  /** Resolves true when a first item after the header was produced, false when the file ended first. */
  readonly firstItemOrEnd: Promise<boolean>;

  private readonly file: string;
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

  /** csv-parse's internal state (untyped): are we inside quotes, and how long is the open cell. */
  private get parseState(): { quoting: boolean; field: { length: number } } {
    return (this as unknown as { state: { quoting: boolean; field: { length: number } } }).state;
  }

  override _transform(chunk: Buffer, encoding: BufferEncoding, callback: TransformCallback): void {
    const state = this.parseState;
    if (state.quoting && state.field.length > MAX_QUOTED_CELL_BYTES) {
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
    const values: Record<string, CellValue> = {};
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
      values[headers[i] as string] = value;
    }
    if (record.length > count) {
      const extra: string[] = [];
      for (let i = count; i < record.length; i++) {
        const cell = (record[i] as string).trim();
        if (cell.length !== 0) extra.push(`column ${i + 1}: "${truncate(cell, 40)}"`);
      }
      if (extra.length > 0) {
        return this.errorItem(
          row,
          `Line ${row} has ${record.length} cells but the header has ${count} columns; values beyond the header (${extra.join(', ')}). ` +
            'Remove the stray delimiter or quote the cell that contains it, or add a column name to the header.',
          record.join(this.delimiter),
        );
      }
    }
    if (filled === 0) return undefined; // a line of empty cells (e.g. ";;;;") counts as blank
    return { kind: 'row', row: { values, provenance: { file: this.file, row } } };
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
