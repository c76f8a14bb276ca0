/**
 * rejected.csv: the rejected rows with their original columns, then error columns, so an admin
 * can fix the cells in Excel and feed the file back (the mapping reads only the columns it names,
 * so the extra columns are harmless). docs/security-and-personal-data.md:
 * - cells that Excel would run as a formula (starting with `=`, `+`, `-`, `@`, tab or CR) get a
 *   leading `'`; a plain number such as `-3` or `+4.5` is left alone, since Excel reads it as a
 *   number and escaping it would corrupt the value when the file is fed back;
 * - the file holds names and emails, so it is written mode 0600.
 * Written in the pipeline's own CSV settings (`dialectFor`: delimiter, encoding, header row), so the
 * fixed file reads back through the same pipeline; by default comma-separated UTF-8 with a BOM (so
 * Excel picks the right encoding). CRLF line ends (RFC 4180).
 */
import { chmod, open } from 'node:fs/promises';
import iconv from 'iconv-lite';
import type { SourceConfig } from '../sources/options.js';
import type { RejectedRow } from '../mapping/types.js';
import type { CellValue } from '../sources/types.js';
import { REJECTED_ERROR_COLUMNS } from '../sources/overlays.js';

export interface RejectedCsvOptions {
  /**
   * The source's header, in file order, so columns come out as in the original even when the
   * first rejected rows lack some. @default the union of the rows' keys, in first-seen order
   */
  headers?: readonly string[];
  /**
   * The CSV settings the pipeline reads its roster with, so the fixed rows can be read back by the
   * same pipeline: its delimiter, its encoding (Windows-1252 without BOM, else UTF-8
   * with BOM) and its header row (title lines above the header). @default comma, UTF-8, line 1
   */
  dialect?: CsvDialect;
}

/** The CSV settings rejected.csv is written in. */
export interface CsvDialect {
  delimiter: ',' | ';' | '\t' | '|';
  encoding: 'utf-8' | 'windows-1252';
  headerRow: number;
}

/**
 * The dialect that the pipeline's own `source.csv` settings read back. Settings left on `auto`
 * detect the default (comma, UTF-8 with BOM) again, so only explicit ones need following.
 */
export function dialectFor(source: Pick<SourceConfig, 'csv'>): CsvDialect {
  const csv = source.csv;
  return {
    delimiter: csv?.delimiter === undefined || csv.delimiter === 'auto' ? ',' : csv.delimiter,
    encoding: csv?.encoding === 'windows-1252' ? 'windows-1252' : 'utf-8',
    headerRow: csv?.header_row ?? 1,
  };
}

/** Error columns appended after the original ones (an overlay reading the file back drops them). */
export const ERROR_COLUMNS = REJECTED_ERROR_COLUMNS;

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d+(?:\.\d+)?$/;

/** Neutralises a cell Excel would evaluate as a formula. */
export function escapeFormula(text: string): string {
  return FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
}

function quote(text: string, delimiter = ','): string {
  return /["\r\n]/.test(text) || text.includes(delimiter) ? `"${text.replace(/"/g, '""')}"` : text;
}

function cell(value: CellValue | undefined, delimiter: string): string {
  if (value === null || value === undefined) return '';
  return quote(escapeFormula(String(value)), delimiter);
}

/** Renders the CSV text (without BOM). Exposed for tests and for callers that stream elsewhere. */
export function renderRejectedCsv(rows: readonly RejectedRow[], options: RejectedCsvOptions = {}): string {
  const delimiter = options.dialect?.delimiter ?? ',';
  const headers = [...(options.headers ?? unionOfKeys(rows))];
  const taken = new Set(headers);
  const errorHeaders = ERROR_COLUMNS.map((name) => {
    let unique: string = name;
    while (taken.has(unique)) unique = `_${unique}`;
    return unique;
  });
  // The pipeline skips the lines above its header row: say there what the file is.
  const titles = Array.from({ length: (options.dialect?.headerRow ?? 1) - 1 }, (_, i) =>
    i === 0 ? quote('Rows rostersync rejected - fix them and read this file with the same pipeline', delimiter) : '',
  );
  const lines = [...titles, [...headers, ...errorHeaders].map((h) => quote(escapeFormula(h), delimiter)).join(delimiter)];
  for (const row of rows) {
    const original = headers.map((h) => cell(row.values[h], delimiter));
    const describe = (p: RejectedRow['problems'][number]): string =>
      `${p.column ? `[${p.column}] ` : ''}${p.message}${p.value !== undefined ? ` (value: ${p.value})` : ''}`;
    const errors = [
      String(row.provenance.row),
      row.problems.map((p) => p.code).join('; '),
      row.problems.map(describe).join(' | '),
      [...new Set(row.problems.map((p) => p.hint).filter((h): h is string => Boolean(h)))].join(' | '),
    ].map((text) => quote(escapeFormula(text), delimiter));
    lines.push([...original, ...errors].join(delimiter));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * The rows rejected.csv lists: the rejected ones, and the rows synced with warnings about their
 * values (their codes read `warning:invalid_orcid`, so a filter in the spreadsheet tells them
 * apart), in row order. Fixing a warned cell and feeding the file back syncs the value.
 */
export function rejectedCsvRows(report: { rejectedRows: readonly RejectedRow[]; warnings?: readonly RejectedRow[] | undefined }): RejectedRow[] {
  if (!report.warnings?.length) return [...report.rejectedRows];
  const warned = report.warnings.map((row) => ({ ...row, problems: row.problems.map((p) => ({ ...p, code: `warning:${p.code}` })) }));
  return [...report.rejectedRows, ...warned].sort((a, b) => a.provenance.row - b.provenance.row);
}

function unionOfKeys(rows: readonly RejectedRow[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row.values)) seen.add(key);
  return [...seen];
}

/** The file's content in the dialect's encoding: Windows-1252 bytes, or UTF-8 text with a BOM. */
export function encodeRejectedCsv(rows: readonly RejectedRow[], options: RejectedCsvOptions = {}): string | Buffer {
  const text = renderRejectedCsv(rows, options);
  // Windows-1252 has no BOM; a BOM on such a file would read as "ï»¿" in the first header.
  return options.dialect?.encoding === 'windows-1252' ? iconv.encode(text, 'windows-1252') : `\uFEFF${text}`;
}

/** Writes rejected rows to `path` (mode 0600, replacing any file there). */
export async function writeRejectedCsv(
  path: string,
  rows: readonly RejectedRow[],
  options: RejectedCsvOptions = {},
): Promise<void> {
  const handle = await open(path, 'w', 0o600);
  try {
    // An existing file keeps its old mode through open(); tighten it explicitly.
    await chmod(path, 0o600);
    await handle.writeFile(encodeRejectedCsv(rows, options));
  } finally {
    await handle.close();
  }
}
