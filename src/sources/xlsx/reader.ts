/**
 * Streaming XLSX reader. Its own reader rather than exceljs's
 * streaming `WorkbookReader`, whose results depended on the order of the zip entries:
 * - the zip is read from its central directory (xlsx/zip-package.ts), so parts are found by name
 *   and the workbook, shared strings and styles are always read before the sheet;
 * - part paths come from the relationships, relative or absolute (xlsx/workbook.ts);
 * - the sheet is streamed with a SAX parser (xlsx/sheet-rows.ts): memory stays flat in the rows;
 * - no temp files; every failure is a `SourceError` or a row error item, never an uncaught event.
 *
 * Values are what Excel shows from the cached results (docs/mapping.md, "XLSX values"); a cell
 * holding an error (`#REF!`, `#N/A`...) or a formula without a saved result makes its row a reject
 * naming the cell, never an empty value. Merged cells: only the top-left cell holds the value; a
 * note names the ranges. Hyperlinks give their text.
 */
import { open } from 'node:fs/promises';
import type { z } from 'zod';
import type { xlsxOptionsSchema } from '../options.js';
import { columnLetter, headerNames, truncate } from '../headers.js';
import { SourceError } from '../source-error.js';
import type { CellValue, OpenedSource, SourceItem } from '../types.js';
import type { FormatKind } from './number-formats.js';
import { readCellFormats } from './number-formats.js';
import { readSharedStrings } from './shared-strings.js';
import { SheetRows, type ParsedCell, type ParsedRow } from './sheet-rows.js';
import { readWorkbook, type SheetEntry, type WorkbookInfo } from './workbook.js';
import { missingPart, ZipPackage } from './zip-package.js';

export type XlsxOptions = z.input<typeof xlsxOptionsSchema>;

export interface XlsxOpenArgs {
  /** Absolute path of the file. */
  path: string;
  /** How the file is named in provenance and messages (as written in the pipeline). */
  file: string;
  options: XlsxOptions | undefined;
  signal?: AbortSignal | undefined;
}

const ZIP_LOCAL_HEADER = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const ZIP_END_OF_CENTRAL_DIRECTORY = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
/** End-of-central-directory record (22 bytes) plus the longest zip comment. */
const ZIP_TAIL_BYTES = 22 + 0xffff;
/** Problem cells listed in one row's message; the rest are counted. */
const PROBLEMS_SHOWN = 3;

/**
 * Closes the workbook of a source that is dropped without reading its rows to the end (a caller
 * that stops at the headers, e.g. when a mapped column is missing): the file is closed when the
 * source object is collected, not when the process ends.
 */
const closeWhenDropped = new FinalizationRegistry<ZipPackage>((zip) => zip.close());

export async function openXlsx({ path, file, options, signal }: XlsxOpenArgs): Promise<OpenedSource> {
  const wantedSheet = options?.sheet ?? 1;
  const headerRow = options?.header_row ?? 1;
  await checkIsZip(path, file);
  signal?.throwIfAborted();

  const zip = await ZipPackage.open(path, file);
  let rows: SheetRows | undefined;
  try {
    const workbook = await readWorkbook(zip);
    const sheet = findSheet(workbook.sheets, wantedSheet, file);
    if (sheet.kind !== 'worksheet') {
      throw new SourceError(file, `${file}: sheet "${sheet.name}" is a ${sheet.kind.replace(/sheet$/, ' sheet')}, not a worksheet with cells.`, {
        hint: 'Set source.xlsx.sheet to the worksheet that holds the roster.',
      });
    }
    if (sheet.part === undefined) {
      throw new SourceError(file, `${file} is damaged: sheet "${sheet.name}" is listed in the workbook, but the workbook does not say where its data is.`, {
        hint: 'Open the workbook in Excel (which may repair it) and save it again.',
      });
    }
    if (!zip.has(sheet.part)) throw missingPart(file, sheet.part);
    const [sharedStrings, cellFormats] = await Promise.all([loadSharedStrings(zip, workbook), loadCellFormats(zip, workbook)]);
    signal?.throwIfAborted();
    rows = new SheetRows(zip, sheet.part, { sharedStrings, cellFormats, date1904: workbook.date1904 });

    const notes: string[] = [];
    if (sheet.state !== 'visible') notes.push(`Sheet "${sheet.name}" is ${sheet.state} in the workbook.`);
    const reading = new SheetReading(file, sheet.name, rows, notes);
    await reading.readHeader(headerRow);
    const hasRows = await reading.peek();
    if (!hasRows) notes.push(`Sheet "${sheet.name}" of ${file} has a header row but no data rows.`);
    const opened = rows;
    const source: OpenedSource = {
      file,
      path,
      format: 'xlsx',
      sheet: sheet.name,
      sheets: workbook.sheets.filter((s) => s.kind === 'worksheet').map((s) => s.name),
      headers: reading.headers,
      notes,
      items: {
        [Symbol.asyncIterator]: () =>
          reading.items(signal, async () => {
            closeWhenDropped.unregister(source);
            await closeAll(opened, zip);
          }),
      },
    };
    closeWhenDropped.register(source, zip, source);
    return source;
  } catch (error) {
    await closeAll(rows, zip);
    throw error;
  }
}

