/**
 * Streams one worksheet part as rows of converted cells. Only the rows parsed from the current
 * inflated chunk are held, so memory stays flat whatever the number of rows.
 *
 * Every cell is read from its own attributes: its type (`t`), its own style (`s`, so a cell
 * filled down from a shared formula keeps its own date format) and its cached value (`<v>`, or
 * `<is>` for inline strings). Rows and cells without an `r` reference follow the previous one.
 */
import type { CellValue } from '../types.js';
import { formatIsoCell, formatSerial, textValue, type Converted } from './cell-value.js';
import type { FormatKind } from './number-formats.js';
import { decodeExcelEscapes, StringItemText } from './shared-strings.js';
import { xmlStream, type XmlStream } from './xml.js';
import { SourceError } from '../source-error.js';
import type { ZipPackage } from './zip-package.js';

export interface ParsedCell {
  /** 1-based column. */
  column: number;
  value: CellValue;
  /** Why the cell has no usable value (an error value, a formula without a saved result...). */
  problem: string | undefined;
}

export interface ParsedRow {
  /** 1-based row number, as Excel shows it. */
  number: number;
  /** Cells with a value or a problem, in column order as written; empty cells are left out. */
  cells: ParsedCell[];
}

export interface SheetContext {
  sharedStrings: readonly string[];
  /** Format kind per style index (`s`); a missing index is a plain number. */
  cellFormats: readonly FormatKind[];
  date1904: boolean;
}

export interface MergeFindings {
  /** The first few merged ranges, and how many in all. */
  ranges: string[];
  count: number;
}

/** The last column and row a worksheet can have (XFD1048576). */
export const MAX_COLUMN = 16_384;
export const MAX_ROW = 1_048_576;

/** Column number of a reference such as `AB12` (0 when it has no letters). */
export function columnOfReference(reference: string): number {
  let column = 0;
  for (let i = 0; i < reference.length && column <= MAX_COLUMN; i++) {
    const code = reference.charCodeAt(i) | 0x20; // lower-case letters too
    if (code < 97 || code > 122) break;
    column = column * 26 + (code - 96);
  }
  return column;
}

const CELL_REFERENCE = /^[A-Za-z]{1,3}[1-9][0-9]{0,6}$/;
const ROW_NUMBER = /^[1-9][0-9]{0,6}$/;

export class SheetRows {
  readonly merges: MergeFindings = { ranges: [], count: 0 };
  private readonly ready: ParsedRow[] = [];
  private readIndex = 0;
  private readonly chunks: AsyncIterator<string>;
  private readonly xml: XmlStream;
  private finished = false;

  // Parser state: the row and cell being read.
  private inSheetData = false;
  private rowNumber = 0;
  private column = 0;
  private cells: ParsedCell[] = [];
  private cellType = 'n';
  private cellStyle = 0;
  private cellValue = '';
  private hasValue = false;
  private hasFormula = false;
  private inValue = false;
  private inInline = false;
  private hasInline = false;
  private readonly inline = new StringItemText();

  private readonly file: string;

  constructor(
    zip: ZipPackage,
    private readonly part: string,
    private readonly context: SheetContext,
  ) {
    this.file = zip.file;
    this.chunks = zip.text(part, false)[Symbol.asyncIterator]();
    this.xml = xmlStream(zip.file, part, {
      open: (name, attributes) => this.openTag(name, attributes),
      close: (name) => this.closeTag(name),
      text: (text) => {
        if (this.inValue) this.cellValue += text;
        else if (this.inInline) this.inline.onText(text);
      },
    });
  }

  /** The next row that has cells, or undefined at the end of the sheet. */
  async next(): Promise<ParsedRow | undefined> {
    while (this.readIndex >= this.ready.length) {
      this.ready.length = 0;
      this.readIndex = 0;
      if (this.finished) return undefined;
      const chunk = await this.chunks.next();
      if (chunk.done) {
        this.finished = true;
        this.xml.end();
      } else {
        this.xml.write(chunk.value);
      }
    }
    return this.ready[this.readIndex++];
  }

  /** Stops reading: closes the part's stream. */
  async close(): Promise<void> {
    this.finished = true;
    await this.chunks.return?.();
  }

