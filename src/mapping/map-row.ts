/**
 * Mapping one row with a compiled mapping: skip_rows filters, then each field's cells through its
 * transforms and coercion, then the client_id. Pure and allocation-light: this runs per row.
 */
import type { CellValue, SourceRow } from '../sources/types.js';
import type { ClientIdPlan } from './client-id.js';
import { truncate } from '../sources/headers.js';
import { cellText, coerceValue, isEmptyCell, LIST_KINDS, type FieldPlan } from './field-plan.js';
import { applyTransform, dedupe, splitValue } from './transforms.js';
import type { DesiredRecord, FieldValue, RowProblem } from './types.js';

export type MapRowResult =
  | { kind: 'record'; record: DesiredRecord }
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
  filters: readonly { matches: (values: Record<string, CellValue>) => boolean; reason: string }[];
}

export function mapRowWith(rules: RowRules, row: SourceRow): MapRowResult {
  for (const filter of rules.filters) {
    if (!filter.matches(row.values)) continue;
    return { kind: 'filtered', reason: filter.reason, identify: () => identityOf(mapFields(rules, row)) };
  }
  // No closure or intermediate object per row: this is the per-row path of every plan.
  const rowProblems: RowProblem[] = [];
  const fields = fieldsOf(rules, row, rowProblems);
  const id = rules.clientId.compute(row, fields, rowProblems);
  if (rowProblems.length || id === null) return { kind: 'rejected', problems: rowProblems, ...identityOf({ fields, id }) };
  return { kind: 'record', record: { clientId: id, fields, provenance: row.provenance } };
}

function fieldsOf(rules: RowRules, row: SourceRow, rowProblems: RowProblem[]): Record<string, FieldValue> {
  const fields: Record<string, FieldValue> = {};
  for (const plan of rules.plans) fields[plan.key] = mapField(plan, row, rowProblems);
  return fields;
}

/** A filtered row's fields and client_id, mapped only when the report names it. */
function mapFields(rules: RowRules, row: SourceRow): { fields: Record<string, FieldValue>; id: string | null } {
  const rowProblems: RowProblem[] = [];
  const fields = fieldsOf(rules, row, rowProblems);
  return { fields, id: rules.clientId.compute(row, fields, rowProblems) };
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

function runTransforms(plan: FieldPlan, value: string, row: SourceRow, problems: RowProblem[]): string | null {
  let current = value;
  for (const t of plan.transforms) {
    const result = applyTransform(t, current);
    if (!result.ok) {
      problems.push(problemFor(plan, row, value, result));
      return null;
    }
    current = result.value;
  }
  return current;
}

function mapField(plan: FieldPlan, row: SourceRow, problems: RowProblem[]): FieldValue {
  const cells: CellValue[] = [];
  for (const c of plan.columns) {
    const cell = row.values[c];
    if (!isEmptyCell(cell)) cells.push(cell);
  }
  const before = problems.length;
  let result: FieldValue = null;

  if (LIST_KINDS.has(plan.kind)) {
    const items: string[] = [];
    for (const cell of cells) {
      const text = cellText(cell);
      const pieces = plan.split ? splitValue(text, plan.split) : [text];
      for (const piece of pieces) {
        const transformed = runTransforms(plan, piece, row, problems);
        if (transformed === null || transformed.trim() === '') continue;
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
        : cells.map(cellText).join(plan.join);
    const transformed = typeof raw === 'string' ? runTransforms(plan, raw, row, problems) : raw;
    if (transformed !== null && !(typeof transformed === 'string' && transformed.trim() === '')) {
      const coerced = coerceValue(plan, transformed);
      if (coerced.ok) result = coerced.value;
      else problems.push(problemFor(plan, row, cellText(raw!), coerced));
    }
  }

  if (problems.length > before) return null;
  if (result === null && plan.fallback !== null) result = plan.fallback;
  if (result === null && plan.required) {
    problems.push({
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