async function closeAll(rows: SheetRows | undefined, zip: ZipPackage): Promise<void> {
  try {
    await rows?.close();
  } finally {
    zip.close();
  }
}

async function loadSharedStrings(zip: ZipPackage, workbook: WorkbookInfo): Promise<string[]> {
  const part = workbook.sharedStringsPart ?? (zip.has('xl/sharedStrings.xml') ? 'xl/sharedStrings.xml' : undefined);
  if (part === undefined) return [];
  if (!zip.has(part)) throw missingPart(zip.file, part);
  return readSharedStrings(zip, part);
}

async function loadCellFormats(zip: ZipPackage, workbook: WorkbookInfo): Promise<FormatKind[]> {
  const part = workbook.stylesPart ?? (zip.has('xl/styles.xml') ? 'xl/styles.xml' : undefined);
  if (part === undefined) return [];
  if (!zip.has(part)) throw missingPart(zip.file, part);
  return readCellFormats(zip, part);
}

/**
 * Refuses files that are not zip archives (a CSV renamed .xlsx, a legacy .xls) and zip files cut
 * short (no end-of-central-directory record), with a message that says which.
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
    if (tail.lastIndexOf(ZIP_END_OF_CENTRAL_DIRECTORY) === -1) {
      throw new SourceError(file, `${file} is damaged: the zip archive is truncated or corrupt.`, {
        hint: 'Copy or download the workbook again, or open it in Excel (which may repair it) and save it again.',
      });
    }
  } finally {
    await handle.close();
  }
}

/** Sheet names compared as people type them: Unicode-normalised (macOS writes decomposed names), then case-insensitively. */
function comparable(name: string): string {
  return name.normalize('NFC').trim().toLowerCase();
}

