/**
 * Decoding of a CSV file's bytes, apart from sniffing and parsing: which encoding to read the file
 * in (`chooseEncoding`: a byte-order mark, else the pipeline's `csv.encoding` checked against the
 * bytes, else UTF-8 or a detected legacy encoding), and the stream that decodes it for the parser
 * (`CsvDecoder`), which applies the same rules to every later chunk.
 *
 * The rules, in order: a BOM wins over everything. A declaration that the bytes contradict
 * (invalid UTF-8 under `utf-8`, clean UTF-8 lines under a legacy encoding) is refused with the
 * evidence. Without a declaration, valid UTF-8 is UTF-8; UTF-8 lines mixed with lines that are not
 * UTF-8 are refused; anything else goes to the detector (detect.ts), whose answer is taken
 * only when it is clear, else the file is refused with the names read each way.
 */
import { open } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { isAscii, isUtf8 } from 'node:buffer';
import iconv from 'iconv-lite';
import { detectFromTally, detectLegacyEncoding, namesEachWay, type Detection, type Reading } from './detect.js';
import { tallyFile } from './word-tally.js';
import { encodingOfLabel, iconvCodec } from './labels.js';
import { firstInvalidUtf8Index, incompleteUtf8Tail, lineBreaksIn } from './bytes.js';
import { SourceError } from '../source-error.js';
import { personal } from '../../personal-data/personal-text.js';

/** Bytes per chunk of the decoded stream (the reader's sample size). */
export const CSV_CHUNK_BYTES = 64 * 1024;

export const UTF8 = 'UTF-8';

/** Where a sample sits in the file, to turn its line numbers into the file's. */
export interface SampleWhere {
  file: string;
  /** Line number of the sample's first line. */
  firstLine: number;
  /** The file on disk, and the byte offset of the sample in it: detection weighs the whole file from there. */
  path: string;
  offset: number;
}

/** Lines of a sample that are clean UTF-8 with letters beyond ASCII, and lines that are not UTF-8. */
export interface Utf8Evidence {
  /** 1-based line within the sample, and its bytes, of the first clean non-ASCII UTF-8 line. */
  utf8?: { line: number; bytes: Buffer };
  /** 1-based line within the sample of the first line that is not UTF-8. */
  invalid?: { line: number; bytes: Buffer };
}

/**
 * Sorts the sample's lines into ASCII, clean UTF-8 and not UTF-8. A line of a legacy encoding is
 * practically never clean UTF-8 (its accented letters would have to come in exact lead and
 * continuation pairs, as in "Ã©"), so a clean UTF-8 line is UTF-8 text. The sample may stop in
 * the middle of a character: its unfinished tail is left out.
 */
export function utf8Evidence(sample: Buffer): Utf8Evidence {
  const body = sample.subarray(0, sample.length - incompleteUtf8Tail(sample));
  const found: Utf8Evidence = {};
  let line = 1;
  for (let start = 0; start < body.length; line++) {
    const newline = body.indexOf(0x0a, start);
    const end = newline === -1 ? body.length : newline;
    const bytes = body.subarray(start, end);
    if (!isAscii(bytes)) {
      if (isUtf8(bytes)) found.utf8 ??= { line, bytes };
      else found.invalid ??= { line, bytes };
      if (found.utf8 && found.invalid) break;
    }
    start = end + 1;
  }
  return found;
}

const quoted = (words: readonly string[]): string => words.map((word) => `"${personal(word)}"`).join(', ');

/** The line to add to the pipeline for an encoding (every WHATWG name, lower-cased, is a label). */
export const encodingLine = (encoding: string): string => `encoding: ${encoding.toLowerCase()}`;

/** Up to `count` words, at the same places, that the readings disagree on (addresses aside). */
function wordsEachWay(readings: readonly Reading[], count = 4): Array<{ encoding: string; names: string[] }> {
  const first = readings[0]?.texts ?? [];
  const positions: number[] = [];
  for (let i = 0; i < first.length && positions.length < count; i++) {
    if (!first[i]!.includes('@') && readings.some((reading) => reading.texts[i] !== first[i])) positions.push(i);
  }
  return readings.map((reading) => ({ encoding: reading.encoding, names: positions.map((i) => reading.texts[i] ?? '') }));
}

