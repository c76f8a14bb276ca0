/**
 * Streaming XLSX reader (issue 3, "Readers") on exceljs's `WorkbookReader`, so memory stays
 * bounded whatever the sheet size.
 *
 * Known limits of exceljs streaming, handled here:
 * - Worksheets arrive in zip order, each named from `xl/workbook.xml`; the sheet position users
 *   count (1 = first tab) is the order in workbook.xml (`reader.model.sheets`), not arrival order.
 * - Merged cells: only the top-left cell of a merged range holds the value; the streaming reader
 *   ignores `<mergeCells>` (which comes after the rows), so the other cells of the range read as
 *   empty. We spot `<mergeCells>` in the raw sheet XML and add a note naming the ranges.
 * - Inline rich text (`<is>` with several runs, rare: Excel writes shared strings) keeps only its
 *   last run; we spot `<is><r>` in the raw XML and add a note. Shared rich text is read whole.
 * - Hyperlink targets are dropped (hyperlinks come after the rows); the cell's text is kept, which
 *   is what a roster needs.
 * - Dates need `styles: 'cache'` (the number format says a number is a date).
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { addAbortSignal } from 'node:stream';
import ExcelJS from 'exceljs';
import type { Cell, Row } from 'exceljs';
import type { z } from 'zod';
import type { xlsxOptionsSchema } from '../config/pipeline.js';
import { columnLetter, headerNames, truncate } from './headers.js';
import { normaliseCell, type CellIssue, type NormaliseContext } from './normalise-cell.js';
import { SourceError } from './source-error.js';
import type { CellValue, OpenedSource, SourceItem } from './types.js';

export type XlsxOptions = z.input<typeof xlsxOptionsSchema>;

export interface XlsxOpenArgs {
  /** Absolute path of the file. */
  path: string;
  /** How the file is named in provenance and messages (as written in the pipeline). */
  file: string;
  options: XlsxOptions | undefined;
  signal?: AbortSignal | undefined;
}

/** What we use of exceljs's WorksheetReader (its published typings omit these members). */
interface StreamSheet {
  name: string;
  /** Raw chunks of the sheet XML, read by the sheet's parser. */
  iterator: AsyncIterable<Buffer | string>;
  [Symbol.asyncIterator](): AsyncIterator<Row>;
}

interface WorkbookModelView {
  model?: { sheets?: Array<{ name?: string; state?: string }> };
  properties?: { model?: { date1904?: boolean } };
}

const FORMULA = ExcelJS.ValueType.Formula;
const ZIP_LOCAL_HEADER = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const ZIP_END_OF_CENTRAL_DIRECTORY = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
/** End-of-central-directory record (22 bytes) plus the longest zip comment. */
const ZIP_TAIL_BYTES = 22 + 0xffff;
/**
 * A part that inflates past ZIP_BOMB_MIN_BYTES at more than ZIP_BOMB_RATIO:1 is refused as a zip
 * bomb: exceljs keeps the shared strings in memory, so a workbook of a few hundred KB could
 * otherwise take gigabytes. Real workbook XML compresses about 5-20:1. Checked on the sizes the
 * central directory declares (a forged directory is not caught here).
 */
const ZIP_BOMB_MIN_BYTES = 32 * 1024 * 1024;
const ZIP_BOMB_RATIO = 100;
const ZIP_CENTRAL_FILE_HEADER = 0x02014b50;