/** The sheet the user means: by 1-based position in workbook order, or by name (exact, else normalised). */
function findSheet(sheets: SheetEntry[], wanted: string | number, file: string): SheetEntry {
  const names = sheets.map((sheet) => sheet.name);
  if (sheets.length === 0) {
    throw new SourceError(file, `${file} has no worksheets.`, { hint: 'Save the roster as a normal Excel workbook.' });
  }
  if (typeof wanted === 'number') {
    const sheet = sheets[wanted - 1];
    if (sheet === undefined) throw sheetNotFound(names, wanted, file);
    return sheet;
  }
  const exact = sheets.find((sheet) => sheet.name === wanted);
  if (exact) return exact;
  const folded = comparable(wanted);
  const matches = sheets.filter((sheet) => comparable(sheet.name) === folded);
  if (matches.length === 1) return matches[0] as SheetEntry;
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

/** Reading one sheet: header first, then rows as items. */
class SheetReading {
  headers: string[] = [];
  private pending: ParsedRow | undefined;

  constructor(
    private readonly file: string,
    private readonly sheetName: string,
    private readonly rows: SheetRows,
    private readonly notes: string[],
  ) {}

  async readHeader(headerRow: number): Promise<void> {
    const { file, sheetName } = this;
    let row: ParsedRow | undefined;
    do row = await this.rows.next();
    while (row !== undefined && row.number < headerRow);
    if (row === undefined) {
      throw new SourceError(
        file,
        `${file}, sheet "${sheetName}": header_row is ${headerRow}, but the sheet ${headerRow === 1 ? 'is empty' : `ends before row ${headerRow}`}.`,
        { hint: 'Set source.xlsx.header_row to the row holding the column names, or choose another sheet with source.xlsx.sheet.' },
      );
    }
    if (row.number > headerRow) {
      throw new SourceError(file, `${file}, sheet "${sheetName}": the header row (row ${headerRow}) is empty.`, {
        hint: `Set source.xlsx.header_row to the row holding the column names (the next row with values is row ${row.number}).`,
      });
    }
    const problem = row.cells.find((cell) => cell.problem !== undefined);
    if (problem) {
      throw new SourceError(file, `${file}, sheet "${sheetName}": header cell ${columnLetter(problem.column)}${row.number} ${problem.problem}, so it gives no column name.`, {
        hint: 'Type the column name into the header cell, or open and save the workbook in Excel so the formula result is stored.',
      });
    }
    const cells: (string | null)[] = [];
    for (const cell of row.cells) {
      while (cells.length < cell.column - 1) cells.push(null);
      cells[cell.column - 1] = cell.value === null ? null : String(cell.value);
    }
    this.headers = headerNames(cells, {
      file,
      where: `sheet "${sheetName}", row ${headerRow}`,
      columnLabel: (index) => `column ${columnLetter(index + 1)}`,
    });
  }

  /** Reads ahead to the first data row; false when there is none. */
  async peek(): Promise<boolean> {
    this.pending = await this.rows.next();
    return this.pending !== undefined;
  }

  async *items(signal: AbortSignal | undefined, close: () => Promise<void>): AsyncGenerator<SourceItem> {
    try {
      let row = this.pending;
      this.pending = undefined;
      while (row !== undefined) {
        signal?.throwIfAborted();
        const item = this.toItem(row);
        if (item) yield item;
        row = await this.rows.next();
      }
      this.addClosingNotes();
    } finally {
      await close();
    }
  }

  private toItem(row: ParsedRow): SourceItem | undefined {
    const values: Record<string, CellValue> = {};
    for (const header of this.headers) values[header] = null;
    let filled = 0;
    let extra: string[] | undefined;
    let problems: ParsedCell[] | undefined;
    for (const cell of row.cells) {
      if (cell.problem !== undefined) {
        (problems ??= []).push(cell);
        continue;
      }
      const header = this.headers[cell.column - 1];
      if (header === undefined || header === '') {
        (extra ??= []).push(`${columnLetter(cell.column)}: "${truncate(String(cell.value), 40)}"`);
        continue;
      }
      values[header] = cell.value;
      filled++;
    }
    const provenance = { file: this.file, sheet: this.sheetName, row: row.number };
    if (problems || extra) {
      const parts: string[] = [];
      const hints: string[] = [];
      if (problems) {
        parts.push(this.describeProblems(row.number, problems));
        hints.push(
          'Correct the formula or value in the workbook (a formula without a saved result: open and save the file in Excel or LibreOffice), or clear the cell.',
        );
      }
      if (extra) {
        parts.push(`Row ${row.number} of sheet "${this.sheetName}" has values in columns without a header (${extra.join(', ')}).`);
        hints.push('Give those columns a name in the header row, or clear the cells.');
      }
      // The readable cells go along: the mapping tells from them whose row it is.
      return { kind: 'error', error: { provenance, message: parts.join(' '), hint: hints.join(' '), values } };
    }
    if (filled === 0) return undefined;
    return { kind: 'row', row: { values, provenance } };
  }

  private describeProblems(rowNumber: number, problems: ParsedCell[]): string {
    const shown = problems.slice(0, PROBLEMS_SHOWN).map((cell) => {
      const header = this.headers[cell.column - 1];
      const column = header ? ` (column "${truncate(header, 40)}")` : '';
      return `cell ${columnLetter(cell.column)}${rowNumber}${column} ${cell.problem}`;
    });
    const more = problems.length > PROBLEMS_SHOWN ? `, and ${problems.length - PROBLEMS_SHOWN} more cell(s)` : '';
    return `Row ${rowNumber} of sheet "${this.sheetName}" cannot be read: ${shown.join('; ')}${more}. The row is not synced rather than synced with empty values.`;
  }

  private addClosingNotes(): void {
    const { merges } = this.rows;
    if (merges.count > 0) {
      this.notes.push(
        `Sheet "${this.sheetName}" has ${merges.count} merged cell range(s) (${merges.ranges.join(', ')}${merges.count > merges.ranges.length ? ', …' : ''}): ` +
          'only the top-left cell of each holds the value, the others read as empty. Unmerge them and fill the value into every cell.',
      );
    }
  }
}
