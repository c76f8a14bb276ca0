/**
 * Text of string items, as Excel shows it: shared strings (`<si>`) and inline strings (`<is>`).
 * The text is every `<t>` of the item in order (plain text before rich-text runs included), except
 * the phonetic guides (`<rPh>`, the reading Japanese Excel stores beside 山田 as ヤマダ), with
 * Excel's `_xHHHH_` escapes decoded.
 */
import { parsePart, type XmlHandlers } from './xml.js';
import type { ZipPackage } from './zip-package.js';

const ESCAPE = /_x([0-9A-Fa-f]{4})_/g;

/**
 * Decodes `_xHHHH_` (ECMA-376 Part 1, 22.9.2.19 ST_Xstring): `_x000D_` is a carriage return and
 * `_x005F_` an underscore, so `_x005F_x000D_` stays the literal text `_x000D_`. One left-to-right
 * pass does exactly that.
 */
export function decodeExcelEscapes(text: string): string {
  if (text.indexOf('_x') === -1) return text;
  return text.replace(ESCAPE, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/**
 * Collects the text of one string item (`<si>` or `<is>`) from XML events. Shared by the shared
 * strings part and inline strings in sheets.
 */
export class StringItemText {
  private text = '';
  private inText = false;
  private phoneticDepth = 0;

  reset(): void {
    this.text = '';
    this.inText = false;
    this.phoneticDepth = 0;
  }

  open(name: string): void {
    if (name === 't') this.inText = true;
    else if (name === 'rPh') this.phoneticDepth++;
  }

  close(name: string): void {
    if (name === 't') this.inText = false;
    else if (name === 'rPh') this.phoneticDepth--;
  }

  onText(text: string): void {
    if (this.inText && this.phoneticDepth === 0) this.text += text;
  }

  value(): string {
    return decodeExcelEscapes(this.text);
  }
}

export async function readSharedStrings(zip: ZipPackage, part: string): Promise<string[]> {
  const strings: string[] = [];
  const item = new StringItemText();
  let inItem = false;
  const handlers: XmlHandlers = {
    open(name) {
      if (name === 'si') {
        inItem = true;
        item.reset();
      } else if (inItem) {
        item.open(name);
      }
    },
    close(name) {
      if (name === 'si') {
        inItem = false;
        strings.push(item.value());
      } else if (inItem) {
        item.close(name);
      }
    },
    text(text) {
      if (inItem) item.onText(text);
    },
  };
  await parsePart(zip.file, part, zip.text(part, true), handlers);
  return strings;
}
