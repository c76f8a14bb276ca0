/**
 * Coercion of cell values to the value shapes of custom fields by data_kind (docs/service-contract.md, An author-from-group record
 * group, "Custom field value shapes"): number → JSON number, date → `YYYY-MM-DD`, options →
 * option api_ids. Pure functions; a failure is a value, not an exception.
 */
import { MAX_SERIAL_DAY, serialDay } from '../sources/excel-serial.js';
import { truncate } from '../sources/headers.js';
import type { CellValue } from '../sources/types.js';
import type { DATE_FORMATS } from './schema.js';
import { personal } from '../personal-data/personal-text.js';

export type Coerced<T> = { ok: true; value: T } | { ok: false; code: string; message: string; hint: string };

const fail = (code: string, message: string, hint: string): { ok: false; code: string; message: string; hint: string } => ({
  ok: false,
  code,
  message,
  hint,
});

const DOT_DECIMAL = /^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$/;
const COMMA_DECIMAL = /^[+-]?(?:\d{1,3}(?:[. \u00a0\u202f]\d{3})+|\d+)(?:,\d+)?$/;

/**
 * Parses a number. Numeric cells pass through. Text uses `decimal` as the decimal separator and
 * accepts the other one only as a thousands separator in groups of three ("1,234.5" or
 * "1.234,5"), so "1,5" under `decimal: "."` is refused rather than read as 15.
 */
export function coerceNumber(cell: CellValue, decimal: '.' | ',' = '.'): Coerced<number> {
  if (typeof cell === 'number') {
    return Number.isFinite(cell) ? { ok: true, value: cell } : fail('invalid_number', 'not a finite number', 'Enter a number.');
  }
  const text = String(cell).trim();
  const pattern = decimal === '.' ? DOT_DECIMAL : COMMA_DECIMAL;
  if (!pattern.test(text)) {
    const other = decimal === '.' ? ',' : '.';
    const hint =
      /^[+-]?\d+[.,]\d+$/.test(text) && text.includes(other)
        ? `This looks like a decimal ${other === ',' ? 'comma' : 'point'}; set \`decimal: "${other}"\` for this field in the mapping if the whole column uses it.`
        : 'Enter a plain number such as 12 or 3.5, or leave the cell empty.';
    return fail('invalid_number', 'not a number', hint);
  }
  const normalised =
    decimal === '.' ? text.replace(/,/g, '') : text.replace(/[. \u00a0\u202f]/g, '').replace(',', '.');
  const value = Number(normalised);
  // A JSON number is a double: 99999999999999999999 would be sent as 1e20. Refuse what does not
  // come back as written, rather than send another number. Text that is already the number's own
  // spelling ("42", "3.5": most cells) round-trips by definition; only the rest needs the comparison.
  if (normalised !== String(value) && canonicalDecimal(normalised) !== canonicalDecimal(plainDecimal(value))) {
    return fail(
      'inexact_number',
      `has more digits than a JSON number carries exactly (it would be sent as ${String(value)})`,
      'Round the value to at most 15 significant digits, or map the column to a text field if it is an identifier rather than a quantity.',
    );
  }
  return { ok: true, value };
}

/** A number's shortest round-trip text without exponent notation (1e+21 → "1000000000000000000000"). */
function plainDecimal(value: number): string {
  const text = String(value);
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign, lead, rest = '', exp] = match;
  const digits = `${lead}${rest}`;
  const point = 1 + Number(exp);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** Decimal text without sign noise, leading integer zeros or trailing fraction zeros ("+012.50" → "12.5"). */
function canonicalDecimal(text: string): string {
  const negative = text.startsWith('-');
  const [integer = '', fraction = ''] = text.replace(/^[+-]/, '').split('.');
  const int = integer.replace(/^0+(?=\d)/, '') || '0';
  const frac = fraction.replace(/0+$/, '');
  const body = frac ? `${int}.${frac}` : int;
  return negative && body !== '0' ? `-${body}` : body;
}

function isValidDate(year: number, month: number, day: number): boolean {
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1) return false;
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate(); // 2000 is a leap year
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return day <= (leap ? 29 : 28);
  }
  return day <= daysInMonth;
}

