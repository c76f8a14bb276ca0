import { CELL_SEPARATOR, type CellValue, type Provenance, type SourceRow } from './types.js';

/**
 * A row's cells in header order joined by CELL_SEPARATOR, an empty cell as nothing
 * (`SourceRow.cellsText`); undefined when a cell is not text, or holds the separator, or is ''
 * (which no reader yields: an empty cell is null), as the text could then not be split back.
 */
export function cellsTextOf(values: Readonly<Record<string, CellValue | undefined>>, headers: readonly string[]): string | undefined {
  let text = '';
  for (let i = 0; i < headers.length; i++) {
    const cell = values[headers[i]!];
    if (cell === null) text += i === 0 ? '' : CELL_SEPARATOR;
    else if (typeof cell === 'string' && cell !== '' && !cell.includes(CELL_SEPARATOR)) text += i === 0 ? cell : `${CELL_SEPARATOR}${cell}`;
    else return undefined;
  }
  return text;
}

/** The cells of a `cellsText` back by header (the inverse of `cellsTextOf`). */
export function valuesOfCellsText(text: string, headers: readonly string[]): Record<string, CellValue> {
  const cells = text.split(CELL_SEPARATOR);
  const values: Record<string, CellValue> = {};
  for (let i = 0; i < headers.length; i++) {
    const cell = cells[i]!;
    values[headers[i]!] = cell === '' ? null : cell;
  }
  return values;
}

/**
 * A row whose cells stay one string (`cellsText`) until something asks for them by header: the
 * fast path keys it from the text, and most rows are never asked (read-in-worker.ts).
 */
export class PackedRow implements SourceRow {
  private cells: Record<string, CellValue> | undefined;
  constructor(
    readonly cellsText: string,
    readonly provenance: Provenance,
    private readonly headers: readonly string[],
  ) {}

  get values(): Record<string, CellValue> {
    this.cells ??= valuesOfCellsText(this.cellsText, this.headers);
    return this.cells;
  }
}
