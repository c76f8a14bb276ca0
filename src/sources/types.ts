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

export interface SourceRow {
  /** Keyed by header text exactly as in the file (trimmed). */
  values: Record<string, CellValue>;
  provenance: Provenance;
}

/** A line the reader could not turn into a row (e.g. an unbalanced quote); reading goes on. */
export interface SourceRowError {
  provenance: Provenance;
  message: string;
  /** The raw text of the line when the format has one, truncated. */
  raw?: string;
}

export type SourceItem = { kind: 'row'; row: SourceRow } | { kind: 'error'; error: SourceRowError };

export interface OpenedSource {
  file: string;
  format: 'csv' | 'xlsx';
  sheet?: string;
  headers: string[];
  /** Facts worth telling the operator (detected encoding and delimiter, skipped merged cells...). */
  notes: string[];
  items: AsyncIterable<SourceItem>;
}
