/**
 * Streaming CSV reader ("Readers"). A small sample from the start of the file decides the
 * encoding, the delimiter and where the header line starts (csv-sniff.ts); then the file is
 * streamed through the decoder (csv-decode.ts) and the record reader (csv-records.ts, csv-parser.ts)
 * with bounded memory.
 *
 * Speed matters (a 1M-row roster must stay close to a bare csv-parse read), so rows are turned into
 * `SourceItem`s as the tokenizer finds them, and the parser stream itself is the async iterable
 * handed out: no extra async layer and no per-row allocation beyond the row object itself.
 */
import { open } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { addAbortSignal, pipeline } from 'node:stream';
import type { z } from 'zod';
import type { csvOptionsSchema } from './options.js';
import type { OpenedSource, SourceItem } from './types.js';
import { BOM, CsvDecoder, chooseEncoding } from './csv-decode.js';
import { decodeAs } from './csv-detect.js';
import { RosterCsvParser } from './csv-parser.js';
import { checkNotCsv, chooseDelimiter, countLines, DELIMITERS, DELIMITER_NAMES, detectBom, lineStartOffset, type CsvDelimiter } from './csv-sniff.js';
import { SourceError } from './source-error.js';

export type CsvOptions = z.input<typeof csvOptionsSchema>;

/** Bytes read up front to detect encoding and delimiter. */
export const CSV_SAMPLE_BYTES = 64 * 1024;

/** Longest stretch of title lines we scan for `header_row` before giving up. */
const MAX_TITLE_SCAN_BYTES = 16 * 1024 * 1024;

export interface CsvOpenArgs {
  /** Absolute path of the file. */
  path: string;
  /** How the file is named in provenance and messages (as written in the pipeline). */
  file: string;
  options: CsvOptions | undefined;
  signal?: AbortSignal | undefined;
  /** Rows as `PackedRow`s (see csv-parser.ts). */
  packRows?: boolean | undefined;
}

export async function openCsv({ path, file, options, signal, packRows }: CsvOpenArgs): Promise<OpenedSource> {
  const notes: string[] = [];

  const { sample, size } = await readSample(path, CSV_SAMPLE_BYTES);
  checkNotCsv(sample, file);
  const bom = detectBom(sample);
  if (bom && bom.bom !== 'utf-8') {
    throw new SourceError(file, `${file} is encoded as ${bom.bom.toUpperCase()}, which rostersync does not read.`, {
      hint: 'Re-save it as UTF-8: in Excel choose "CSV UTF-8 (Comma delimited)"; in other editors pick the UTF-8 encoding.',
    });
  }
  const bomLength = bom?.length ?? 0;
  if (bomLength === size) throw emptyFile(file);

  // Excel's `sep=;` first line names the delimiter; the header is the line after it.
  const sep = sepLine(sample, bomLength, file);
  const headerRow = sep ? Math.max(options?.header_row ?? 1, 2) : (options?.header_row ?? 1);
  const headerOffset = await findHeaderOffset(path, sample, size, bomLength, headerRow, file);
  if (sep) notes.push(`Line 1 is Excel's "sep=${sep}" line: the delimiter it names is used, and the header is read from line ${headerRow}.`);
  else if (headerRow > 1) notes.push(`Skipped ${headerRow - 1} line(s) above the header row (line ${headerRow}).`);

  // Detection looks at the header line and what follows, not at the title lines above it.
  const headerSample = headerOffset === 0 ? sample : (await readSample(path, CSV_SAMPLE_BYTES, headerOffset)).sample;
  const sampleIsWholeFile = headerOffset + headerSample.length >= size;
  const requested = options?.encoding ?? 'auto';
  const encoding = await chooseEncoding(requested, bomLength > 0, headerSample, notes, { file, firstLine: headerRow, path, offset: headerOffset });
  const requestedDelimiter = options?.delimiter ?? 'auto';
  if (sep && requestedDelimiter !== 'auto' && requestedDelimiter !== sep) {
    throw new SourceError(
      file,
      `${file} starts with "sep=${sep}", Excel's line naming the delimiter, but source.csv.delimiter says ${JSON.stringify(requestedDelimiter)}.`,
      { hint: `Remove csv.delimiter from the pipeline (the file says which it uses), or set it to ${JSON.stringify(sep)}.` },
    );
  }
  const delimiter = sep ?? chooseDelimiter(requestedDelimiter, decodeAs(headerSample, encoding), sampleIsWholeFile, notes);

  const decoder = new CsvDecoder({
    file,
    path,
    encoding,
    requested: bomLength > 0 ? BOM : requested,
    startOffset: headerOffset,
    startLine: headerRow,
    note: (note) => notes.push(note),
  });
  const parser = new RosterCsvParser({ file, delimiter, lineOffset: headerRow - 1, headerRow, packRows, note: (note) => notes.push(note) });
  const input = createReadStream(path, { start: headerOffset, highWaterMark: CSV_SAMPLE_BYTES });
  if (signal) addAbortSignal(signal, input);
  pipeline(input, decoder, parser, () => {
    // Errors reach the consumer through the parser stream (pipeline destroys it with the error).
  });

  let firstItemSeen: boolean;
  try {
    await parser.headerReady;
    firstItemSeen = await parser.firstItemOrEnd;
  } catch (error) {
    parser.destroy();
    throw error;
  }
  if (parser.headerLine !== headerRow) {
    notes.push(`The header row was found on line ${parser.headerLine} (the lines before it are blank).`);
  }
  if (!firstItemSeen) notes.push(`${file} has a header row but no data rows.`);

  return {
    file,
    path,
    format: 'csv',
    headers: parser.headers,
    notes,
    items: { [Symbol.asyncIterator]: () => parser[Symbol.asyncIterator]() as AsyncIterator<SourceItem> },
  };
}

