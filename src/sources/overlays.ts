/**
 * Files layered over a roster (`source.overlays`): fixes to a legacy export, most often the
 * rejected.csv rostersync wrote, corrected in Excel. Each file is opened with `openSource`, as the
 * roster itself is; this module only finds how to read a rejected.csv (its title lines) and hides
 * its error columns. Which row replaces which is decided by client_id, so after mapping: see
 * `overlays` in src/mapping/roster.ts.
 */
import { isUtf8 } from 'node:buffer';
import { open, readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { SourceFileConfig } from './options.js';
import { openSource, type OpenSourceOptions } from './open-source.js';
import { SourceError } from './source-error.js';
import type { OpenedSource, SourceItem } from './types.js';

/** The columns rejected.csv appends after the roster's own (src/report/rejected-csv.ts). */
export const REJECTED_ERROR_COLUMNS = ['error_row', 'error_codes', 'error_messages', 'error_hints'] as const;

/** An overlay as the pipeline names it, its path resolved and its format known. */
export interface ResolvedOverlay extends SourceFileConfig {
  format: 'csv' | 'xlsx';
  /**
   * The encoding `source.csv` declares, for a CSV overlay named by its file alone: a rejected.csv
   * is written in the source's own encoding. A file that is valid UTF-8 (a "CSV UTF-8" re-save) is
   * read as UTF-8; any other is read in this encoding rather than guessed.
   */
  sourceEncoding?: string;
}

/** How far down a rejected.csv's header line is looked for (its title lines are few and short). */
const HEADER_SCAN_BYTES = 64 * 1024;
const HEADER_SCAN_LINES = 20;

/**
 * Opens one overlay. A CSV without `csv.header_row` is searched for a rejected.csv header line
 * (the one naming `error_row` and `error_codes`): the lines above it are its title. Columns named
 * like rejected.csv's error columns, after the roster's own, are dropped from every row, so the
 * file reads as the roster it was cut from.
 */
export async function openOverlay(overlay: ResolvedOverlay, options: OpenSourceOptions): Promise<OpenedSource> {
  const { sourceEncoding, ...file } = overlay;
  const encoding = sourceEncoding === undefined || isUtf8(await readFile(overlay.file).catch(() => Buffer.alloc(0))) ? 'auto' : sourceEncoding;
  let config: SourceFileConfig = encoding === 'auto' || file.csv ? file : { ...file, csv: { encoding, delimiter: 'auto', header_row: 1 } };
  const csv = overlay.csv;
  if (overlay.format === 'csv' && csv?.header_row === undefined) {
    const headerRow = await rejectedCsvHeaderRow(overlay.file);
    if (headerRow !== undefined) config = { ...file, csv: { encoding, delimiter: 'auto', ...csv, header_row: headerRow } };
  }
  const opened = await openSource(config, options).catch((error: unknown) => {
    // The reader's advice names source.file; an overlay is found under source.overlays.
    if (error instanceof SourceError && error.hint?.includes('source.file')) {
      throw new SourceError(error.file, error.message, { hint: 'Check source.overlays in the pipeline; each file is relative to the pipeline file.', cause: error });
    }
    throw error;
  });
  const errorColumns = trailingErrorColumns(opened.headers);
  if (errorColumns.length === 0) return opened;
  opened.notes.push(`Read as a rejected.csv: its ${errorColumns.join(', ')} columns are ignored.`);
  const drop = new Set(errorColumns);
  return { ...opened, headers: opened.headers.filter((header) => !drop.has(header)), items: withoutColumns(opened.items, drop) };
}

/**
 * The 1-based line of a rejected.csv's header, when the file is one; undefined otherwise (the
 * file is then read as any CSV, header on line 1 unless the pipeline says otherwise).
 */
async function rejectedCsvHeaderRow(path: string): Promise<number | undefined> {
  const handle = await open(path, 'r').catch(() => undefined);
  // A file that cannot be opened is reported by openSource, with the pipeline's wording.
  if (!handle) return undefined;
  try {
    const buffer = Buffer.alloc(HEADER_SCAN_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEADER_SCAN_BYTES, 0);
    // The column names are ASCII, so any ASCII-compatible decoding finds them (UTF-8 or Windows-1252).
    const lines = buffer.subarray(0, bytesRead).toString('latin1').split(/\r\n|\n|\r/).slice(0, HEADER_SCAN_LINES);
    const index = lines.findIndex((line) => /(^|[,;\t|"])_*error_row("?)([,;\t|]|$)/.test(line) && line.includes('error_codes'));
    return index >= 0 ? index + 1 : undefined;
  } finally {
    await handle.close();
  }
}

/**
 * The error columns at the end of a header, as rejected.csv writes them (a roster column of the
 * same name pushes them to `_error_row`, and so on). Only a full set counts.
 */
export function trailingErrorColumns(headers: readonly string[]): string[] {
  const tail = headers.slice(-REJECTED_ERROR_COLUMNS.length);
  if (tail.length < REJECTED_ERROR_COLUMNS.length) return [];
  return tail.every((header, i) => header.replace(/^_+/, '') === REJECTED_ERROR_COLUMNS[i]) ? tail : [];
}

async function* withoutColumns(items: AsyncIterable<SourceItem>, drop: ReadonlySet<string>): AsyncIterable<SourceItem> {
  for await (const item of items) {
    const values = item.kind === 'row' ? item.row.values : item.error.values;
    if (values) for (const column of drop) delete values[column];
    yield item;
  }
}

/**
 * Openers of a source's overlays for `mapRoster` (each may be called again, to collect cells), and
 * the notes of each file's first opening, to read once the rows are (readers add notes as they read).
 */
export function overlayOpeners(overlays: readonly ResolvedOverlay[], options: OpenSourceOptions): { openers: Array<() => Promise<OpenedSource>>; notes: () => string[] } {
  const first: OpenedSource[] = [];
  const openers = overlays.map((overlay, i) => async () => {
    const source = await openOverlay(overlay, options);
    first[i] ??= source;
    return source;
  });
  return { openers, notes: () => first.flatMap((source) => (source?.notes ?? []).map((note) => `${basename(source.file)}: ${note}`)) };
}