const hexBytes = (bytes: Buffer): string => [...bytes.subarray(0, 24)].map((byte) => byte.toString(16).toUpperCase().padStart(2, '0')).join(' ') + (bytes.length > 24 ? ' …' : '');

/**
 * A file (or the part from `line` on) that is not UTF-8 and whose encoding the detector cannot
 * name for sure: the likely encodings, best first, the same names read in each, and the line to
 * add; or, when one word of the file reads clearly otherwise than the rest, that word.
 */
function undetectedError(where: SampleWhere, detection: Detection, fromLine?: string): SourceError {
  const from = fromLine === undefined ? '' : ` from ${fromLine} on`;
  if (detection.kind !== 'ambiguous') {
    return new SourceError(where.file, `${where.file} is not UTF-8${from}, and no encoding known to rostersync reads it as text.`, {
      hint: 'Re-save the file as "CSV UTF-8", or set source.csv.encoding to the encoding it was saved in (a label of the WHATWG Encoding Standard).',
    });
  }
  const ways = wordsEachWay(detection.readings);
  const lines = ways.map((way) => `  ${encodingLine(way.encoding)}`).join('\n');
  const hint = `Say which one is right in the pipeline, under source.csv (for example "${encodingLine(ways[0]?.encoding ?? 'windows-1252')}"):\n${lines}\nor re-save the file as "CSV UTF-8".`;
  const contradiction = detection.contradiction;
  if (contradiction) {
    const { word, chosen, other } = contradiction;
    return new SourceError(
      where.file,
      `${where.file} is not UTF-8${from}. Most of it reads as ${chosen.encoding}, but line ${word.line} has the bytes ${hexBytes(word.bytes)}, which read as "${chosen.text}" in ${chosen.encoding} and as "${other.text}" in ${other.encoding}: the file may mix encodings, and either way some names would be misspelt.`,
      { hint: `If the whole file is in one encoding, say which in the pipeline, under source.csv:\n  ${encodingLine(chosen.encoding)}\n  ${encodingLine(other.encoding)}\nelse re-save the whole file in one encoding ("CSV UTF-8" in Excel).` },
    );
  }
  const readings = ways.map((way) => `  as ${way.encoding}: ${quoted(way.names)}`).join('\n');
  return new SourceError(
    where.file,
    `${where.file} is not UTF-8${from}, and its bytes do not say for sure which encoding it was saved in (likeliest first). The same names read:\n${readings}`,
    { hint },
  );
}

function mixedError(file: string, near: string): SourceError {
  return new SourceError(
    file,
    `${file} mixes encodings: it has UTF-8 text and, from ${near}, bytes that are not UTF-8. Read either way, some names would be corrupted.`,
    { hint: 'Re-save the whole file in one encoding ("CSV UTF-8" in Excel).' },
  );
}

/** `csv.encoding: utf-8` on bytes that are not UTF-8: what they look like, and the fix. */
/** The `requested` a decoder gets for a file whose byte-order mark decided the encoding. */
export const BOM = 'bom';

/** What declared a file UTF-8, for messages: its byte-order mark, or the pipeline. */
const declaredBy = (requested: string): string => (requested === BOM ? 'its byte-order mark says it is' : 'source.csv.encoding says it is');

async function notUtf8Error(where: SampleWhere, sample: Buffer, line: string, requested: string): Promise<SourceError> {
  const detection = detectLegacyEncoding(sample);
  const bad = sample[firstInvalidUtf8Index(sample)] ?? 0;
  let looks = '';
  let fix = 'set source.csv.encoding to the encoding it was saved in';
  if (detection.kind === 'accepted') {
    const [way] = namesEachWay(sample, [detection.reading.encoding]);
    looks = ` It reads as ${detection.reading.encoding}: ${quoted(way?.names ?? [])}.`;
    fix = `set "${encodingLine(detection.reading.encoding)}" under source.csv`;
  } else if (detection.kind === 'ambiguous') {
    const ways = namesEachWay(sample, detection.readings.map((reading) => reading.encoding));
    looks = ` It reads as ${ways.map((way) => `${way.encoding} (${quoted(way.names)})`).join(' or ')}.`;
    fix = `set the right one of ${ways.map((way) => `"${encodingLine(way.encoding)}"`).join(', ')} under source.csv`;
  }
  return new SourceError(
    where.file,
    `${where.file} is not UTF-8, but ${declaredBy(requested)}: ${line} has the byte 0x${bad.toString(16).toUpperCase()}, which UTF-8 does not allow there.${looks}`,
    { hint: `Re-save the file as "CSV UTF-8", or ${fix}.` },
  );
}