export async function openXlsx({ path, file, options, signal }: XlsxOpenArgs): Promise<OpenedSource> {
  const wantedSheet = options?.sheet ?? 1;
  const headerRow = options?.header_row ?? 1;
  await checkIsZip(path, file);

  const input = createReadStream(path, { highWaterMark: 256 * 1024 });
  if (signal) addAbortSignal(signal, input);
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(input, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    styles: 'cache',
    hyperlinks: 'cache',
    entries: 'ignore',
  });
  const workbook = reader as unknown as WorkbookModelView;
  const sheets = reader[Symbol.asyncIterator]();
  const close = (): void => {
    input.destroy();
    void sheets.return(undefined).catch(() => undefined);
  };

  try {
    const sheet = await findSheet(sheets, workbook, wantedSheet, file);
    const notes: string[] = [];
    const sheetState = workbook.model?.sheets?.find((candidate) => candidate.name === sheet.name)?.state;
    if (sheetState && sheetState !== 'visible') notes.push(`Sheet "${sheet.name}" is ${sheetState} in the workbook.`);
    const merged = watchSheetXml(sheet);
    const reading = new SheetReading({
      file,
      sheetName: sheet.name,
      rows: sheet[Symbol.asyncIterator](),
      date1904: workbook.properties?.model?.date1904 === true,
      notes,
      merged,
      signal,
    });
    await reading.readHeader(headerRow);
    const hasRows = await reading.peek();
    if (!hasRows) notes.push(`Sheet "${sheet.name}" of ${file} has a header row but no data rows.`);
    return {
      file,
      path,
      format: 'xlsx',
      sheet: sheet.name,
      headers: reading.headers,
      notes,
      items: {
        [Symbol.asyncIterator]: () => reading.items(file, close),
      },
    };
  } catch (error) {
    close();
    throw asSourceError(error, file);
  }
}

/**
 * Refuses files that are not zip archives (a CSV renamed .xlsx, a legacy .xls) and zip files cut
 * short (no end-of-central-directory record), before exceljs meets them with a cryptic error or,
 * for a truncated file, silently stops early.
 */
async function checkIsZip(path: string, file: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const head = Buffer.alloc(Math.min(8, size));
    await handle.read(head, 0, head.length, 0);
    if (!head.subarray(0, 4).equals(ZIP_LOCAL_HEADER)) {
      if (head[0] === 0xd0 && head[1] === 0xcf && head[2] === 0x11 && head[3] === 0xe0) {
        throw new SourceError(file, `${file} is a legacy Excel (.xls) file or a password-protected workbook, not an .xlsx workbook.`, {
          hint: 'Open it in Excel and save it as "Excel Workbook (.xlsx)" without a password.',
        });
      }
      throw new SourceError(file, `${file} is not an Excel workbook (an .xlsx file is a zip archive; this looks like text, e.g. a CSV file renamed .xlsx).`, {
        hint: 'If it is a CSV file, rename it to .csv or set source.format: csv; otherwise save it from Excel as "Excel Workbook (.xlsx)".',
      });
    }
    const tailLength = Math.min(ZIP_TAIL_BYTES, size);
    const tail = Buffer.alloc(tailLength);
    await handle.read(tail, 0, tailLength, size - tailLength);
    const end = tail.lastIndexOf(ZIP_END_OF_CENTRAL_DIRECTORY);
    if (end === -1) {
      throw new SourceError(file, `${file} is damaged: the zip archive is truncated or corrupt.`, {
        hint: 'Copy or download the workbook again, or open it in Excel (which may repair it) and save it again.',
      });
    }
    await refuseZipBomb(handle, tail.subarray(end), size, file);
  } finally {
    await handle.close();
  }
}

/** Reads the central directory named by the end record and refuses parts that inflate like a zip bomb. */
async function refuseZipBomb(handle: Awaited<ReturnType<typeof open>>, end: Buffer, size: number, file: string): Promise<void> {
  if (end.length < 22) return;
  const directorySize = end.readUInt32LE(12);
  const directoryOffset = end.readUInt32LE(16);
  // Zip64 or a damaged directory: exceljs reports those itself.
  if (directoryOffset + directorySize > size || directorySize > 16 * 1024 * 1024) return;
  const directory = Buffer.alloc(directorySize);
  await handle.read(directory, 0, directorySize, directoryOffset);
  for (let at = 0; at + 46 <= directory.length && directory.readUInt32LE(at) === ZIP_CENTRAL_FILE_HEADER; ) {
    const compressed = directory.readUInt32LE(at + 20);
    const uncompressed = directory.readUInt32LE(at + 24);
    const nameLength = directory.readUInt16LE(at + 28);
    if (uncompressed > ZIP_BOMB_MIN_BYTES && uncompressed > compressed * ZIP_BOMB_RATIO) {
      const part = directory.toString('utf8', at + 46, at + 46 + nameLength);
      const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
      throw new SourceError(
        file,
        `${file} looks like a zip bomb: its part ${part} inflates from ${mb(compressed)} to ${mb(uncompressed)} (${Math.round(uncompressed / Math.max(compressed, 1))}:1), far more than a roster holds.`,
        { hint: 'Open the workbook in Excel, delete what the roster does not need and save it again, or export the roster sheet as CSV.' },
      );
    }
    at += 46 + nameLength + directory.readUInt16LE(at + 30) + directory.readUInt16LE(at + 32);
  }
}

