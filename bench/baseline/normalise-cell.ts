/**
 * exceljs cell values (as its streaming reader produces them) as `CellValue`s (src/sources/types.ts): text
 * trimmed (empty → null), numbers, booleans, dates as `YYYY-MM-DD`, rich text flattened,
 * hyperlinks by their text, formulas by their cached result.
 *
 * This is how the replaced exceljs-based XLSX reader read cells. The reader in src/sources/xlsx/
 * does not use it; bench/xlsx-readers.ts keeps it as the baseline it measures against.
 */
import type { CellValue } from '../../src/sources/types.js';

/** Something worth a note: a value read as null because it held no usable data. */
export type CellIssue = 'formula-error' | 'error-value' | 'formula-no-result' | 'unsupported';

/** Day 0 of the 1900 and 1904 date systems, as days since the Unix epoch. */
const EPOCH_1900 = 25569;
const EPOCH_1904 = 24107;
const MS_PER_DAY = 86_400_000;

export interface NormaliseContext {
  /** Number format of the cell: a formula whose cached result is a number is a date if this is a date format. */
  numFmt?: string | undefined;
  /** Workbook uses the 1904 date system (old Mac workbooks). */
  date1904?: boolean | undefined;
  /** Told why a cell was read as null. */
  onIssue?: ((issue: CellIssue, detail: string) => void) | undefined;
}

export function normaliseCell(value: unknown, context?: NormaliseContext): CellValue {
  switch (typeof value) {
    case 'string': {
      const trimmed = value.trim();
      return trimmed.length === 0 ? null : trimmed;
    }
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'boolean':
      return value;
    case 'undefined':
      return null;
    case 'object':
      return value === null ? null : normaliseObject(value, context);
    default:
      return null;
  }
}

function normaliseObject(value: object, context: NormaliseContext | undefined): CellValue {
  if (value instanceof Date) return formatDate(value);
  if ('richText' in value && Array.isArray(value.richText)) {
    let text = '';
    for (const run of value.richText as Array<{ text?: unknown }>) if (typeof run.text === 'string') text += run.text;
    return normaliseCell(text);
  }
  if ('formula' in value || 'sharedFormula' in value) {
    const result = 'result' in value ? value.result : undefined;
    if (result === undefined) {
      context?.onIssue?.('formula-no-result', 'no cached result');
      return null;
    }
    if (typeof result === 'number') {
      // exceljs reads a formula's error result (t="e") as parseFloat("#DIV/0!"), i.e. NaN.
      if (Number.isNaN(result)) {
        context?.onIssue?.('formula-error', 'error result');
        return null;
      }
      if (isDateFormat(context?.numFmt)) return serialToDate(result, context?.date1904 === true);
      return normaliseCell(result);
    }
    if (typeof result === 'object' && result !== null && 'error' in result) {
      context?.onIssue?.('formula-error', String(result.error));
      return null;
    }
    return normaliseCell(result, context);
  }
  if ('hyperlink' in value && 'text' in value) return normaliseCell(value.text, context);
  if ('error' in value) {
    context?.onIssue?.('error-value', String(value.error));
    return null;
  }
  if ('text' in value) return normaliseCell(value.text, context);
  context?.onIssue?.('unsupported', 'unsupported cell content');
  return null;
}

/** `YYYY-MM-DD` from the UTC calendar date; invalid dates are null. */
export function formatDate(date: Date): string | null {
  const time = date.getTime();
  if (Number.isNaN(time)) return null;
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth() + 1;
  const day = date.getUTCDate();
  return `${String(year).padStart(4, '0')}-${month < 10 ? '0' : ''}${month}-${day < 10 ? '0' : ''}${day}`;
}

export function serialToDate(serial: number, date1904: boolean): string | null {
  return formatDate(new Date(Math.round((serial - (date1904 ? EPOCH_1904 : EPOCH_1900)) * MS_PER_DAY)));
}

const dateFormatCache = new Map<string, boolean>();

/** Same rule as exceljs (`utils.isDateFmt`): date/time letters outside quotes and brackets. Cached per format. */
export function isDateFormat(numFmt: string | undefined): boolean {
  if (!numFmt) return false;
  let known = dateFormatCache.get(numFmt);
  if (known === undefined) {
    const bare = numFmt.replace(/\[[^\]]*]/g, '').replace(/"[^"]*"/g, '');
    known = /[ymdhMsb]+/.test(bare);
    if (dateFormatCache.size < 1000) dateFormatCache.set(numFmt, known);
  }
  return known;
}
