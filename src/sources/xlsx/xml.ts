/**
 * Streaming XML for workbook parts (saxes). Element and attribute names are given without their
 * namespace prefix, so `x:row` (written by some .NET tools) reads like `row`. Entities are decoded
 * once, by the parser, and never again.
 */
import { SaxesParser } from 'saxes';
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

export function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

/** The attribute whose local name is `name` (e.g. `r:id` for `id`), whatever its prefix. */
export function attribute(attributes: Record<string, string>, name: string, prefixed = false): string | undefined {
  if (!prefixed) {
    const plain = attributes[name];
    if (plain !== undefined) return plain;
  }
  for (const key in attributes) {
    const colon = key.indexOf(':');
    if (colon !== -1 && key.slice(colon + 1) === name && key.slice(0, colon) !== 'xmlns') return attributes[key];
  }
  return undefined;
}

export function xmlStream(file: string, part: string, handlers: XmlHandlers): XmlStream {
  const parser = new SaxesParser({ position: true });
  parser.on('error', (error) => {
    throw new SourceError(file, `${file} is damaged: its part ${part} is not well-formed XML (${error.message}).`, {
      hint: 'Open the workbook in Excel (which may repair it) and save it again.',
      cause: error,
    });
  });
  parser.on('opentag', (tag) => handlers.open(localName(tag.name), tag.attributes as Record<string, string>));
  parser.on('closetag', (tag) => handlers.close(localName(tag.name)));
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
