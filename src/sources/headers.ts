import { SourceError } from './source-error.js';

/** Where a header row is, for messages: `roster.csv, line 3` or `roster.xlsx, sheet "Board", row 2`. */
export interface HeaderLocation {
  file: string;
  /** Human description of the header row, e.g. `line 3` or `sheet "Board", row 2`. */
  where: string;
  /** How a 0-based column index is shown: `column 4` (CSV) or `column D` (XLSX). */
  columnLabel: (index: number) => string;
}

/**
 * Turns the normalised cells of the header row into column names. Trailing empty cells are dropped
 * (exports often end lines with a stray delimiter); an empty name between named columns or a
 * repeated name is a file-level error, because rows are keyed by header text and a mapping could
 * not say which column it means.
 */
export function headerNames(cells: readonly (string | null)[], location: HeaderLocation): string[] {
  let last = cells.length - 1;
  while (last >= 0 && cells[last] === null) last--;
  if (last < 0) {
    throw new SourceError(location.file, `${location.file}: the header row (${location.where}) is empty.`, {
      hint: 'Point header_row at the line holding the column names.',
    });
  }
  const names: string[] = [];
  const blank: string[] = [];
  const firstSeen = new Map<string, number>();
  const duplicates: string[] = [];
  for (let i = 0; i <= last; i++) {
    const name = cells[i] ?? null;
    if (name === null) {
      blank.push(location.columnLabel(i));
      names.push('');
      continue;
    }
    const seen = firstSeen.get(name);
    if (seen === undefined) firstSeen.set(name, i);
    else duplicates.push(`"${name}" in ${location.columnLabel(seen)} and ${location.columnLabel(i)}`);
    names.push(name);
  }
  const problems: string[] = [];
  if (blank.length > 0) problems.push(`no name in ${blank.join(', ')}`);
  if (duplicates.length > 0) problems.push(`duplicate column names: ${duplicates.join('; ')}`);
  if (problems.length > 0) {
    throw new SourceError(
      location.file,
      `${location.file}: the header row (${location.where}) has ${problems.join(', and ')}.`,
      {
        hint:
          'Give every column a unique name in the header row (rows are matched to the mapping by column name), ' +
          'or delete the unused columns. If the column names are on another line, set header_row.',
      },
    );
  }
  return names;
}

/** `1` → `A`, `28` → `AB` (1-based, as Excel shows columns). */
export function columnLetter(column: number): string {
  let n = column;
  let letters = '';
  while (n > 0) {
    const rem = (n - 1) % 26;
    letters = String.fromCharCode(65 + rem) + letters;
    n = Math.floor((n - 1) / 26);
  }
  return letters;
}

/** Shortens a value for an error message. */
export function truncate(text: string, max = 80): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