async function findSheet(
  sheets: AsyncIterator<unknown>,
  workbook: WorkbookModelView,
  wanted: string | number,
  file: string,
): Promise<StreamSheet> {
  let targetName: string | undefined;
  const seen: string[] = [];
  for (;;) {
    const next = await sheets.next();
    if (next.done) break;
    const sheet = next.value as StreamSheet;
    seen.push(sheet.name);
    targetName ??= resolveSheetName(workbook.model?.sheets?.map((entry) => entry.name ?? '') ?? [], wanted, file);
    if (sheet.name === targetName) return sheet;
    skipSheet(sheet);
  }
  const names = workbook.model?.sheets?.map((entry) => entry.name ?? '') ?? seen;
  if (targetName !== undefined) {
    throw new SourceError(file, `${file}: sheet "${targetName}" is listed in the workbook but its data is missing.`, {
      hint: 'The workbook is damaged; open it in Excel and save it again.',
    });
  }
  if (names.length === 0) {
    throw new SourceError(file, `${file} has no worksheets.`, { hint: 'Save the roster as a normal Excel workbook.' });
  }
  throw sheetNotFound(names, wanted, file);
}

/** The sheet name the user means: by 1-based position in workbook order, or by name (exact, else case-insensitive). */
function resolveSheetName(names: string[], wanted: string | number, file: string): string {
  if (typeof wanted === 'number') {
    const name = names[wanted - 1];
    if (name === undefined) throw sheetNotFound(names, wanted, file);
    return name;
  }
  if (names.includes(wanted)) return wanted;
  const folded = wanted.trim().toLowerCase();
  const matches = names.filter((name) => name.trim().toLowerCase() === folded);
  if (matches.length === 1) return matches[0] as string;
  throw sheetNotFound(names, wanted, file);
}

function sheetNotFound(names: string[], wanted: string | number, file: string): SourceError {
  const list = names.map((name) => `"${name}"`).join(', ');
  return new SourceError(
    file,
    typeof wanted === 'number'
      ? `${file} has ${names.length} sheet(s), so there is no sheet number ${wanted}. Sheets: ${list}.`
      : `${file} has no sheet named "${wanted}". Sheets: ${list}.`,
    { hint: 'Set source.xlsx.sheet to one of these names, or to a sheet number (1 = first tab).' },
  );
}

/** Lets the zip parser move past a sheet we do not read without parsing it. */
function skipSheet(sheet: StreamSheet): void {
  const iterator = sheet.iterator as { destroy?: () => void; return?: () => unknown };
  if (typeof iterator.destroy === 'function') iterator.destroy();
  else void Promise.resolve(iterator.return?.()).catch(() => undefined);
}

/** What the raw sheet XML showed that the streaming reader silently mishandles. */
interface SheetXmlFindings {
  /** Merged ranges seen (up to a few), and how many in all. */
  ranges: string[];
  count: number;
  /** Inline strings with several formatted runs (`<is><r>`): exceljs keeps only the last run. */
  inlineRichText: boolean;
}

const MERGE_MARKER = '<mergeCell ';
const INLINE_RICH_TEXT_MARKER = '<is><r>';

/**
 * Watches the raw sheet XML for `<mergeCells>` (after the rows, see the module comment) and for
 * inline rich text. Costs two native `indexOf` calls per chunk.
 */
