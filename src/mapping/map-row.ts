/**
 * Mapping one row with a compiled mapping: skip_rows filters, then each field's cells through its
 * transforms and coercion, then the client_id. Pure and allocation-light: this runs per row.
 */
import type { CellValue, SourceRow } from '../sources/types.js';
import type { ClientIdPlan } from './client-id.js';
import { truncate } from '../sources/headers.js';
import { cellText, coerceValue, isBlank, isEmptyCell, LIST_KINDS, textOfCell, type FieldPlan } from './field-plan.js';
import { applyTransform, dedupe, looksLikeFormula, splitValue, trimValue } from './transforms.js';
import type { DesiredRecord, FieldValue, RowProblem } from './types.js';

export type MapRowResult =
  /** `warnings`: values skipped (`on_invalid: skip_value`), names left as written, formula-like values. */
  | { kind: 'record'; record: DesiredRecord; warnings?: RowProblem[] }
  /** `clientId` is set when the row's id could still be read: the record is in the roster, just not valid. */
  | { kind: 'rejected'; problems: RowProblem[]; clientId?: string; name?: string }
  /**
   * `reason` names the `skip_rows` entry that matched. `identify` maps the row's client_id and name
   * only when asked: the report lists a capped number of filtered rows, and mapping every skipped
   * row of a large roster just to name it would cost as much as mapping the roster.
   */
  | { kind: 'filtered'; reason: string; identify: () => { clientId?: string; name?: string } };

/** Everything compiling a mapping leaves for the rows. */
export interface RowRules {
  plans: readonly FieldPlan[];
  clientId: ClientIdPlan;
  /** Text cells in Unicode NFC (the mapping's `unicode: nfc`). */
  nfc: boolean;
  formulaLike: 'warn' | 'reject';
  /** Addresses with mixed-script domain labels or full-width characters (the mapping's `email_lookalikes`). */
  emailLookalikes: 'warn' | 'reject';
  filters: readonly { matches: (values: Record<string, CellValue>) => boolean; reason: string }[];
}

export function mapRowWith(rules: RowRules, row: SourceRow): MapRowResult {
  for (const filter of rules.filters) {
    if (!filter.matches(row.values)) continue;
    return { kind: 'filtered', reason: filter.reason, identify: () => identityOf(mapFields(rules, row)) };
  }
  // No closure or intermediate object per row: this is the per-row path of every plan.
  const notes: RowNotes = { problems: [], warnings: undefined, skipped: undefined };
  const fields = fieldsOf(rules, row, notes);
  const id = rules.clientId.compute(row, fields, notes.problems);
  if (notes.problems.length || id === null) {
    // The row's other remarks go with it: it is fixed once, in rejected.csv.
    return { kind: 'rejected', problems: notes.warnings ? [...notes.problems, ...notes.warnings] : notes.problems, ...identityOf({ fields, id }) };
  }
  const record: DesiredRecord = { clientId: id, fields, provenance: row.provenance };
  if (notes.skipped) record.skipped = notes.skipped;
  return notes.warnings ? { kind: 'record', record, warnings: notes.warnings } : { kind: 'record', record };
}

/** What mapping one row found besides its values; the lists are made only when needed. */
interface RowNotes {
  problems: RowProblem[];
  warnings: RowProblem[] | undefined;
  /** Fields left out of the record: every value was invalid under `on_invalid: skip_value`. */
  skipped: string[] | undefined;
}

/** How a warning says a value was left out under `on_invalid: skip_value` (the console counts them). */
export const SKIPPED_VALUE_WORDS = 'value skipped (on_invalid: skip_value)';

/** Marks a field whose every value was skipped: it is left out of the record, so the service keeps its own. */
const SKIPPED = Symbol('skipped');

function fieldsOf(rules: RowRules, row: SourceRow, notes: RowNotes): Record<string, FieldValue> {
  const fields: Record<string, FieldValue> = {};
  for (const plan of rules.plans) {
    const value = mapField(rules, plan, row, notes);
    if (value === SKIPPED) (notes.skipped ??= []).push(plan.key);
    else fields[plan.key] = value;
  }
  return fields;
}

/** A filtered row's fields and client_id, mapped only when the report names it. */
function mapFields(rules: RowRules, row: SourceRow): { fields: Record<string, FieldValue>; id: string | null } {
  const notes: RowNotes = { problems: [], warnings: undefined, skipped: undefined };
  const fields = fieldsOf(rules, row, notes);
  return { fields, id: rules.clientId.compute(row, fields, notes.problems) };
}

function warn(notes: RowNotes, warning: RowProblem): void {
  (notes.warnings ??= []).push(warning);
}

function problemFor(plan: FieldPlan, row: SourceRow, value: string, f: { code: string; message: string; hint: string }): RowProblem {
  return {
    provenance: row.provenance,
    column: plan.columnLabel,
    value: truncate(value),
    code: f.code,
    message: `${plan.label}: ${f.message}`,
    hint: f.hint,
  };
}

const FORMULA_LIKE = {
  code: 'formula_like',
  message: 'starts like a spreadsheet formula',
  hint: 'A spreadsheet would run it when the group is exported and opened; correct the cell if it is not meant to start with =, +, -, @.',
};
/** Said only where it is true: with `formula_like: reject` the value is refused already. */
const FORMULA_LIKE_WARNED_HINT = `${FORMULA_LIKE.hint.slice(0, -1)} (set \`formula_like: reject\` in the mapping to refuse such values).`;

