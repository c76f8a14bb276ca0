/**
 * Streaming CSV reader ("Readers"). A small sample from the start of the file decides the
 * encoding, the delimiter and where the header line starts (sniff.ts); then the file is
 * streamed through the decoder (../encoding/decode.ts) and the record reader (split-records.ts, rows.ts)
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
import type { csvOptionsSchema } from '../options.js';
import type { OpenedSource, SourceItem } from '../types.js';
import { BOM, CsvDecoder, chooseEncoding } from '../encoding/decode.js';
import { decodeAs } from '../encoding/detect.js';
import { RosterCsvParser } from './rows.js';
import { checkNotCsv, chooseDelimiter, countLines, DELIMITERS, DELIMITER_NAMES, detectBom, lineStartOffset, type CsvDelimiter } from './sniff.js';
import { SourceError } from '../source-error.js';
import { encodingOfLabel } from '../encoding/labels.js';

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
  /** Rows as `PackedRow`s (see rows.ts). */
  packRows?: boolean | undefined;
}

export async function openCsv({ path, file, options, signal, packRows }: CsvOpenArgs): Promise<OpenedSource> {
  const notes: string[] = [];

  const { sample, size } = await readSample(path, CSV_SAMPLE_BYTES);
  const bom = detectBom(sample);
  const utf16 = utf16Of(sample, bom, options?.encoding ?? 'auto', file);
  if (utf16) return openUtf16({ path, file, options, signal, packRows }, sample, size, utf16);
  checkNotCsv(sample, file);
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
  return streamRows({ path, file, signal, packRows }, decoder, { delimiter, headerOffset, headerRow }, notes);
}

/** Streams the file from the header line through the decoder and the record reader. */
async function streamRows(
  { path, file, signal, packRows }: Omit<CsvOpenArgs, 'options'>,
  decoder: CsvDecoder,
  { delimiter, headerOffset, headerRow }: { delimiter: CsvDelimiter; headerOffset: number; headerRow: number },
  notes: string[],
): Promise<OpenedSource> {
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
    // One note with one line number: the "Skipped" note above counted to header_row, not to the header.
    const skipped = notes.findIndex((n) => n.startsWith('Skipped '));
    if (skipped >= 0) notes.splice(skipped, 1);
    notes.push(`The header row is line ${parser.headerLine}: header_row is ${headerRow}, and the lines from there to the header are blank.`);
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

/**
 * Whether a file is UTF-16, and which byte order: its byte-order mark, the pipeline's
 * `encoding: utf-16le` / `utf-16be`, or, with neither, an unambiguous pattern of NUL bytes (text
 * of mostly Latin letters in UTF-16 has a NUL in every other byte, on the same side throughout).
 * A file with NUL bytes in no such pattern is refused, with the line to add if it is UTF-16.
 */
function utf16Of(sample: Buffer, bom: ReturnType<typeof detectBom>, requested: string, file: string): { encoding: 'UTF-16LE' | 'UTF-16BE'; by: string; start: number } | undefined {
  if (bom?.bom === 'utf-16le' || bom?.bom === 'utf-16be') return { encoding: bom.bom === 'utf-16le' ? 'UTF-16LE' : 'UTF-16BE', by: 'byte-order mark', start: bom.length };
  if (bom !== undefined) return undefined;
  const declared = requested === 'auto' ? undefined : encodingOfLabel(requested);
  if (declared === 'UTF-16LE' || declared === 'UTF-16BE') return { encoding: declared, by: 'set in the pipeline', start: 0 };
  // A workbook (zip, or legacy .xls) holds NULs too: checkNotCsv names it.
  const magic = sample.length >= 4 ? sample.readUInt32BE(0) : 0;
  if (!sample.includes(0) || magic === 0x504b0304 || magic === 0xd0cf11e0) return undefined;
  const nuls = [0, 0];
  for (let i = 0; i < sample.length; i++) if (sample[i] === 0) nuls[i % 2]!++;
  const half = Math.floor(sample.length / 2);
  const [even, odd] = nuls as [number, number];
  if (odd >= half * 0.3 && even === 0) return { encoding: 'UTF-16LE', by: 'detected: a NUL after each Latin letter, no byte-order mark', start: 0 };
  if (even >= half * 0.3 && odd === 0) return { encoding: 'UTF-16BE', by: 'detected: a NUL before each Latin letter, no byte-order mark', start: 0 };
  throw new SourceError(file, `${file} contains NUL bytes: it is UTF-16 text without a byte-order mark in no clear byte order, or a binary file, not a CSV file.`, {
    hint: 'If it is UTF-16 text, say which under source.csv in the pipeline ("encoding: utf-16le", Windows\' usual order, or "encoding: utf-16be"); else re-save it as UTF-8 CSV (in Excel: "CSV UTF-8 (Comma delimited)").',
  });
}

/**
 * A UTF-16 file (Excel's "Unicode Text" is UTF-16LE with a BOM and tabs): sniffed on its decoded
 * start, then streamed through a UTF-16 decoder. The header line's byte offset is two bytes per
 * UTF-16 code unit before it.
 */
async function openUtf16(args: CsvOpenArgs, sample: Buffer, size: number, utf16: NonNullable<ReturnType<typeof utf16Of>>): Promise<OpenedSource> {
  const { path, file, options } = args;
  const notes = [`Encoding: ${utf16.encoding} (${utf16.by}).`];
  const body = sample.subarray(utf16.start, utf16.start + ((sample.length - utf16.start) & ~1));
  if (body.length === 0) throw emptyFile(file);
  const text = decodeAs(body, utf16.encoding);
  const asUtf8 = Buffer.from(text);
  const sep = sepLine(asUtf8, 0, file);
  const headerRow = sep ? Math.max(options?.header_row ?? 1, 2) : (options?.header_row ?? 1);
  const lineStart = headerRow === 1 ? 0 : lineStartOffset(asUtf8, headerRow, 0);
  if (lineStart === undefined || lineStart >= asUtf8.length) {
    throw new SourceError(file, `${file}: header_row is ${headerRow}, but no such line was found in the first ${CSV_SAMPLE_BYTES} bytes.`, {
      hint: 'Set csv.header_row to the line holding the column names (1 = first line).',
    });
  }
  const headerOffset = utf16.start + 2 * asUtf8.subarray(0, lineStart).toString('utf8').length;
  if (sep) notes.push(`Line 1 is Excel's "sep=${sep}" line: the delimiter it names is used, and the header is read from line ${headerRow}.`);
  const sampleIsWholeFile = sample.length >= size;
  const delimiter = sep ?? chooseDelimiter(options?.delimiter ?? 'auto', text.slice(asUtf8.subarray(0, lineStart).toString('utf8').length), sampleIsWholeFile, notes);
  const decoder = new CsvDecoder({ file, path, encoding: utf16.encoding, requested: utf16.encoding, startOffset: headerOffset, startLine: headerRow, note: (note) => notes.push(note) });
  return streamRows(args, decoder, { delimiter, headerOffset, headerRow }, notes);
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

