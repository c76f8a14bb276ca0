/**
 * Reads the start of a roster for `rostersync init` with the ordinary readers (their encoding and
 * delimiter sniffing), finding the header row below any title lines: the first line whose cell
 * count is that of the rows under it.
 */
import type { SourceConfig } from '../sources/options.js';
import { openSource } from '../sources/index.js';
import type { ColumnSample } from './match.js';

/** Rows sampled per column: enough to see the shapes, few enough to read any file at once. */
const SAMPLE_ROWS = 500;
/** Title lines looked through for the header row. */
const MAX_HEADER_ROW = 10;

export interface RosterSample {
  /** The source section to write to the pipeline (relative file set by the writer). */
  source: SourceConfig;
  headers: string[];
  sample: ColumnSample;
  notes: string[];
}

/**
 * `encoding`: a label the user gave (`init --encoding`), for a file whose bytes do not tell which
 * legacy encoding it was saved in: the reader refuses to guess, and so does init.
 */
export async function readRosterSample(file: string, baseDir: string, sheet?: string | number, encoding?: string): Promise<RosterSample> {
  const isXlsx = /\.xls[xm]$/i.test(file);
  let firstTry: RosterSample | undefined;
  for (let headerRow = 1; headerRow <= MAX_HEADER_ROW; headerRow++) {
    const source: SourceConfig = isXlsx
      ? ({ file, xlsx: { sheet: sheet ?? 1, header_row: headerRow } } as SourceConfig)
      : ({ file, csv: { encoding: encoding ?? 'auto', delimiter: 'auto', header_row: headerRow } } as SourceConfig);
    const opened = await openSource(source, { baseDir });
    const sample: ColumnSample = Object.fromEntries(opened.headers.map((h) => [h, []]));
    let rows = 0;
    let errors = 0;
    for await (const item of opened.items) {
      if (item.kind === 'row') {
        rows++;
        for (const [column, value] of Object.entries(item.row.values)) {
          if (value !== null && value !== '' && sample[column]) sample[column].push(String(value));
        }
      } else errors++;
      if (rows + errors >= SAMPLE_ROWS) break;
    }
    const notes = [...opened.notes];
    const others = (opened.sheets ?? []).filter((name) => name !== opened.sheet);
    if (sheet === undefined && others.length > 0) {
      notes.push(`The workbook has ${others.length + 1} worksheets; init read the first, "${opened.sheet}". The others: ${others.map((o) => `"${o}"`).join(', ')}; pass --sheet with a name or a number (1 = first tab) to read another.`);
    }
    const result: RosterSample = { source: withHeaderLine(withSheet(source, opened.sheet), notes), headers: opened.headers, sample, notes };
    firstTry ??= result;
    // Title lines make a one-cell header above rows of many cells, which the reader rejects.
    if (errors <= rows && opened.headers.length > 1) return result;
  }
  return firstTry!;
}

/** `header_row` is a line (docs/mapping.md): write the line the header is on, not where blank lines start. */
function withHeaderLine(source: SourceConfig, notes: string[]): SourceConfig {
  const line = notes.map((n) => /^The header row is line (\d+):/.exec(n)?.[1]).find(Boolean);
  if (!source.csv || line === undefined) return source;
  return { ...source, csv: { ...source.csv, header_row: Number(line) } };
}

function withSheet(source: SourceConfig, sheet: string | undefined): SourceConfig {
  if (!source.xlsx || sheet === undefined) return source;
  return { ...source, xlsx: { ...source.xlsx, sheet } };
}

/** The detected encoding and delimiter, from the reader's notes, to write down in the pipeline. */
export function detectedCsvOptions(notes: string[], given?: string): { encoding?: string; delimiter?: string } {
  const out: { encoding?: string; delimiter?: string } = {};
  // The reader's note on a detected legacy encoding names the exact line to write.
  const detected = notes.map((n) => /Set "encoding: ([^"]+)" under source\.csv/.exec(n)?.[1]).find(Boolean);
  const encoding = given ?? detected;
  if (encoding !== undefined) out.encoding = encoding;
  const delimiter = notes.map((n) => /^Delimiter: (\w+)/.exec(n)?.[1]).find(Boolean);
  const byName: Record<string, string> = { semicolon: ';', tab: '\t', pipe: '|' };
  if (delimiter && byName[delimiter]) out.delimiter = byName[delimiter];
  return out;
}
