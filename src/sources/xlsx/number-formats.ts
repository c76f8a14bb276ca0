/**
 * What a cell's number format makes of its number (ECMA-376 Part 1, 18.8.30-31): a plain number,
 * a date, a date with a time, a time of day, or a duration (elapsed `[h]`, `[m]`, `[s]`).
 * How each kind is represented is in cell-value.ts and docs/mapping.md ("XLSX values").
 */
import { parsePart } from './xml.js';
import type { ZipPackage } from './zip-package.js';

export type FormatKind = 'number' | 'date' | 'datetime' | 'time' | 'duration';

/** Built-in number formats (ids below 164 that a workbook need not spell out) that are not plain numbers. */
const BUILT_IN: Record<number, FormatKind> = {
  14: 'date', 15: 'date', 16: 'date', 17: 'date',
  18: 'time', 19: 'time', 20: 'time', 21: 'time',
  22: 'datetime',
  // East Asian built-ins (ja-JP, zh-CN, zh-TW, ko-KR): 32 and 33 are times of day, the rest dates.
  27: 'date', 28: 'date', 29: 'date', 30: 'date', 31: 'date', 32: 'time', 33: 'time', 34: 'date', 35: 'date', 36: 'date',
  45: 'time', 46: 'duration', 47: 'time',
  50: 'date', 51: 'date', 52: 'date', 53: 'date', 54: 'date', 55: 'date', 56: 'date', 57: 'date', 58: 'date',
};

const kindCache = new Map<string, FormatKind>();

/** Classifies a format code such as `yyyy-mm-dd`, `[h]:mm`, `h:mm AM/PM` or `#,##0.00`. */
export function formatKind(code: string): FormatKind {
  let kind = kindCache.get(code);
  if (kind === undefined) {
    kind = classify(code);
    if (kindCache.size < 1000) kindCache.set(code, kind);
  }
  return kind;
}

function classify(code: string): FormatKind {
  // Literal text ("...", \x), spacing (_x) and fill (*x) never make a date; the first section
  // (positive numbers) decides.
  const bare = code.replace(/"[^"]*"/g, '').replace(/\\./g, '').replace(/[_*]./g, '');
  const section = (bare.split(';')[0] ?? '').trim();
  if (section.length === 0 || /^general$/i.test(section)) return 'number';
  if (/\[(h+|m+|s+)\]/i.test(section)) return 'duration';
  // Colours, conditions and locales ([Red], [>100], [$-409], [$€-407]) are not date letters;
  // neither is the exponent of scientific notation (0.00E+00).
  const letters = section.replace(/\[[^\]]*]/g, '').replace(/e[+-]/gi, '').toLowerCase();
  const hasMeridiem = /am\/pm|a\/p/.test(letters);
  const rest = letters.replace(/am\/pm|a\/p/g, '');
  const hasDate = /[ydge]/.test(rest);
  const hasTime = hasMeridiem || /[hs]/.test(rest);
  if (hasDate && hasTime) return 'datetime';
  if (hasDate) return 'date';
  if (hasTime) return 'time';
  return rest.includes('m') ? 'date' : 'number'; // `mmm` or `mmmm` alone: a month name
}

/** The format kind of every cell style (`<cellXfs>` index → kind), read from the styles part. */
export async function readCellFormats(zip: ZipPackage, part: string): Promise<FormatKind[]> {
  const custom = new Map<number, string>();
  const styleFormatIds: number[] = [];
  let inCellXfs = false;
  let inNumFmts = false;
  await parsePart(zip.file, part, zip.text(part, true), {
    open(name, attributes) {
      if (name === 'numFmts') inNumFmts = true;
      else if (name === 'cellXfs') inCellXfs = true;
      else if (name === 'numFmt' && inNumFmts) custom.set(Number(attributes.numFmtId), attributes.formatCode ?? '');
      else if (name === 'xf' && inCellXfs) styleFormatIds.push(Number(attributes.numFmtId ?? 0));
    },
    close(name) {
      if (name === 'numFmts') inNumFmts = false;
      else if (name === 'cellXfs') inCellXfs = false;
    },
    text() {},
  });
  return styleFormatIds.map((id) => {
    const code = custom.get(id);
    // A workbook may redefine a built-in id; its own code wins.
    if (code !== undefined) return formatKind(code);
    return BUILT_IN[id] ?? 'number';
  });
}
