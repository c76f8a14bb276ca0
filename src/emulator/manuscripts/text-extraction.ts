/**
 * Text extraction from an uploaded `source_file` (docs/service-contract.md, call 6: "PDF or DOCX"), done where it is
 * simple, as the emulator's stand-in for the service's parser:
 * - PDF: content streams, uncompressed or FlateDecode (node:zlib), text shown with `Tj`, `TJ`,
 *   `'` and `"`; one line per text-positioning operator (`Td`, `TD`, `T*`, `Tm`, `ET`).
 * - DOCX: `word/document.xml` read with jszip; one line per `<w:p>`, text from `<w:t>`.
 * Anything else (scanned PDFs, exotic encodings) yields no text, honestly reported in debug_info.
 */
import { constants, inflateSync } from 'node:zlib';

/** Caps an inflated stream, so a zip bomb cannot exhaust the emulator's memory. */
const MAX_INFLATED_BYTES = 16 * 1024 * 1024;
import JSZip from 'jszip';

export type SourceKind = 'pdf' | 'docx' | 'unknown';

/** Detects the file type by magic bytes, not by name (the client checks the same way). */
export function sourceKind(data: Buffer): SourceKind {
  if (data.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  if (data[0] === 0x50 && data[1] === 0x4b && data[2] === 0x03 && data[3] === 0x04) return 'docx';
  return 'unknown';
}

export async function extractText(data: Buffer): Promise<string> {
  switch (sourceKind(data)) {
    case 'pdf':
      return extractPdfText(data);
    case 'docx':
      return extractDocxText(data);
    default:
      return '';
  }
}

export function extractPdfText(data: Buffer): string {
  const raw = data.toString('latin1');
  const lines: string[] = [];
  // Each `stream` keyword (not `endstream`) starts a stream; its dictionary is the text between
  // the enclosing `obj` and the keyword. Linear scanning, so a hostile file cannot backtrack.
  const streamPattern = /(?<!end)stream\r?\n/g;
  for (let match = streamPattern.exec(raw); match; match = streamPattern.exec(raw)) {
    const objStart = raw.lastIndexOf(' obj', match.index);
    const dictionary = raw.slice(Math.max(objStart, match.index - 2000, 0), match.index);
    const start = match.index + match[0].length;
    const end = raw.indexOf('endstream', start);
    if (end < 0) break;
    let bytes = data.subarray(start, end);
    if (/\/FlateDecode/.test(dictionary)) {
      try {
        bytes = inflateSync(bytes, { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: MAX_INFLATED_BYTES });
      } catch {
        continue; // a stream we cannot inflate contributes no text
      }
    } else if (/\/Filter/.test(dictionary)) {
      continue; // other filters (DCT images, LZW…) are not text we can read simply
    }
    lines.push(...textOfContentStream(bytes.toString('latin1')));
    streamPattern.lastIndex = end;
  }
  return lines.join('\n');
}

/** Collects text-showing operators of one content stream into lines. */
function textOfContentStream(content: string): string[] {
  const lines: string[] = [];
  let current = '';
  const flush = () => {
    if (current.trim() !== '') lines.push(current.replace(/\s+/g, ' ').trim());
    current = '';
  };
  const tokenPattern = /\((?:[^()\\]|\\[^]|\((?:[^()\\]|\\[^])*\))*\)|\[(?:[^\]\\(]|\((?:[^()\\]|\\[^])*\))*\]|(?:T[dDm*]|ET|BT|Tj|TJ|'|")(?![A-Za-z])/g;
  let pending: string[] = [];
  for (let match = tokenPattern.exec(content); match; match = tokenPattern.exec(content)) {
    const token = match[0];
    if (token.startsWith('(')) pending = [decodePdfString(token.slice(1, -1))];
    else if (token.startsWith('[')) {
      pending = [];
      const parts = /\((?:[^()\\]|\\[^])*\)|-?\d+(?:\.\d+)?/g;
      for (let part = parts.exec(token); part; part = parts.exec(token)) {
        // A large negative kerning inside TJ is a word gap.
        if (part[0].startsWith('(')) pending.push(decodePdfString(part[0].slice(1, -1)));
        else if (Number(part[0]) < -200) pending.push(' ');
      }
    } else if (token === 'Tj' || token === 'TJ') {
      current += pending.join('');
      pending = [];
    } else if (token === "'" || token === '"') {
      flush();
      current += pending.join('');
      pending = [];
    } else {
      flush();
    }
  }
  flush();
  return lines;
}

function decodePdfString(text: string): string {
  return text.replace(/\\([nrtbf()\\]|[0-7]{1,3}|\r?\n)/g, (_all, escape: string) => {
    switch (escape) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'b':
      case 'f':
        return '';
      case '(':
      case ')':
      case '\\':
        return escape;
      default:
        return /^[0-7]+$/.test(escape) ? String.fromCharCode(parseInt(escape, 8)) : '';
    }
  });
}

export async function extractDocxText(data: Buffer): Promise<string> {
  let xml: string | undefined;
  try {
    const zip = await JSZip.loadAsync(data);
    xml = await zip.file('word/document.xml')?.async('string');
  } catch {
    return '';
  }
  if (!xml) return '';
  const paragraphs: string[] = [];
  for (const paragraph of xml.match(/<w:p[\s>][^]*?<\/w:p>/g) ?? []) {
    const runs = [...paragraph.matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g)].map((m) => decodeXml(m[1] ?? ''));
    const text = runs.join('').trim();
    if (text !== '') paragraphs.push(text);
  }
  return paragraphs.join('\n');
}

function decodeXml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_m, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_m, code: string) => String.fromCodePoint(parseInt(code, 16)))
    .replace(/&amp;/g, '&');
}

/**
 * The lines of the manuscript's References (or Bibliography) section: every non-empty line after
 * a heading line that says so, up to the end of the text. Used for `parsed_references` and the
 * v6 `referenced_articles` flag.
 */
export function referenceLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  const heading = lines.findIndex((line) => /^\s*(?:\d+\.?\s*)?(references|bibliography|literature cited)\s*:?\s*$/i.test(line));
  if (heading < 0) return [];
  return lines
    .slice(heading + 1)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
