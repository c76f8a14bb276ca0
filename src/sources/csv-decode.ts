/**
 * Decoding of a CSV file's bytes, apart from sniffing and parsing: which encoding to read the file
 * in (`chooseEncoding`, from the pipeline's setting or the sample), and the stream that decodes
 * it for csv-parse (`CsvDecoder`), refusing a file that mixes UTF-8 and Windows-1252.
 */
import { open } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { isAscii, isUtf8 } from 'node:buffer';
import iconv from 'iconv-lite';
import {
  classifyUtf8,
  firstInvalidUtf8Index,
  firstInvalidUtf8Line,
  hasUtf8MultibyteSequence,
  incompleteUtf8Tail,
  lineBreaksIn,
  type CsvEncoding,
} from './csv-sniff.js';
import { SourceError } from './source-error.js';

/** Bytes per chunk of the decoded stream (the reader's sample size). */
export const CSV_CHUNK_BYTES = 64 * 1024;

export function chooseEncoding(
  requested: 'auto' | CsvEncoding,
  hasBom: boolean,
  sample: Buffer,
  notes: string[],
  where: { file: string; headerRow: number },
): CsvEncoding {
  if (requested !== 'auto') {
    notes.push(`Encoding: ${requested === 'utf-8' ? 'UTF-8' : 'Windows-1252'} (set in the pipeline).`);
    return requested;
  }
  if (hasBom) {
    notes.push('Encoding: UTF-8 (byte-order mark).');
    return 'utf-8';
  }
  const verdict = classifyUtf8(sample);
  if (verdict === 'mixed') {
    const line = where.headerRow - 1 + firstInvalidUtf8Line(sample);
    throw new SourceError(
      where.file,
      `${where.file} mixes encodings: it has UTF-8 text and, from line ${line}, bytes that are not UTF-8 (likely Windows-1252). Read either way, some names would be corrupted.`,
      { hint: 'Re-save the whole file as UTF-8 ("CSV UTF-8" in Excel), or set source.csv.encoding if you accept one reading.' },
    );
  }
  if (verdict === 'invalid') {
    notes.push('Encoding: Windows-1252 (detected: the file is not valid UTF-8).');
    return 'windows-1252';
  }
  notes.push(verdict === 'ascii' ? 'Encoding: UTF-8 (the start of the file is plain ASCII).' : 'Encoding: UTF-8 (detected).');
  return 'utf-8';
}

/**
 * Hands bytes to csv-parse, decoding only when needed. UTF-8 passes through untouched (csv-parse
 * decodes it) after a native validity check per chunk. With `auto`, a file whose start was plain
 * ASCII but turns out not to be UTF-8 further down switches to Windows-1252 from that chunk: every
 * byte before was ASCII, which both encodings read the same, so nothing already read changes.
 */
export class CsvDecoder extends Transform {
  private mode: 'utf-8' | 'utf-8-unchecked' | 'windows-1252';
  private carry: Buffer | undefined;
  private sawNonAscii = false;
  /** Byte offset in the file of the next chunk, for notes. */
  private offset: number;
  private readonly file: string;
  private readonly path: string;
  private readonly startOffset: number;
  private readonly startLine: number;
  private readonly requested: 'auto' | CsvEncoding;
  private readonly note: (text: string) => void;