function watchSheetXml(sheet: StreamSheet): SheetXmlFindings {
  const findings: SheetXmlFindings = { ranges: [], count: 0, inlineRichText: false };
  const source = sheet.iterator;
  sheet.iterator = (async function* scan() {
    let carry = '';
    for await (const chunk of source) {
      const seam = carry + head(chunk); // markers split across two chunks
      if (!findings.inlineRichText && (chunk.indexOf(INLINE_RICH_TEXT_MARKER) !== -1 || seam.includes(INLINE_RICH_TEXT_MARKER))) {
        findings.inlineRichText = true;
      }
      if (chunk.indexOf(MERGE_MARKER) !== -1 || seam.includes(MERGE_MARKER)) {
        const region = carry + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
        let scanned = 0;
        for (const match of region.matchAll(/<mergeCell ref="([A-Z]+\d+:[A-Z]+\d+)"/g)) {
          findings.count++;
          if (findings.ranges.length < 5) findings.ranges.push(match[1] as string);
          scanned = match.index + match[0].length;
        }
        carry = region.slice(Math.max(scanned, region.length - 40)); // never count a range twice
      } else {
        carry = tail(chunk);
      }
      yield chunk;
    }
  })();
  return findings;
}

function tail(chunk: Buffer | string): string {
  return typeof chunk === 'string' ? chunk.slice(-40) : chunk.subarray(Math.max(0, chunk.length - 40)).toString('latin1');
}

function head(chunk: Buffer | string): string {
  return typeof chunk === 'string' ? chunk.slice(0, 40) : chunk.subarray(0, 40).toString('latin1');
}

interface SheetReadingArgs {
  file: string;
  sheetName: string;
  rows: AsyncIterator<Row>;
  date1904: boolean;
  notes: string[];
  merged: SheetXmlFindings;
  /** Checked between rows: the sheet may be read from a temp file the input stream's abort does not reach. */
  signal: AbortSignal | undefined;
}

/** Reading one sheet: header first, then rows as items. State lives here so no closure is made per row. */
class SheetReading {
  headers: string[] = [];
  private pending: Row | undefined;
  private readonly issues = new Map<CellIssue, { count: number; examples: string[] }>();
  private readonly context: NormaliseContext & { address: string };
  // Per-row scratch, used by visitCell.
  private values: Record<string, CellValue> = {};
  private filled = 0;
  private extra: string[] = [];

  constructor(private readonly args: SheetReadingArgs) {
    this.context = {
      date1904: args.date1904,
      numFmt: undefined,
      address: '',
      onIssue: (issue, detail) => this.recordIssue(issue, detail),
    };
  }

  async readHeader(headerRow: number): Promise<void> {
    const { file, sheetName } = this.args;
    for (;;) {
      const next = await this.args.rows.next();
      if (next.done) {
        throw new SourceError(
          file,
          `${file}, sheet "${sheetName}": header_row is ${headerRow}, but the sheet ${headerRow === 1 ? 'is empty' : `ends before row ${headerRow}`}.`,
          { hint: 'Set source.xlsx.header_row to the row holding the column names, or choose another sheet with source.xlsx.sheet.' },
        );
      }
      const row = next.value;
      if (row.number < headerRow) continue;
      if (row.number > headerRow || !row.hasValues) {
        throw new SourceError(file, `${file}, sheet "${sheetName}": the header row (row ${headerRow}) is empty.`, {
          hint: `Set source.xlsx.header_row to the row holding the column names (the next row with values is row ${row.number}).`,
        });
      }
      const cells: (string | null)[] = [];
      row.eachCell((cell, column) => {
        const value = normaliseCell(cell.value, { date1904: this.args.date1904, numFmt: cell.numFmt });
        while (cells.length < column - 1) cells.push(null);
        cells.push(value === null ? null : String(value));
      });
      this.headers = headerNames(cells, {
        file,
        where: `sheet "${sheetName}", row ${headerRow}`,
        columnLabel: (index) => `column ${columnLetter(index + 1)}`,
      });
      return;
    }
  }

  /** Reads ahead to the first data row; false when there is none. */
  async peek(): Promise<boolean> {
    for (;;) {
      const next = await this.args.rows.next();
      if (next.done) return false;
      if (next.value.hasValues) {
        this.pending = next.value;
        return true;
      }
    }
  }

