/**
 * Excel serial day numbers as calendar days, for XLSX date cells (`xlsx/cell-value.ts`) and for
 * serials that reach a date field as plain numbers or text (`mapping/coerce.ts`).
 */

export const MS_PER_DAY = 86_400_000;
/** 9999-12-31, the last date Excel shows. */
export const MAX_SERIAL_DAY = 2_958_465;
const EPOCH_1904 = Date.UTC(1904, 0, 1);
/** Serial day 1 is 1900-01-01 up to day 59; from day 61 on, one day less (see serialDay). */
const EPOCH_1900_BEFORE_LEAP_BUG = Date.UTC(1899, 11, 31);
const EPOCH_1900 = Date.UTC(1899, 11, 30);

/** `YYYY-MM-DD` of a UTC time in milliseconds. */
export function isoDay(ms: number): string {
  const date = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${String(date.getUTCFullYear()).padStart(4, '0')}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}`;
}

/**
 * The calendar day of a serial day number, as Excel shows it. In the 1900 system Excel keeps
 * Lotus 1-2-3's leap-year bug: day 60 is 1900-02-29, which never existed, so days 1-59 count from
 * 1899-12-31 and days from 61 on from 1899-12-30. Day 0 shows as 1900-01-00. Both impossible days
 * are answered as Excel shows them; callers that need a real date refuse them.
 */
export function serialDay(day: number, date1904: boolean): string {
  if (date1904) return isoDay(EPOCH_1904 + day * MS_PER_DAY);
  if (day === 0) return '1900-01-00';
  if (day === 60) return '1900-02-29';
  return isoDay((day < 60 ? EPOCH_1900_BEFORE_LEAP_BUG : EPOCH_1900) + day * MS_PER_DAY);
}