  constructor(args: {
    file: string;
    /** The file on disk, read again only to turn a byte offset into a line number for a message. */
    path: string;
    encoding: CsvEncoding;
    requested: 'auto' | CsvEncoding;
    startOffset: number;
    /** Line number of the line at `startOffset` (the header row). */
    startLine: number;
    note: (text: string) => void;
  }) {
    super({ highWaterMark: CSV_CHUNK_BYTES });
    this.file = args.file;
    this.path = args.path;
    this.mode = args.encoding;
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

  /** Calls back with what `make` builds from the line of `byteOffset` (or without a line, if the file cannot be read again). */
  private withLine<T>(byteOffset: number, make: (line: string) => T, done: (value: T) => void): void {
    this.lineAt(byteOffset).then(
      (line) => done(make(`line ${line}`)),
      () => done(make(`byte ${byteOffset}`)),
    );
  }

  /**
   * With `auto`, a file that turns out to hold both UTF-8 text and bytes that are not UTF-8 is
   * refused: read either way, some names would be corrupted, and nothing tells which reading is
   * right. (An explicit `csv.encoding` is the operator's answer.)
   */
  private mixed(at: number, callback: TransformCallback): void {
    this.withLine(
      at,
      (where) =>
        new SourceError(
          this.file,
          `${this.file} mixes encodings: it has UTF-8 text and bytes that are not UTF-8 (near ${where}). Read either way, some names would be corrupted.`,
          { hint: 'Re-save the whole file as UTF-8 ("CSV UTF-8" in Excel), or set source.csv.encoding if you accept one reading.' },
        ),
      callback,
    );
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    // The sample check (checkNotCsv) sees only the start of the file: a NUL byte anywhere later is
    // a binary or damaged part, refused too rather than read into a cell.
    const nul = chunk.indexOf(0);
    if (nul !== -1) {
      this.withLine(
        this.offset + (this.carry?.length ?? 0) + nul,
        (where) =>
          new SourceError(this.file, `${this.file} contains a NUL byte on ${where}: that part is binary data or damaged, not CSV text.`, {
            hint: 'Look at that line in a text editor; export the roster again as "CSV UTF-8", or remove the damaged part.',
          }),
        callback,
      );
      return;
    }
    if (this.mode === 'windows-1252') {
      if (this.requested === 'auto' && hasUtf8MultibyteSequence(chunk)) {
        this.mixed(this.offset, callback);
        return;
      }
      this.offset += chunk.length;
      callback(null, iconv.decode(chunk, 'windows-1252'));
      return;
    }
    let buf = chunk;
    if (this.carry) {
      buf = Buffer.concat([this.carry, chunk]);
      this.carry = undefined;
    }
    if (this.mode === 'utf-8-unchecked' || isAscii(buf)) {
      this.offset += buf.length;
      callback(null, buf);
      return;
    }
    const tail = incompleteUtf8Tail(buf);
    const body = tail === 0 ? buf : buf.subarray(0, buf.length - tail);
    if (isUtf8(body)) {
      // The held-back tail may be a Windows-1252 letter, not a UTF-8 lead byte: only the checked
      // body says whether the file has shown non-ASCII UTF-8 yet.
      this.sawNonAscii ||= !isAscii(body);
      if (tail > 0) this.carry = Buffer.from(buf.subarray(buf.length - tail));
      this.offset += body.length;
      callback(null, body);
      return;
    }
    if (this.requested === 'auto') {
      if (this.sawNonAscii || hasUtf8MultibyteSequence(buf)) {
        this.mixed(this.offset + firstInvalidUtf8Index(buf), callback);
        return;
      }
      this.mode = 'windows-1252';
      let first = 0;
      while (first < buf.length && (buf[first] as number) < 0x80) first++;
      const start = this.offset;
      this.offset += buf.length;
      this.withLine(
        start + first,
        (where) => `Encoding: switched to Windows-1252 at ${where} (the file is not valid UTF-8 there; everything before was plain ASCII).`,
        (note) => {
          this.note(note);
          callback(null, iconv.decode(buf, 'windows-1252'));
        },
      );
      return;
    }
    this.mode = 'utf-8-unchecked';
    this.withLine(
      this.offset + firstInvalidUtf8Index(buf),
      (where) =>
        `The file is not valid UTF-8 from ${where} on; invalid characters were read as "\uFFFD". ` +
        'Re-save the file as UTF-8, or set csv.encoding: windows-1252 if it is a Windows export.',
      (note) => {
        this.note(note);
        callback(null, buf);
      },
    );
  }

  override _flush(callback: TransformCallback): void {
    const carry = this.carry;
    this.carry = undefined;
    if (carry === undefined) callback();
    else callback(null, this.mode === 'windows-1252' ? iconv.decode(carry, 'windows-1252') : carry);
  }
}