/** A legacy declaration on a file with clean UTF-8 lines: the names both ways, and the fix. */
function utf8UnderLegacyError(file: string, label: string, encoding: string, utf8Line: Buffer, line: string): SourceError {
  const [asUtf8, asDeclared] = namesEachWay(utf8Line, [UTF8, encoding], 2);
  return new SourceError(
    file,
    `${file} has UTF-8 text on ${line}, but source.csv.encoding says ${label}: read that way, ${quoted(asUtf8?.names ?? [])} would become ${quoted(asDeclared?.names ?? [])}.`,
    {
      hint: `If the whole file is UTF-8 (Excel's "CSV UTF-8"), set "${encodingLine(UTF8)}" or remove the encoding line; if only some rows are UTF-8, re-save the whole file in one encoding.`,
    },
  );
}

function lineOf(where: SampleWhere, line: number): string {
  return `line ${where.firstLine - 1 + line}`;
}

export async function chooseEncoding(requested: string, hasBom: boolean, sample: Buffer, notes: string[], where: SampleWhere): Promise<string> {
  const declared = requested === 'auto' ? undefined : encodingOfLabel(requested);
  const evidence = utf8Evidence(sample);
  if (hasBom) {
    if (evidence.invalid) throw await notUtf8Error(where, sample, lineOf(where, evidence.invalid.line), BOM);
    notes.push(
      declared === undefined || declared === UTF8
        ? 'Encoding: UTF-8 (byte-order mark).'
        : `Encoding: UTF-8, from the file's byte-order mark, although source.csv.encoding says ${requested}: a byte-order mark always wins (the file was saved as UTF-8, e.g. "CSV UTF-8" in Excel).`,
    );
    return UTF8;
  }
  if (declared === UTF8) {
    if (evidence.invalid) throw await notUtf8Error(where, sample, lineOf(where, evidence.invalid.line), requested);
    notes.push('Encoding: UTF-8 (set in the pipeline).');
    return UTF8;
  }
  if (declared !== undefined) {
    if (evidence.utf8) throw utf8UnderLegacyError(where.file, requested, declared, evidence.utf8.bytes, lineOf(where, evidence.utf8.line));
    notes.push(`Encoding: ${declared} (set in the pipeline).`);
    return declared;
  }
  if (!evidence.invalid) {
    notes.push(evidence.utf8 ? 'Encoding: UTF-8 (detected).' : 'Encoding: UTF-8 (the start of the file is plain ASCII).');
    return UTF8;
  }
  if (evidence.utf8) throw mixedError(where.file, lineOf(where, evidence.invalid.line));
  const detection = detectFromTally(await tallyFile(where.path, where.offset, where.firstLine));
  if (detection.kind !== 'accepted') throw undetectedError(where, detection);
  notes.push(detectedNote(detection.reading.encoding, detection.reading.same));
  return detection.reading.encoding;
}

function detectedNote(encoding: string, same: readonly string[]): string {
  const shown = same.slice(0, 3).join(', ') + (same.length > 3 ? ` and ${same.length - 3} more` : '');
  const alike = same.length > 0 ? `; ${shown} read it the same` : '';
  return `Encoding: ${encoding} (detected: the file is not UTF-8${alike}). Set "${encodingLine(encoding)}" under source.csv to be sure.`;
}

/**
 * Hands text to the parser. UTF-8 is checked natively per chunk and passed on as bytes; a legacy
 * encoding goes through iconv-lite's streaming decoder (which keeps a double-byte character split
 * between chunks whole). Every chunk is held to the rules of `chooseEncoding`: with `auto`, a file
 * whose start was plain ASCII but turns out not to be UTF-8 further down is detected from that
 * chunk (everything before was ASCII, which every candidate reads the same, so nothing already
 * read changes), or refused.
 */