  private openTag(name: string, attributes: Record<string, string>): void {
    switch (name) {
      case 'c': {
        const reference = attributes.r;
        if (reference !== undefined && (!CELL_REFERENCE.test(reference) || columnOfReference(reference) > MAX_COLUMN || Number(reference.replace(/^[A-Za-z]+/, '')) > MAX_ROW)) {
          throw this.beyondSheet(`a cell reference "${reference.slice(0, 20)}"`);
        }
        this.column = reference === undefined ? this.column + 1 : columnOfReference(reference);
        if (this.column > MAX_COLUMN) throw this.beyondSheet(`more than ${MAX_COLUMN} cells in row ${this.rowNumber}`);
        this.cellType = attributes.t ?? 'n';
        this.cellStyle = attributes.s === undefined ? 0 : Number(attributes.s);
        this.cellValue = '';
        this.hasValue = false;
        this.hasFormula = false;
        this.hasInline = false;
        return;
      }
      case 'v':
        this.inValue = true;
        this.hasValue = true;
        return;
      case 'f':
        this.hasFormula = true;
        return;
      case 'is':
        this.inInline = true;
        this.hasInline = true;
        this.inline.reset();
        return;
      case 'row': {
        const reference = attributes.r;
        if (reference !== undefined && (!ROW_NUMBER.test(reference) || Number(reference) > MAX_ROW)) throw this.beyondSheet(`a row number "${reference.slice(0, 20)}"`);
        this.rowNumber = reference === undefined ? this.rowNumber + 1 : Number(reference);
        if (this.rowNumber > MAX_ROW) throw this.beyondSheet(`more than ${MAX_ROW} rows`);
        this.column = 0;
        this.cells = [];
        return;
      }
      case 'sheetData':
        this.inSheetData = true;
        return;
      case 'mergeCell': {
        this.merges.count++;
        if (this.merges.ranges.length < 5 && attributes.ref) this.merges.ranges.push(attributes.ref);
        return;
      }
      default:
        if (this.inInline) this.inline.open(name);
    }
  }

  /** A reference no worksheet can hold: refused before anything is sized by it. */
  private beyondSheet(what: string): SourceError {
    return new SourceError(this.file, `${this.file} is damaged or hostile: its part ${this.part} has ${what}, beyond XFD${MAX_ROW}, the last cell a worksheet can have.`, {
      hint: 'Open the workbook in Excel and save it again, or export the roster again from the program that made it.',
    });
  }

  private closeTag(name: string): void {
    switch (name) {
      case 'v':
        this.inValue = false;
        return;
      case 'is':
        this.inInline = false;
        return;
      case 'c': {
        if (!this.inSheetData) return;
        const converted = this.convert();
        if (converted.problem !== undefined) this.cells.push({ column: this.column, value: null, problem: converted.problem });
        else if (converted.value !== null) this.cells.push({ column: this.column, value: converted.value, problem: undefined });
        return;
      }
      case 'row':
        if (this.cells.length > 0) this.ready.push({ number: this.rowNumber, cells: this.cells });
        return;
      case 'sheetData':
        this.inSheetData = false;
        return;
      default:
        if (this.inInline) this.inline.close(name);
    }
  }

  private convert(): Converted {
    const text = this.cellValue;
    const noResult = !this.hasValue && this.hasFormula;
    switch (this.cellType) {
      case 's': {
        if (!this.hasValue) return { value: null };
        // A plain decimal index, as Excel writes it: Number() would also take "", " ", "-0", "0x1"
        // and "1e0", and the row would sync with another cell's text.
        const shared = /^[0-9]{1,10}$/.test(text) ? this.context.sharedStrings[Number(text)] : undefined;
        if (shared === undefined) {
          return {
            problem: /^[0-9]{1,10}$/.test(text)
              ? `refers to shared string ${text}, which the workbook does not have (it has ${this.context.sharedStrings.length}; the file is damaged)`
              : `refers to shared string ${JSON.stringify(text.slice(0, 20))}, which is not a shared-string number (the file is damaged)`,
          };
        }
        return { value: textValue(shared) };
      }
      case 'inlineStr':
        return { value: textValue(this.hasInline ? this.inline.value() : decodeExcelEscapes(text)) };
      case 'str':
        if (noResult) return NO_RESULT;
        return { value: textValue(decodeExcelEscapes(text)) };
      case 'b':
        if (noResult) return NO_RESULT;
        if (!this.hasValue || text.trim() === '') return { value: null };
        return { value: text.trim() === '1' || text.trim().toLowerCase() === 'true' };
      case 'e':
        return { problem: `holds the error ${text.trim() || '#VALUE!'}` };
      case 'd':
        if (noResult) return NO_RESULT;
        if (!this.hasValue || text.trim() === '') return { value: null };
        return formatIsoCell(text, this.context.cellFormats[this.cellStyle] ?? 'number');
      default: {
        if (!this.hasValue || text.trim() === '') return this.hasFormula ? NO_RESULT : { value: null };
        const number = Number(text);
        if (!Number.isFinite(number)) return { problem: `holds "${text.trim()}", which is not a number` };
        const kind = this.context.cellFormats[this.cellStyle] ?? 'number';
        return kind === 'number' ? { value: number } : formatSerial(number, kind, this.context.date1904);
      }
    }
  }
}

const NO_RESULT: Converted = {
  problem: 'is a formula with no saved result (the program that wrote the file did not calculate it)',
};
