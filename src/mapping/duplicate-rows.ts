/**
 * The cells of duplicate rows (same client_id): kept by row reference as they are met, the first
 * rows' read back by reopening the source, and the rows `first` / `last` set aside with what they
 * carried that the kept row lacks (the report's discarded rows).
 */
import type { CellValue, OpenedSource, Provenance } from '../sources/types.js';
import type { DiscardedRow } from './types.js';

/** The rows `first` / `last` set aside, each with the cells it carried that the kept row does not. */
export function discardedRows(
  duplicateRows: ReadonlyMap<string, number[]>,
  values: ReadonlyMap<string, Record<string, CellValue>>,
  policy: 'first' | 'last',
  fileOf: (clientId: string) => Omit<Provenance, 'row'>,
  cap: number,
): DiscardedRow[] {
  const out: DiscardedRow[] = [];
  for (const [clientId, rows] of duplicateRows) {
    const file = fileOf(clientId);
    const keptRow = policy === 'first' ? rows[0]! : rows[rows.length - 1]!;
    const kept = values.get(rowRef({ ...file, row: keptRow }));
    for (const row of rows) {
      if (row === keptRow || out.length >= cap) continue;
      const provenance: Provenance = { ...file, row };
      const cells = Object.entries(values.get(rowRef(provenance)) ?? {}).filter(([column, value]) => value !== null && value !== '' && (!kept || kept[column] !== value));
      out.push({ provenance, clientId, keptRow, notSynced: Object.fromEntries(cells) });
    }
  }
  return out;
}

/** One row of one file, as a key. */
export function rowRef(provenance: Provenance): string {
  return `${provenance.file}\u0000${provenance.sheet ?? ''}\u0000${provenance.row}`;
}

export function withoutRow(provenance: Provenance): Omit<Provenance, 'row'> {
  return { file: provenance.file, ...(provenance.sheet !== undefined ? { sheet: provenance.sheet } : {}) };
}

export async function collectValues(
  source: OpenedSource,
  rows: Set<string>,
  into: Map<string, Record<string, CellValue>>,
  signal: AbortSignal | undefined,
): Promise<void> {
  for await (const item of source.items) {
    if (signal?.aborted || rows.size === 0) break;
    if (item.kind !== 'row') continue;
    const ref = rowRef(item.row.provenance);
    if (rows.delete(ref)) into.set(ref, item.row.values);
  }
}
