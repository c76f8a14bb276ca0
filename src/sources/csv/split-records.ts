/**
 * Splits CSV text into records, as RFC 4180 defines them and as Excel and Python's csv module
 * read what RFC 4180 leaves undefined, where the two agree:
 *
 * - A quoted cell holds anything, line breaks and delimiters included; `""` inside is one quote,
 *   also at its very start (`"""Prefers email""` is `"Prefers email"`).
 * - A quote inside an unquoted cell is text (`Dr. "Bob" Smith`).
 * - Text after a closing quote belongs to the same cell (`"Smith, John" Jr` is `Smith, John Jr`).
 *   A further quote in that text is where readers part ways; the record is flagged (`strayQuote`).
 * - `\r\n`, `\n` and a lone `\r` each end a line, in any mix within one file.
 * - Empty lines are skipped.
 *
 * Records are handed out with the physical lines they start and end on. The text is scanned
 * once with indexOf and charCodeAt; a record cut by the end of a chunk is scanned again with the
 * next chunk (records are short; a cell is bounded by `maxRecordChars`).
 */

const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;

export interface CsvRecordInfo {
  /** Physical lines (1-based, counted from the first text fed) the record starts and ends on. */
  startLine: number;
  endLine: number;
  /** First cell whose closing quote is followed by text (read as Excel does), or -1. */
  textAfterQuote: number;
  /** First cell with a quote after such text (readers disagree on it), or -1. */
  strayQuote: number;
  /** First quoted cell that spans lines, or -1. */
  multiLine: number;
  /** True when the input ended inside a quoted cell. */
  unclosed: boolean;
}

/**
 * Why tokenizing stopped before the end: a record still incomplete past the limit, either inside
 * a quoted cell (`open-quote`) or with no quote involved, the line itself that long (`long-line`).
 * (A record that completes within the chunk that takes it past the limit is still read: the
 * text held is bounded by the limit plus one chunk either way.)
 */
export interface OverlongRecord {
  startLine: number;
  kind: 'open-quote' | 'long-line';
}

/** Line breaks in text[from, to): `\n`, `\r\n` (once) and a lone `\r`. */
function lineBreaks(text: string, from: number, to: number): number {
  let breaks = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === LF) breaks++;
    else if (c === CR && text.charCodeAt(i + 1) !== LF) breaks++;
  }
  return breaks;
}

export class CsvTokenizer {
  private text = '';
  private line = 1;
  private readonly info: CsvRecordInfo = { startLine: 0, endLine: 0, textAfterQuote: -1, strayQuote: -1, multiLine: -1, unclosed: false };

  constructor(
    private readonly delimiter: number,
    private readonly onRecord: (fields: string[], info: Readonly<CsvRecordInfo>) => void,
    private readonly maxRecordChars: number,
  ) {}

  /**
   * Tokenizes `chunk` after what was kept from the previous one; `final` when no more text
   * follows. Returns the record that grew past the limit, if one did (then stop feeding).
   */
  push(chunk: string, final: boolean): OverlongRecord | undefined {
    const text = this.text.length === 0 ? chunk : this.text + chunk;
    const consumed = this.scan(text, final);
    this.text = consumed === text.length ? '' : text.slice(consumed);
    if (!final && this.text.length > this.maxRecordChars) return { startLine: this.line, kind: this.opensQuote(this.text) ? 'open-quote' : 'long-line' };
    return undefined;
  }

  /** Whether a cut record is inside a quoted cell at its end (`""` inside quotes is one quote). */
  private opensQuote(text: string): boolean {
    let inQuotes = false;
    let fieldStart = true;
    let justClosed = false;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        if (inQuotes) {
          inQuotes = false;
          justClosed = true;
        } else if (fieldStart || justClosed) {
          inQuotes = true;
          justClosed = false;
        }
        fieldStart = false;
        continue;
      }
      justClosed = false;
      fieldStart = !inQuotes && (c === this.delimiter || c === LF || c === CR);
    }
    return inQuotes;
  }

  /**
   * Emits every complete record of `text`; returns how much of it was consumed. A record cut by
   * the end of the text is kept, from its start, for the next chunk (`this.line` is still its
   * first line: it moves on only when a record is emitted).
   */
  private scan(text: string, final: boolean): number {
    const n = text.length;
    const delimiter = this.delimiter;
    const info = this.info;
    let pos = 0;
    let line = this.line;
    let recordStart = 0;
    records: while (pos < n) {
      recordStart = pos;
      const startLine = line;
      const first = text.charCodeAt(pos);
      if (first === LF || first === CR) {
        // An empty line.
        if (first === CR && pos + 1 === n && !final) return recordStart;
        pos += first === CR && text.charCodeAt(pos + 1) === LF ? 2 : 1;
        line++;
        this.line = line;
        continue;
      }
      const fields: string[] = [];
      info.textAfterQuote = -1;
      info.strayQuote = -1;
      info.multiLine = -1;
      info.unclosed = false;
      for (;;) {
        // One cell, starting at pos.
        let c = pos < n ? text.charCodeAt(pos) : -1;
        if (c === QUOTE) {
          let value = '';
          let from = pos + 1;
          const cellLine = line;
          for (;;) {
            const close = text.indexOf('"', from);
            if (close === -1) {
              if (!final) return recordStart;
              value += text.slice(from);
              // The file's last line break ends its last line; it does not start another.
              const last = text.charCodeAt(n - 1);
              line += lineBreaks(text, from, n) - (last === LF || last === CR ? 1 : 0);
              fields.push(value);
              info.unclosed = true;
              pos = n;
              this.emit(fields, startLine, line);
              this.line = line;
              return n;
            }
            value += text.slice(from, close);
            line += lineBreaks(text, from, close);
            if (close + 1 === n && !final) return recordStart;
            if (text.charCodeAt(close + 1) === QUOTE) {
              value += '"';
              from = close + 2;
              continue;
            }
            pos = close + 1;
            break;
          }
          if (line > cellLine && info.multiLine === -1) info.multiLine = fields.length;
          c = pos < n ? text.charCodeAt(pos) : -1;
          if (c !== delimiter && c !== LF && c !== CR && c !== -1) {
            // Text after the closing quote: part of the cell, up to the delimiter or line end.
            if (info.textAfterQuote === -1) info.textAfterQuote = fields.length;
            const rest = pos;
            while (pos < n && (c = text.charCodeAt(pos)) !== delimiter && c !== LF && c !== CR) {
              if (c === QUOTE && info.strayQuote === -1) info.strayQuote = fields.length;
              pos++;
            }
            if (pos === n && !final) return recordStart;
            value += text.slice(rest, pos);
            c = pos < n ? c : -1;
          }
          fields.push(value);
        } else {
          const from = pos;
          while (c !== delimiter && c !== LF && c !== CR && c !== -1) c = ++pos < n ? text.charCodeAt(pos) : -1;
          if (c === -1 && !final) return recordStart;
          fields.push(text.slice(from, pos));
        }
        // c is the character after the cell: a delimiter, a line break, or the end (-1).
        if (c === delimiter) {
          pos++;
          continue;
        }
        if (c === CR) {
          if (pos + 1 === n && !final) return recordStart;
          pos += text.charCodeAt(pos + 1) === LF ? 2 : 1;
        } else if (c === LF) {
          pos++;
        }
        this.emit(fields, startLine, line);
        if (c !== -1) line++;
        this.line = line;
        continue records;
      }
    }
    return n;
  }

  private emit(fields: string[], startLine: number, endLine: number): void {
    this.info.startLine = startLine;
    this.info.endLine = endLine;
    this.onRecord(fields, this.info);
  }
}