  async *items(file: string, close: () => void): AsyncGenerator<SourceItem> {
    try {
      if (this.pending) {
        const item = this.toItem(this.pending);
        this.pending = undefined;
        if (item) yield item;
      }
      const signal = this.args.signal;
      for (;;) {
        signal?.throwIfAborted();
        let next: IteratorResult<Row>;
        try {
          next = await this.args.rows.next();
        } catch (error) {
          throw asSourceError(error, file);
        }
        if (next.done) break;
        const item = this.toItem(next.value);
        if (item) yield item;
      }
      this.addClosingNotes();
    } finally {
      close();
    }
  }

  private readonly visitCell = (cell: Cell, column: number): void => {
    let value: CellValue;
    if (cell.type === FORMULA) {
      // `cell.value` drops falsy cached results (0, "", and NaN, which is how an error result
      // arrives); the cell model keeps them.
      this.context.numFmt = cell.numFmt;
      this.context.address = cell.address;
      value = normaliseCell(cell.model, this.context);
    } else {
      const raw = cell.value;
      if (typeof raw === 'object' && raw !== null && !(raw instanceof Date)) {
        this.context.address = cell.address;
        value = normaliseCell(raw, this.context);
      } else {
        value = normaliseCell(raw);
      }
    }
    if (value === null) return;
    const header = this.headers[column - 1];
    if (header === undefined) {
      this.extra.push(`${columnLetter(column)}: "${truncate(String(value), 40)}"`);
      return;
    }
    this.values[header] = value;
    this.filled++;
  };

  private toItem(row: Row): SourceItem | undefined {
    const values: Record<string, CellValue> = {};
    for (const header of this.headers) values[header] = null;
    this.values = values;
    this.filled = 0;
    if (this.extra.length > 0) this.extra = [];
    row.eachCell(this.visitCell);
    const provenance = { file: this.args.file, sheet: this.args.sheetName, row: row.number };
    if (this.extra.length > 0) {
      return {
        kind: 'error',
        error: {
          provenance,
          message:
            `Row ${row.number} of sheet "${this.args.sheetName}" has values in columns without a header (${this.extra.join(', ')}). ` +
            'Give those columns a name in the header row, or clear the cells.',
        },
      };
    }
    if (this.filled === 0) return undefined; // formatted but empty
    return { kind: 'row', row: { values, provenance } };
  }

  private recordIssue(issue: CellIssue, detail: string): void {
    let entry = this.issues.get(issue);
    if (!entry) {
      entry = { count: 0, examples: [] };
      this.issues.set(issue, entry);
    }
    entry.count++;
    if (entry.examples.length < 3) entry.examples.push(`${this.context.address} (${detail})`);
  }

  private addClosingNotes(): void {
    const { notes, sheetName, merged } = this.args;
    const describe: Record<CellIssue, string> = {
      'formula-error': 'formula cell(s) have an error result and were read as empty',
      'error-value': 'cell(s) hold an error value and were read as empty',
      'formula-no-result': 'formula cell(s) have no saved result (open and save the workbook in Excel) and were read as empty',
      unsupported: 'cell(s) hold content rostersync cannot read and were read as empty',
    };
    for (const [issue, { count, examples }] of this.issues) {
      notes.push(`Sheet "${sheetName}": ${count} ${describe[issue]}, e.g. ${examples.join(', ')}.`);
    }
    if (merged.inlineRichText) {
      notes.push(
        `Sheet "${sheetName}" has inline rich-text cells (formatting inside one cell, written by a tool other than Excel): ` +
          'only the last formatted part of each was read. Open and save the workbook in Excel to read them whole.',
      );
    }
    if (merged.count > 0) {
      notes.push(
        `Sheet "${sheetName}" has ${merged.count} merged cell range(s) (${merged.ranges.join(', ')}${merged.count > merged.ranges.length ? ', …' : ''}): ` +
          'only the top-left cell of each holds the value, the others read as empty. Unmerge them and fill the value into every cell.',
      );
    }
  }
}

function asSourceError(error: unknown, file: string): unknown {
  if (error instanceof SourceError) return error;
  if (error instanceof Error && error.name === 'AbortError') return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new SourceError(file, `${file} could not be read as an Excel workbook: ${truncate(detail, 200)}.`, {
    hint: 'The file may be damaged or not really an .xlsx workbook; open it in Excel and save it again as "Excel Workbook (.xlsx)".',
    cause: error,
  });
}