/** The delimiter named by an Excel `sep=X` first line, if the file has one. */
function sepLine(sample: Buffer, from: number, file: string): CsvDelimiter | undefined {
  const match = /^sep=(.)(?:\r\n|\n|\r)/i.exec(sample.subarray(from, from + 16).toString('latin1'));
  if (!match) return undefined;
  const named = match[1] as string;
  const delimiter = DELIMITERS.find((candidate) => candidate === named);
  if (delimiter === undefined) {
    throw new SourceError(file, `${file} starts with "sep=${named}", Excel's line naming the delimiter, but rostersync reads only ${DELIMITERS.map((d) => DELIMITER_NAMES[d]).join(', ')} delimiters.`, {
      hint: 'Save the file again from Excel with a comma or semicolon as the list separator.',
    });
  }
  return delimiter;
}

function emptyFile(file: string): SourceError {
  return new SourceError(file, `${file} is empty.`, {
    hint: 'Export the roster again; the file must start with a header row naming the columns.',
  });
}

async function readSample(path: string, bytes: number, position = 0): Promise<{ sample: Buffer; size: number }> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const sample = Buffer.alloc(Math.max(0, Math.min(bytes, size - position)));
    const { bytesRead } = await handle.read(sample, 0, sample.length, position);
    return { sample: sample.subarray(0, bytesRead), size };
  } finally {
    await handle.close();
  }
}

/** Byte offset of the header line, reading past the sample if the title block is long. */
async function findHeaderOffset(
  path: string,
  sample: Buffer,
  size: number,
  bomLength: number,
  headerRow: number,
  file: string,
): Promise<number> {
  if (headerRow === 1) return bomLength;
  let buf = sample;
  for (;;) {
    const offset = lineStartOffset(buf, headerRow, bomLength);
    const wholeFile = buf.length >= size;
    if (offset !== undefined && (offset < buf.length || wholeFile)) {
      if (offset >= size) break;
      return offset;
    }
    if (wholeFile || buf.length >= MAX_TITLE_SCAN_BYTES) break;
    buf = (await readSample(path, Math.min(buf.length * 4, MAX_TITLE_SCAN_BYTES))).sample;
  }
  const lines = buf.length >= size ? countLines(buf.subarray(bomLength)) : undefined;
  throw new SourceError(
    file,
    lines === undefined
      ? `${file}: header_row is ${headerRow}, but no such line was found in the first ${MAX_TITLE_SCAN_BYTES} bytes.`
      : `${file}: header_row is ${headerRow}, but the file has only ${lines} line(s).`,
    { hint: 'Set csv.header_row to the line holding the column names (1 = first line).' },
  );
}

