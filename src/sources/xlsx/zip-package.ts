/**
 * The workbook's zip, read from its central directory (yauzl): parts are found by name whatever
 * order the writer stored them in, so reading never depends on entry order (Excel often
 * stores worksheets before sharedStrings.xml and styles.xml). No temp files; every error arrives
 * as a rejected promise or a failed iteration, never as an uncaught event.
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import yauzl from 'yauzl';
import type { Entry, ZipFile } from 'yauzl';
import { SourceError } from '../source-error.js';
import { checkInflatedSize } from './zip-bomb-guard.js';

const DAMAGED_HINT = 'Copy or download the workbook again, or open it in Excel (which may repair it) and save it again.';

export class ZipPackage {
  /** Part streams not yet finished: closing the package ends them, so the file is closed even mid-read. */
  private readonly open = new Set<Readable>();

  private constructor(
    private readonly zip: ZipFile,
    /** Part name → entry; keys are lower-cased because OPC part names are case-insensitive. */
    private readonly entries: Map<string, Entry>,
    readonly file: string,
  ) {}

  static async open(path: string, file: string): Promise<ZipPackage> {
    const zip = await new Promise<ZipFile>((resolve, reject) => {
      yauzl.open(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true }, (error, opened) => {
        if (error) reject(damaged(file, error));
        else resolve(opened);
      });
    });
    const entries = new Map<string, Entry>();
    try {
      await new Promise<void>((resolve, reject) => {
        zip.on('entry', (entry: Entry) => {
          if (!entry.fileName.endsWith('/')) entries.set(entry.fileName.toLowerCase(), entry);
          zip.readEntry();
        });
        zip.on('end', () => resolve());
        zip.on('error', (error: Error) => reject(damaged(file, error)));
        zip.readEntry();
      });
    } catch (error) {
      zip.close();
      throw error;
    }
    // Errors after the listing belong to a part's stream; keep one listener so none is uncaught.
    zip.removeAllListeners('error');
    zip.on('error', () => undefined);
    return new ZipPackage(zip, entries, file);
  }

  /** Whether the part exists (name relative to the package root, no leading slash). */
  has(name: string): boolean {
    return this.entry(name) !== undefined;
  }

  private entry(name: string): Entry | undefined {
    const key = name.toLowerCase();
    const found = this.entries.get(key);
    if (found) return found;
    // Part names are URIs: a writer may percent-encode what another stores raw.
    try {
      const decoded = decodeURIComponent(key);
      if (decoded !== key) return this.entries.get(decoded);
    } catch {
      // Not percent-encoded.
    }
    return undefined;
  }

  /**
   * Streams a part as text, in chunks, checked against the zip-bomb guard on the declared and the
   * actually inflated size. `heldInMemory` says the caller keeps the whole part (stricter cap).
   */
  async *text(name: string, heldInMemory: boolean): AsyncGenerator<string> {
    const entry = this.entry(name);
    if (!entry) throw missingPart(this.file, name);
    if (entry.isEncrypted()) {
      throw new SourceError(this.file, `${this.file} is encrypted (its part ${name} cannot be read without a password).`, {
        hint: 'Open it in Excel and save it as "Excel Workbook (.xlsx)" without a password.',
      });
    }
    if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
      throw new SourceError(this.file, `${this.file} is damaged: its part ${name} uses zip compression method ${entry.compressionMethod}, which Excel does not write.`, {
        hint: 'Open the workbook in Excel and save it again as "Excel Workbook (.xlsx)".',
      });
    }
    const guarded = { name, compressedSize: entry.compressedSize, heldInMemory };
    checkInflatedSize(this.file, guarded, entry.uncompressedSize);
    const stream = await new Promise<Readable>((resolve, reject) => {
      this.zip.openReadStream(entry, (error, opened) => (error ? reject(damaged(this.file, error, name)) : resolve(opened)));
    });
    this.open.add(stream);
    let decoder: StringDecoder | undefined;
    let inflated = 0;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        inflated += chunk.length;
        checkInflatedSize(this.file, guarded, inflated);
        if (!decoder) {
          // XML parts are UTF-8 unless they start with a UTF-16 byte-order mark.
          const utf16 = chunk.length >= 2 && ((chunk[0] === 0xff && chunk[1] === 0xfe) || (chunk[0] === 0xfe && chunk[1] === 0xff));
          if (utf16 && chunk[0] === 0xfe) throw unsupported(this.file, name, 'UTF-16 big-endian text');
          decoder = new StringDecoder(utf16 ? 'utf16le' : 'utf8');
        }
        const text = decoder.write(chunk);
        if (text.length > 0) yield text;
      }
      const rest = decoder?.end() ?? '';
      if (rest.length > 0) yield rest;
    } catch (error) {
      if (error instanceof SourceError) throw error;
      throw damaged(this.file, error, name);
    } finally {
      this.open.delete(stream);
      stream.destroy();
    }
  }

  /** Reads a whole (small) part as one string. */
  async readAll(name: string): Promise<string> {
    let text = '';
    for await (const chunk of this.text(name, true)) text += chunk;
    return text;
  }

  /** Closes the file, ending any part still being read. Safe to call more than once. */
  close(): void {
    for (const stream of this.open) stream.destroy();
    this.open.clear();
    this.zip.close();
  }
}

export function missingPart(file: string, name: string): SourceError {
  return new SourceError(file, `${file} is damaged: the workbook refers to the part ${name}, which is not in the zip archive.`, {
    hint: DAMAGED_HINT,
  });
}

function unsupported(file: string, name: string, what: string): SourceError {
  return new SourceError(file, `${file}: its part ${name} is stored as ${what}, which Excel does not write.`, {
    hint: 'Open the workbook in Excel and save it again as "Excel Workbook (.xlsx)".',
  });
}

function damaged(file: string, error: unknown, part?: string): SourceError {
  if (error instanceof SourceError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new SourceError(
    file,
    `${file} could not be read as an Excel workbook: the zip archive is damaged${part ? ` in its part ${part}` : ''} (${detail}).`,
    { hint: DAMAGED_HINT, cause: error },
  );
}