/** A formula-like text value: rejected, or synced as written (never transformed) with a warning. */
function formulaLike(rules: RowRules, plan: FieldPlan, value: string, row: SourceRow, notes: RowNotes, problems: RowProblem[]): string | null {
  if (rules.formulaLike === 'reject') {
    problems.push(problemFor(plan, row, value, FORMULA_LIKE));
    return null;
  }
  warn(notes, problemFor(plan, row, value, { ...FORMULA_LIKE, message: `${FORMULA_LIKE.message}; synced as written`, hint: FORMULA_LIKE_WARNED_HINT }));
  return value;
}

function runTransforms(rules: RowRules, plan: FieldPlan, value: string, row: SourceRow, notes: RowNotes, problems: RowProblem[]): string | null {
  // A formula is not reordered or recased: "=HYPERLINK(…)" split at its comma is neither a name nor
  // the formula. It is still checked: "=1+1" is no email address, whatever it looks like.
  if (plan.text && plan.transforms.length > 0 && looksLikeFormula(trimValue(value))) {
    for (const t of plan.transforms.filter((name) => name === 'email' || name === 'orcid')) {
      const checked = applyTransform(t, trimValue(value));
      if (!checked.ok) {
        problems.push(problemFor(plan, row, value, checked));
        return null;
      }
    }
    return formulaLike(rules, plan, value, row, notes, problems);
  }
  let current = value;
  for (const t of plan.transforms) {
    const result = applyTransform(t, current);
    if (!result.ok) {
      problems.push(problemFor(plan, row, value, result));
      return null;
    }
    if (result.warning?.code === 'email_lookalike' && rules.emailLookalikes === 'reject') {
      problems.push(problemFor(plan, row, value, { ...result.warning, code: 'invalid_email' }));
      return null;
    }
    if (result.warning) warn(notes, problemFor(plan, row, value, result.warning));
    current = result.value;
  }
  if (plan.text && looksLikeFormula(current)) return formulaLike(rules, plan, current, row, notes, problems);
  return current;
}

/**
 * One field of one row. Problems with its values reject the row, or under `on_invalid:
 * skip_value` become warnings: a list keeps its valid items, a field with none left is SKIPPED.
 */
function mapField(rules: RowRules, plan: FieldPlan, row: SourceRow, notes: RowNotes): FieldValue | typeof SKIPPED {
  const cells: CellValue[] = [];
  for (const c of plan.columns) {
    const cell = row.values[c];
    if (!isEmptyCell(cell)) cells.push(cell);
  }
  const problems = plan.onInvalid === 'skip_value' ? [] : notes.problems;
  const before = problems.length;
  let result: FieldValue = null;

  if (LIST_KINDS.has(plan.kind)) {
    const items: string[] = [];
    for (const cell of cells) {
      const text = textOfCell(cell, rules.nfc);
      const pieces = plan.split ? splitValue(text, plan.split) : [text];
      for (const piece of pieces) {
        const transformed = runTransforms(rules, plan, piece, row, notes, problems);
        if (transformed === null || isBlank(transformed)) continue;
        if (plan.kind === 'multi_option') {
          const option = coerceValue(plan, transformed);
          if (option.ok) items.push(String(option.value));
          else problems.push(problemFor(plan, row, piece, option));
        } else items.push(transformed);
      }
    }
    const values = plan.dedupe || plan.kind === 'multi_option' ? dedupe(items) : items;
    // multi_option values are sets of option ids (spec, value shapes): one canonical order, so a
    // reordered cell is no change (plan/canonical.ts sorts the service's answers the same way).
    if (plan.kind === 'multi_option') values.sort();
    result = values.length ? values : null;
  } else if (cells.length) {
    const only = cells.length === 1 ? cells[0]! : undefined;
    // A typed cell (number from XLSX) reaches coercion untouched: text transforms mean nothing to
    // it, and turning 1.234 into "1.234" would let a decimal-comma field read it as 1234.
    const typedKind = plan.kind === 'number' || plan.kind === 'date';
    const raw: CellValue =
      only !== undefined && typeof only !== 'string' && (plan.transforms.length === 0 || typedKind)
        ? only
        : cells.map((cell) => textOfCell(cell, rules.nfc)).join(plan.join);
    const transformed = typeof raw === 'string' ? runTransforms(rules, plan, raw, row, notes, problems) : raw;
    if (transformed !== null && !(typeof transformed === 'string' && isBlank(transformed))) {
      const coerced = coerceValue(plan, transformed);
      if (coerced.ok) result = coerced.value;
      else problems.push(problemFor(plan, row, cellText(raw!), coerced));
    }
  }

  if (problems.length > before) {
    if (problems === notes.problems) return null;
    const outcome = result === null ? `the service keeps its ${plan.label} as it is` : `${plan.label} is synced with the valid values only`;
    for (const problem of problems) warn(notes, { ...problem, message: `${problem.message}; ${SKIPPED_VALUE_WORDS}: ${outcome}` });
    // A list keeps its valid items; a field with no valid value left is not written at all.
    if (result === null) return SKIPPED;
  }
  if (result === null && plan.fallback !== null) result = plan.fallback;
  if (result === null && plan.required) {
    notes.problems.push({
      provenance: row.provenance,
      column: plan.columnLabel,
      code: 'missing_required',
      message: `${plan.label} is required but the cell is empty`,
      hint: `Fill in ${plan.columnLabel}${plan.key === 'name' ? '; the service needs a name for every record' : ''}.`,
    });
  }
  return result;
}

/** The client_id and name of a row as far as they could be read, for the report. */
function identityOf(mapped: { fields: Record<string, FieldValue>; id: string | null }): { clientId?: string; name?: string } {
  const name = mapped.fields.name;
  return { ...(mapped.id ? { clientId: mapped.id } : {}), ...(typeof name === 'string' && name !== '' ? { name } : {}) };
}