function iso(year: number, month: number, day: number): string {
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/**
 * Excel serial day number → ISO date, 1900 date system. Excel counts 1900-02-29, a day that never
 * existed (the Lotus 1-2-3 leap-year bug): serial 60 is refused, serials up to 59 count from
 * 1899-12-31 and serials from 61 from 1899-12-30 (sources/excel-serial.ts). A time fraction is dropped.
 */
export function excelSerialToIso(serial: number): Coerced<string> {
  const day = Math.floor(serial);
  if (!Number.isFinite(serial) || day < 1 || day > MAX_SERIAL_DAY) {
    return fail('invalid_date', 'not a valid Excel date serial number', 'Format the cell as a date in Excel, or enter YYYY-MM-DD.');
  }
  if (day === 60) {
    return fail('invalid_date', 'Excel serial 60 is 1900-02-29, a day that does not exist', 'Enter the intended date as YYYY-MM-DD.');
  }
  return { ok: true, value: serialDay(day, false) };
}

type DateFormat = (typeof DATE_FORMATS)[number];

function formatPattern(format: DateFormat): { regex: RegExp; order: ('D' | 'M' | 'Y')[] } {
  const order = format.split(/[/.-]/).map((t) => t[0] as 'D' | 'M' | 'Y');
  const sep = format.match(/[/.-]/)![0];
  const escaped = sep === '.' ? '\\.' : sep;
  const parts = order.map((t) => (t === 'Y' ? '(\\d{4})' : '(\\d{1,2})'));
  return { regex: new RegExp(`^${parts.join(escaped)}$`), order };
}

/**
 * Parses a date: Excel serial numbers (numeric cells, or text of five digits), ISO `YYYY-MM-DD`
 * (an ISO timestamp's date part too), and the text formats the mapping lists explicitly.
 * Day-first and month-first are never guessed. Impossible dates (2023-02-30) are refused.
 */
// Built per failure, not per call: a closure per date cell shows up at a million rows.
function impossible(): Coerced<string> {
  return fail('invalid_date', 'not a real calendar date', 'Check day and month; for example 2023-02-30 does not exist.');
}

export function coerceDate(cell: CellValue, formats: readonly DateFormat[] = []): Coerced<string> {
  const text = String(cell).trim();
  // Serials only with 5 digits (1927-05-18 … 2173-10-14), as text or as a number: a bare 2023 is
  // a year, not day 2023 of 1900. (Date-formatted XLSX cells already arrive as YYYY-MM-DD.)
  if (/^\d{5}(?:\.\d+)?$/.test(text)) return excelSerialToIso(Number(text));
  const isoMatch = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(text);
  if (isoMatch) {
    const [y, m, d] = [Number(isoMatch[1]), Number(isoMatch[2]), Number(isoMatch[3])];
    return isValidDate(y, m, d) ? { ok: true, value: iso(y, m, d) } : impossible();
  }
  for (const format of formats) {
    const { regex, order } = formatPattern(format);
    const match = regex.exec(text);
    if (!match) continue;
    const parts: Record<'D' | 'M' | 'Y', number> = { D: 0, M: 0, Y: 0 };
    order.forEach((token, i) => (parts[token] = Number(match[i + 1])));
    return isValidDate(parts.Y, parts.M, parts.D) ? { ok: true, value: iso(parts.Y, parts.M, parts.D) } : impossible();
  }
  const accepted = ['YYYY-MM-DD', 'Excel date numbers', ...formats].join(', ');
  return fail(
    'invalid_date',
    `not a date in an accepted format (${accepted})`,
    /^\d{1,2}[/.-]\d{1,2}[/.-]\d{4}$/.test(text) && formats.length === 0
      ? 'Add the file\'s format to `date_formats` for this field in the mapping (e.g. DD/MM/YYYY); day-first and month-first are never guessed.'
      : 'Enter the date as YYYY-MM-DD.',
  );
}

/** The options of a single_option / multi_option field, prepared for case-insensitive lookup. */
export interface OptionIndex {
  /** lowercased label → option api_id */
  byLabel: Map<string, string>;
  /** lowercased legacy label → option api_id (from the mapping's `values`) */
  byLegacy: Map<string, string>;
  /** Service labels, for messages. */
  labels: string[];
}

export function coerceOption(label: string, index: OptionIndex): Coerced<string> {
  const key = label.trim().toLowerCase();
  const apiId = index.byLegacy.get(key) ?? index.byLabel.get(key);
  if (apiId !== undefined) return { ok: true, value: apiId };
  return fail(
    'unknown_option',
    `"${personal(truncate(label, 40))}" is not one of the allowed labels: ${index.labels.join(', ')}`,
    'Use one of the allowed labels, or map this legacy label with `values:` in the mapping.',
  );
}
