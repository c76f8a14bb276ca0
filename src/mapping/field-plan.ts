/**
 * What compiling a mapping produces for each managed field (a FieldPlan) and the small helpers
 * both compiling (defaults) and mapping rows use: cell tests and the coercion into a field's
 * write shape.
 */
import type { DataKind } from '../client/schemas.js';
import type { CellValue } from '../sources/types.js';
import { coerceDate, coerceNumber, coerceOption, type Coerced, type OptionIndex } from './coerce.js';
import type { CustomFieldSpec, TransformName } from './schema.js';
import { toNfc } from './transforms.js';
import type { FieldValue } from './types.js';

export type ValueKind = 'name' | 'list' | DataKind;

export interface FieldPlan {
  key: string;
  label: string;
  columns: string[];
  columnLabel: string;
  kind: ValueKind;
  join: string;
  split: string[] | undefined;
  transforms: TransformName[];
  dedupe: boolean;
  fallback: FieldValue;
  required: boolean;
  options: OptionIndex | undefined;
  decimal: '.' | ',';
  dateFormats: NonNullable<CustomFieldSpec['date_formats']>;
  /** What an invalid value does: reject the row, or leave the field out of the record (a list: the item). */
  onInvalid: 'reject_row' | 'skip_value';
  /** Values are text people read (name, lists of text, str fields): checked for formula-like values. */
  text: boolean;
}

export const LIST_KINDS: ReadonlySet<ValueKind> = new Set(['list', 'multi_option']);

/**
 * Text with nothing visible: white space and characters Unicode says are ignored when shown (zero-width
 * space, word joiner, BOM, directional marks, the Hangul fillers). A name of only these is no name.
 */
const INVISIBLE_ONLY = /^[\p{White_Space}\p{Default_Ignorable_Code_Point}]*$/u;

export function isBlank(text: string): boolean {
  const trimmed = text.trim();
  // An invisible character is never ASCII: most cells are decided by their first character.
  return trimmed === '' || (trimmed.charCodeAt(0) > 0x7f && INVISIBLE_ONLY.test(trimmed));
}

export function isEmptyCell(cell: CellValue | undefined): cell is null | undefined {
  return cell === null || cell === undefined || (typeof cell === 'string' && isBlank(cell));
}

export function cellText(cell: CellValue): string {
  return typeof cell === 'string' ? cell : String(cell);
}

/** A cell's text, in NFC unless the mapping keeps cells as written (`unicode: as_written`). */
export function textOfCell(cell: CellValue, nfc: boolean): string {
  return typeof cell === 'string' ? (nfc ? toNfc(cell) : cell) : String(cell);
}

export function sourceColumns(spec: { column?: string | undefined; columns?: string[] | undefined }): string[] {
  return spec.column !== undefined ? [spec.column] : (spec.columns ?? []);
}

/** Turns one (transformed) value into the field's write shape. */
export function coerceValue(plan: FieldPlan, value: CellValue): Coerced<string | number> {
  switch (plan.kind) {
    case 'number':
      return coerceNumber(value, plan.decimal);
    case 'date':
      return coerceDate(value, plan.dateFormats);
    case 'single_option':
    case 'multi_option':
      return coerceOption(cellText(value as Exclude<CellValue, null>), plan.options!);
    default:
      return { ok: true, value: cellText(value as Exclude<CellValue, null>) };
  }
}
