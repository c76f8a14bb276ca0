import { stat } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import type { SourceConfig } from './options.js';
import { openCsv } from './csv/reader.js';
import { SourceError } from './source-error.js';
import type { OpenedSource } from './types.js';
import { openXlsx } from './xlsx/reader.js';

export interface OpenSourceOptions {
  /** Directory `config.file` is relative to (the pipeline file's directory). */
  baseDir: string;
  /** Aborts reading: the item iteration then fails with an AbortError. */
  signal?: AbortSignal;
  /** CSV rows as `PackedRow`s, their cells one string until asked for (the worker-thread reader). */
  packRows?: boolean;
}

/** Extensions that decide the format when `source.format` is not set (options.ts, `sourceSchema`). */
const FORMAT_BY_EXTENSION: Record<string, 'csv' | 'xlsx'> = {
  '.csv': 'csv',
  '.tsv': 'csv',
  '.txt': 'csv',
  '.xlsx': 'xlsx',
  '.xlsm': 'xlsx',
};

/**
 * Opens a roster: resolves `config.file` against `baseDir`, picks the reader (explicit `format`,
 * else by extension), reads up to the header row and returns the headers, notes and the rows to
 * stream. File-level problems (missing, empty, not the claimed format, bad sheet or header) throw
 * a `SourceError`; a header-only file is a valid source with no rows (and a note), because an
 * empty source must reach the sync engine's guards rather than fail here.
 *
 * @example
 * const source = await openSource({ file: 'rosters/board.xlsx', xlsx: { sheet: 'Board', header_row: 2 } }, { baseDir });
 * for await (const item of source.items) if (item.kind === 'row') console.log(item.row.values);
 */
export async function openSource(config: SourceConfig, options: OpenSourceOptions): Promise<OpenedSource> {
  const path = resolve(options.baseDir, config.file);
  const file = config.file;
  const format = config.format ?? formatFromExtension(file);
  options.signal?.throwIfAborted();

  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') {
      throw new SourceError(file, `Roster file not found: ${file} (looked for ${path}).`, {
        hint: 'Check source.file in the pipeline; it is relative to the pipeline file.',
        cause: error,
      });
    }
    throw new SourceError(file, `Cannot read roster file ${file}: ${error.message}.`, { cause: error });
  });
  if (!info.isFile()) {
    throw new SourceError(file, `${file} is not a file (${path}).`, { hint: 'Point source.file at the roster file itself.' });
  }
  if (info.size === 0) {
    throw new SourceError(file, `${file} is empty (0 bytes).`, {
      hint: 'Export the roster again; the file must start with a header row naming the columns.',
    });
  }
  if (format === 'csv') {
    if (config.xlsx) throw misplacedOptions(file, 'xlsx', 'csv');
    return openCsv({ path, file, options: config.csv, signal: options.signal, packRows: options.packRows });
  }
  if (config.csv) throw misplacedOptions(file, 'csv', 'xlsx');
  return openXlsx({ path, file, options: config.xlsx, signal: options.signal });
}

function formatFromExtension(file: string): 'csv' | 'xlsx' {
  const extension = extname(file).toLowerCase();
  const format = FORMAT_BY_EXTENSION[extension];
  if (format) return format;
  if (extension === '.xls') {
    throw new SourceError(file, `${file} is a legacy Excel (.xls) file, which rostersync does not read.`, {
      hint: 'Open it in Excel and save it as "Excel Workbook (.xlsx)".',
    });
  }
  throw new SourceError(file, `Cannot tell the format of ${file} from its extension "${extension}".`, {
    hint: 'Set source.format to csv or xlsx in the pipeline.',
  });
}

function misplacedOptions(file: string, given: 'csv' | 'xlsx', format: 'csv' | 'xlsx'): SourceError {
  return new SourceError(file, `source.${given} options were given, but ${file} is read as ${format}.`, {
    hint: `Use source.${format} for its options, or set source.format: ${given} if the file really is ${given}.`,
  });
}