export class CsvDecoder extends Transform {
  private encoding: string;
  private decoder: { write(chunk: Buffer): string; end(): string | undefined } | undefined;
  private carry: Buffer | undefined;
  private sawNonAscii = false;
  /** Byte offset in the file of the next chunk, for messages. */
  private offset: number;
  private readonly file: string;
  private readonly path: string;
  private readonly startOffset: number;
  private readonly startLine: number;
  private readonly requested: string;
  private readonly note: (text: string) => void;

  constructor(args: {
    file: string;
    /** The file on disk, read again only to turn a byte offset into a line number for a message. */
    path: string;
    encoding: string;
    /** The pipeline's `csv.encoding`, or `BOM` when the file's byte-order mark decided. */
    requested: string;
    startOffset: number;
    /** Line number of the line at `startOffset` (the header row). */
    startLine: number;
    note: (text: string) => void;
  }) {
    super({ highWaterMark: CSV_CHUNK_BYTES });
    this.file = args.file;
    this.path = args.path;
    this.encoding = args.encoding;
    if (args.encoding !== UTF8) this.decoder = iconv.getDecoder(iconvCodec(args.encoding));
    this.requested = args.requested;
    this.offset = args.startOffset;
    this.startOffset = args.startOffset;
    this.startLine = args.startLine;
    this.note = args.note;
  }

  /**
   * The line of a byte offset, for messages: people find lines, not bytes, in an editor. Counted
   * by reading the file again up to that byte, only on this rare path, so reading stays as fast.
   */
  private async lineAt(byteOffset: number): Promise<number> {
    const handle = await open(this.path, 'r');
    const buf = Buffer.alloc(1024 * 1024);
    let breaks = 0;
    let pos = this.startOffset;
    try {
      while (pos < byteOffset) {
        const { bytesRead } = await handle.read(buf, 0, Math.min(buf.length, byteOffset - pos), pos);
        if (bytesRead === 0) break;
        breaks += lineBreaksIn(buf.subarray(0, bytesRead));
        pos += bytesRead;
      }
    } finally {
      await handle.close();
    }
    return this.startLine + breaks;
  }

  /** Where a chunk sits, for `chooseEncoding`'s messages: its first line's number in the file. */
  private async whereOf(chunkOffset: number): Promise<SampleWhere> {
    return { file: this.file, path: this.path, offset: chunkOffset, firstLine: await this.lineAt(chunkOffset).catch(() => 0) };
  }

  /** Runs `work`, handing its value, or the error it throws, to the stream's callback. */
  private settle(work: Promise<string | Buffer | undefined>, callback: TransformCallback): void {
    work.then(
      (value) => callback(null, value),
      (error: unknown) => callback(error as Error),
    );
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    // UTF-16 holds NUL bytes and byte pairs that look like UTF-8: its decoder alone judges it.
    if (this.encoding === 'UTF-16LE' || this.encoding === 'UTF-16BE') {
      callback(null, this.decode(chunk));
      return;
    }
    // The sample check (checkNotCsv) sees only the start of the file: a NUL byte anywhere later is
    // a binary or damaged part, refused too rather than read into a cell.
    const nul = chunk.indexOf(0);
    if (nul !== -1) {
      this.settle(this.nulError(this.offset + (this.carry?.length ?? 0) + nul), callback);
      return;
    }
    if (this.decoder !== undefined) {
      const start = this.offset;
      this.offset += chunk.length;
      if (!isAscii(chunk) && utf8Evidence(chunk).utf8) {
        this.settle(this.utf8InLegacy(chunk, start), callback);
        return;
      }
      callback(null, this.decode(chunk));
      return;
    }
    let buf = chunk;
    if (this.carry) {
      buf = Buffer.concat([this.carry, chunk]);
      this.carry = undefined;
    }
    if (isAscii(buf)) {
      this.offset += buf.length;
      callback(null, buf);
      return;
    }
    const tail = incompleteUtf8Tail(buf);
    const body = tail === 0 ? buf : buf.subarray(0, buf.length - tail);
    if (isUtf8(body)) {
      // The held-back tail may be a legacy letter, not a UTF-8 lead byte: only the checked body
      // says whether the file has shown non-ASCII UTF-8 yet.
      this.sawNonAscii ||= !isAscii(body);
      if (tail > 0) this.carry = Buffer.from(buf.subarray(buf.length - tail));
      this.offset += body.length;
      callback(null, body);
      return;
    }
    const start = this.offset;
    this.offset += buf.length;
    this.settle(this.leaveUtf8(buf, start), callback);
  }

