/**
 * Excel serial numbers and ISO date cells as roster values (docs/mapping.md, "XLSX values"):
 * - date formats → `YYYY-MM-DD`
 * - date-and-time formats → `YYYY-MM-DD HH:MM:SS`
 * - time-of-day formats → `HH:MM:SS` (the time part of the serial)
 * - duration formats (`[h]:mm`) → `H:MM:SS`, hours not wrapped at 24 (`37:30:00`), `-` when negative
 * Times are rounded to the nearest second.
 */
import { isoDay, MAX_SERIAL_DAY, MS_PER_DAY, serialDay } from '../excel-serial.js';
import type { CellValue } from '../types.js';
import type { FormatKind } from './number-formats.js';

const SECONDS_PER_DAY = 86_400;

/** A value, or why the cell cannot give one. */
export type Converted = { value: CellValue; problem?: undefined } | { value?: undefined; problem: string };

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function clock(seconds: number): string {
  return `${two(Math.floor(seconds / 3600))}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`;
}

/** A number shown through a date, time or duration format. */
export function formatSerial(serial: number, kind: Exclude<FormatKind, 'number'>, date1904: boolean): Converted {
  const totalSeconds = Math.round(serial * SECONDS_PER_DAY);
  if (kind === 'duration') {
    const magnitude = Math.abs(totalSeconds);
    const hours = Math.floor(magnitude / 3600);
    return { value: `${totalSeconds < 0 ? '-' : ''}${hours}:${clock(magnitude % 3600).slice(3)}` };
  }
  const day = Math.floor(totalSeconds / SECONDS_PER_DAY);
  if (day < 0 || day > MAX_SERIAL_DAY) {
    return { problem: `holds ${serial} in a date or time format, which Excel cannot show as a date (it shows ####)` };
  }
  const seconds = totalSeconds - day * SECONDS_PER_DAY;
  if (kind === 'time') return { value: clock(seconds) };
  const date = serialDay(day, date1904);
  return { value: kind === 'date' ? date : `${date} ${clock(seconds)}` };
}

const ISO_CELL = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?(?:Z|[+-]\d{2}:?\d{2})?$|^(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/;

/**
 * A `t="d"` cell: an ISO 8601 date, date-time or time in the cell's text (ECMA-376 Part 1,
 * 18.17.4). Shown like a serial of the same moment: a time-only format gives the time, a
 * date-only format the date, otherwise the date and, when there is one, the time.
 */
export function formatIsoCell(text: string, kind: FormatKind): Converted {
  const match = ISO_CELL.exec(text.trim());
  if (!match) return { problem: `holds "${text}" as a date, which is not an ISO 8601 date` };
  if (match[8] !== undefined) {
    const seconds = Number(match[8]) * 3600 + Number(match[9]) * 60 + Number(match[10] ?? 0);
    return { value: clock(seconds) };
  }
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const ms = Date.UTC(year, month - 1, day);
  const date = new Date(ms);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return { problem: `holds "${text}" as a date, which is not a real calendar date` };
  const fraction = match[7] ? Number(`0.${match[7]}`) : 0;
  const seconds = match[4] === undefined ? 0 : Math.round(Number(match[4]) * 3600 + Number(match[5]) * 60 + Number(match[6] ?? 0) + fraction);
  if (kind === 'time') return { value: clock(seconds % SECONDS_PER_DAY) };
  // Rounding up to midnight moves to the next day, as for serials.
  const dayText = isoDay(ms + Math.floor(seconds / SECONDS_PER_DAY) * MS_PER_DAY);
  if (kind === 'date' || (kind !== 'datetime' && seconds === 0)) return { value: dayText };
  return { value: `${dayText} ${clock(seconds % SECONDS_PER_DAY)}` };
}

/** Text as a roster value: trimmed, and empty is no value. */
export function textValue(text: string): CellValue {
  const trimmed = text.trim();
  return trimmed.length === 0 ? null : trimmed;
}
