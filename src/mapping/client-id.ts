/**
 * The client_id rule of a mapping: compiled once (which columns, or derived from the ORCID or the
 * email), then computed per row.
 */
import { clientIdPathProblem } from '../client/path-rules.js';
import type { ConfigProblem } from '../errors/config-error.js';
import type { SourceRow } from '../sources/types.js';
import { isEmptyCell, sourceColumns, textOfCell } from './field-plan.js';
import type { ClientIdSpec, MappingFile } from './schema.js';
import { truncate } from '../sources/headers.js';
import { applyTransform, normaliseOrcid } from './transforms.js';
import type { FieldValue, RowProblem } from './types.js';

export interface ClientIdPlan {
  columns: string[];
  columnLabel: string;
  compute(row: SourceRow, fields: Record<string, FieldValue>, problems: RowProblem[]): string | null;
}

export function planClientId(spec: ClientIdSpec, mapping: MappingFile, problems: ConfigProblem[]): ClientIdPlan {
  const nfc = mapping.unicode === 'nfc';
  const finish = (value: string): string => {
    let v = value;
    for (const t of spec.transforms) {
      const r = applyTransform(t, v);
      if (r.ok) v = r.value;
    }
    return v === '' ? '' : `${spec.prefix}${v}`;
  };
  // An id no URL path can carry is a row problem now rather than a failed write every night; the
  // row keeps its id, so the record is neither written nor deleted until the row is fixed.
  const pathSafe = (row: SourceRow, column: string, id: string, rowProblems: RowProblem[]): string => {
    const problem = clientIdPathProblem(id);
    if (problem !== undefined) {
      rowProblems.push({
        provenance: row.provenance,
        column,
        value: truncate(id),
        code: 'client_id_not_in_url',
        message: `client_id ${problem}`,
        hint: 'Use IDs of letters, digits and simple punctuation (no "/", no control characters), or derive the client_id from another column.',
      });
    }
    return id;
  };
  const missing = (row: SourceRow, column: string, what: string): RowProblem => ({
    provenance: row.provenance,
    column,
    code: 'missing_client_id',
    message: `no client_id: ${what}`,
    hint: 'Every row needs a stable person ID; fill it in or skip the row with `skip_rows`.',
  });

  if (spec.from !== undefined) {
    const field = spec.from === 'orcid' ? 'orcids' : 'emails';
    if (!mapping.fields[field]) {
      problems.push({ path: 'client_id.from', message: `\`from: ${spec.from}\` needs fields.${field} to be mapped` });
    }
    const columnLabel = mapping.fields[field] ? sourceColumns(mapping.fields[field]).join(' + ') : field;
    return {
      columns: [],
      columnLabel,
      compute(row, fields, rowProblems) {
        // The field's own problem already explains the row; a second "no client_id" would be noise.
        if (rowProblems.length) return null;
        const list = fields[field];
        const first = Array.isArray(list) ? list[0] : undefined;
        let value: string | undefined;
        if (first !== undefined && spec.from === 'orcid') {
          const n = normaliseOrcid(first);
          value = n.ok ? n.value : undefined;
        } else if (first !== undefined) value = first.trim().toLowerCase();
        const id = value === undefined ? '' : finish(value);
        if (id === '') {
          rowProblems.push(missing(row, columnLabel, `the row has no ${spec.from === 'orcid' ? 'valid ORCID' : 'email'} to derive it from`));
          return null;
        }
        return pathSafe(row, columnLabel, id, rowProblems);
      },
    };
  }

  const cols = sourceColumns(spec);
  const join = spec.join ?? '-';
  const columnLabel = cols.join(' + ');
  return {
    columns: cols,
    columnLabel,
    compute(row, _fields, rowProblems) {
      const parts: string[] = [];
      for (const c of cols) {
        const cell = row.values[c];
        if (!isEmptyCell(cell)) parts.push(textOfCell(cell, nfc));
      }
      // A combination of columns needs every part, or two people could share an id.
      const id = parts.length === cols.length ? finish(parts.join(join)) : '';
      if (id === '') {
        rowProblems.push(missing(row, columnLabel, cols.length > 1 ? 'a column of the id is empty' : 'the cell is empty'));
        return null;
      }
      return pathSafe(row, columnLabel, id, rowProblems);
    },
  };
}