  private async nulError(at: number): Promise<never> {
    const line = await this.lineAt(at).then((n) => `line ${n}`, () => `byte ${at}`);
    throw new SourceError(this.file, `${this.file} contains a NUL byte on ${line}: that part is binary data or damaged, not CSV text.`, {
      hint: 'Look at that line in a text editor; export the roster again as "CSV UTF-8", or remove the damaged part.',
    });
  }

  /** A chunk of a legacy-encoded file with clean UTF-8 lines: refused, as at the start of the file. */
  private async utf8InLegacy(chunk: Buffer, start: number): Promise<never> {
    const where = await this.whereOf(start);
    const evidence = utf8Evidence(chunk);
    const line = evidence.utf8 ? lineOf(where, evidence.utf8.line) : 'this part';
    if (this.requested === 'auto') throw mixedError(this.file, line);
    throw utf8UnderLegacyError(this.file, this.requested, this.encoding, evidence.utf8?.bytes ?? chunk, line);
  }

  /** The UTF-8 stream meets bytes that are not UTF-8 (`buf` starts at file offset `start`). */
  private async leaveUtf8(buf: Buffer, start: number): Promise<string> {
    const where = await this.whereOf(start);
    if (this.requested !== 'auto') throw await notUtf8Error(where, buf, lineOf(where, utf8Evidence(buf).invalid?.line ?? 1), this.requested);
    const evidence = utf8Evidence(buf);
    if (this.sawNonAscii || evidence.utf8) throw mixedError(this.file, lineOf(where, evidence.invalid?.line ?? 1));
    // Everything before was ASCII: the rest of the file, weighed whole, decides.
    const detection = detectFromTally(await tallyFile(this.path, start, where.firstLine));
    const first = lineOf(where, evidence.invalid?.line ?? 1);
    if (detection.kind !== 'accepted') throw undetectedError(where, detection, first);
    this.encoding = detection.reading.encoding;
    this.decoder = iconv.getDecoder(iconvCodec(this.encoding));
    this.note(`Encoding: switched to ${this.encoding} at ${first} (everything before was plain ASCII). ${detectedNote(this.encoding, detection.reading.same)}`);
    return this.decode(buf);
  }

  /** Text held back so a letter and its combining tone marks (Windows-1258) are composed together. */
  private uncomposed = '';

  /**
   * Decodes a legacy chunk. Windows-1258 writes Vietnamese as base letters followed by combining
   * tone marks; they are composed (NFC) here, as the names are typed and compared elsewhere. The
   * last letter waits for the next chunk, which may hold more of its marks.
   */
  private decode(chunk: Buffer | undefined, final = false): string {
    const text = (chunk ? (this.decoder as { write(chunk: Buffer): string }).write(chunk) : '') + (final ? (this.decoder?.end() ?? '') : '');
    if (this.encoding !== 'windows-1258') return text;
    const all = this.uncomposed + text;
    const cut = final ? all.length : all.search(/\P{M}\p{M}*$/u);
    this.uncomposed = cut === -1 ? '' : all.slice(cut);
    return (cut === -1 ? all : all.slice(0, cut)).normalize('NFC');
  }

  override _flush(callback: TransformCallback): void {
    const carry = this.carry;
    this.carry = undefined;
    if (this.decoder === undefined && carry !== undefined) {
      // The file ends inside what began as a UTF-8 character: those bytes are not UTF-8.
      const start = this.offset;
      this.offset += carry.length;
      this.settle(
        this.leaveUtf8(carry, start).then((text) => text + this.decode(undefined, true)),
        callback,
      );
      return;
    }
    const rest = this.decoder ? this.decode(undefined, true) : '';
    callback(null, rest.length > 0 ? rest : undefined);
  }
}
