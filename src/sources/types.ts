/**
 * What every roster reader produces: rows streamed one at a time, each with the provenance that
 * error messages and reports point back to. Readers never hold a whole file in memory.
 */

/** Where a row came from. `row` is the 1-based line (CSV) or row number (XLSX) in the file. */
export interface Provenance {
  file: string;
  sheet?: string;
  row: number;
}

/**
 * A normalised cell. Readers turn every format's cells into these four shapes in one place:
 * text is a string, numbers stay numbers, XLSX dates become `YYYY-MM-DD` strings, empty is null.
 */
export type CellValue = string | number | boolean | null;

/** Joins the cells of `SourceRow.cellsText` (and of row keys): no text cell sent that way holds it. */
export const CELL_SEPARATOR = '\u0000';

export interface SourceRow {
  /** Keyed by header text exactly as in the file (trimmed). */
  values: Record<string, CellValue>;
  provenance: Provenance;
  /**
   * The same cells in header order joined by U+0000, an empty cell as nothing, when the reader has
   * that text at hand (rows read in a worker thread): the row's key is made from it without
   * building `values`. Only set when every cell is text without U+0000, or empty.
   */
  cellsText?: string;
}

/** A line the reader could not turn into a row (e.g. an unbalanced quote); reading goes on. */
export interface SourceRowError {
  provenance: Provenance;
  message: string;
  /** The raw text of the line when the format has one, truncated. */
  raw?: string;
  /**
   * The cells that could be read, when the row was rejected for some of them (an XLSX error cell):
   * the mapping reads the row's client_id from them, so the person's record is kept as it is.
   */
  values?: Record<string, CellValue>;
  /** How to fix it, when the reader knows better than the generic advice. */
  hint?: string;
}

export type SourceItem = { kind: 'row'; row: SourceRow } | { kind: 'error'; error: SourceRowError };

export interface OpenedSource {
  /** The file as named in the pipeline (what provenance and messages show). */
  file: string;
  /** Absolute path on disk (always set by `openSource`; hash it with `sha256File`). */
  path?: string;
  format: 'csv' | 'xlsx';
  sheet?: string;
  /** XLSX: the workbook's worksheets in tab order (so `init` can say which one it read). */
  sheets?: string[];
  headers: string[];
  /**
   * Facts worth telling the operator (detected encoding and delimiter, skipped merged cells...).
   * Readers may append to this array while `items` is iterated (e.g. merged cells are only seen at
   * the end of a sheet), so read it again after the iteration.
   */
  notes: string[];
  /** Rows in file order. Single pass: iterate once; breaking out of the loop closes the file. */
  items: AsyncIterable<SourceItem>;
  /** The same rows in batches, when the reader has them so (read in a worker thread); use one or the other. */
  batches?: AsyncIterable<readonly SourceItem[]>;
  /** Stops a reader that runs apart (a worker thread) when its rows will not be read after all. */
  close?: () => void;
  /**
   * Lets a reader that runs apart read up to `batches` batches ahead of the plan, once (the plan's
   * fast path, while the inventory's row keys load); it then reads ahead as usual.
   */
  allowReadAhead?: (batches: number) => void;
}
