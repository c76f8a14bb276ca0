/**
 * Streaming XML for workbook parts (saxes, namespace-aware). Elements are matched by namespace
 * and local name: an element of SpreadsheetML (transitional or strict) or of the package
 * relationships reaches the handlers by its local name, whatever its prefix (`x:row`, written by
 * some .NET tools, reads like `row`); any other element, such as Excel's extension
 * `<x15:workbookPr>`, arrives as `{namespace}local` and matches nothing. Entities are decoded
 * once, by the parser, and never again.
 */
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { SourceError } from '../source-error.js';

export interface XmlHandlers {
  open(name: string, attributes: Record<string, string>): void;
  close(name: string): void;
  /** Character data (text and CDATA); whitespace between elements arrives here too. */
  text(text: string): void;
}

export interface XmlStream {
  write(chunk: string): void;
  end(): void;
}

/** Namespaces whose elements are read by local name. '' is an element with no namespace at all. */
const READ_NAMESPACES = new Set([
  'http://schemas.openxmlformats.org/spreadsheetml/2006/main',
  'http://purl.oclc.org/ooxml/spreadsheetml/main',
  'http://schemas.openxmlformats.org/package/2006/relationships',
  '',
]);

/** The officeDocument relationships namespace (`r:id`), transitional and strict. */
const RELATIONSHIP_NAMESPACES = new Set([
  'http://schemas.openxmlformats.org/officeDocument/2006/relationships',
  'http://purl.oclc.org/ooxml/officeDocument/relationships',
]);

const XMLNS = 'http://www.w3.org/2000/xmlns/';

/**
 * Deeper than any writer nests a workbook part (a rich-text run in a cell is 6 levels down;
 * extension lists add a few): a part nested deeper is refused before the parser's stack grows.
 */
export const MAX_XML_DEPTH = 64;

/** The name a handler sees for an element: its local name in the namespaces read, else `{uri}local`. */
function elementName(tag: SaxesTagNS): string {
  return READ_NAMESPACES.has(tag.uri) ? tag.local : `{${tag.uri}}${tag.local}`;
}

/**
 * Attributes by name: unqualified ones by their name, relationship ones as `r:name` (whatever
 * their prefix), others as `{uri}local`. Namespace declarations are left out.
 */
function attributesOf(tag: SaxesTagNS): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key in tag.attributes) {
    const attribute = tag.attributes[key]!;
    if (attribute.uri === '') out[attribute.local] = attribute.value;
    else if (RELATIONSHIP_NAMESPACES.has(attribute.uri)) out[`r:${attribute.local}`] = attribute.value;
    else if (attribute.uri !== XMLNS) out[`{${attribute.uri}}${attribute.local}`] = attribute.value;
  }
  return out;
}

/** An unqualified attribute, or (`relationship`) the officeDocument relationships one (`r:id`). */
export function attribute(attributes: Record<string, string>, name: string, relationship = false): string | undefined {
  return relationship ? attributes[`r:${name}`] : attributes[name];
}

export function xmlStream(file: string, part: string, handlers: XmlHandlers): XmlStream {
  const parser = new SaxesParser({ position: true, xmlns: true });
  let depth = 0;
  parser.on('error', (error) => {
    throw new SourceError(file, `${file} is damaged: its part ${part} is not well-formed XML (${error.message}).`, {
      hint: 'Open the workbook in Excel (which may repair it) and save it again.',
      cause: error,
    });
  });
  parser.on('opentag', (tag) => {
    if (++depth > MAX_XML_DEPTH) {
      throw new SourceError(file, `${file} is damaged or hostile: its part ${part} nests elements more than ${MAX_XML_DEPTH} deep (line ${parser.line}), deeper than any spreadsheet program writes.`, {
        hint: 'Open the workbook in Excel and save it again, or export the roster again from the program that made it.',
      });
    }
    handlers.open(elementName(tag), attributesOf(tag));
  });
  parser.on('closetag', (tag) => {
    depth--;
    handlers.close(elementName(tag));
  });
  parser.on('text', (text) => handlers.text(text));
  parser.on('cdata', (text) => handlers.text(text));
  return {
    write: (chunk) => void parser.write(chunk),
    end: () => void parser.close(),
  };
}

/** Parses a whole part given as text chunks. */
export async function parsePart(file: string, part: string, chunks: AsyncIterable<string>, handlers: XmlHandlers): Promise<void> {
  const stream = xmlStream(file, part, handlers);
  for await (const chunk of chunks) stream.write(chunk);
  stream.end();
}
