/**
 * Streaming a whole roster through a compiled mapping, with bounded memory.
 *
 * The source is read ONCE. Accepted records stream out through `onRecord` as they are mapped;
 * nothing keeps them. What is kept is small: the first row number of each client_id (duplicate
 * detection; see FirstRows), the rejected rows (capped), and the row numbers of duplicated ids.
 *
 * Duplicates and streaming: a record leaves through `onRecord` before a later row with the same
 * client_id can be seen. So the consumer must finish the job at the end:
 * - policy `reject`: drop every record whose clientId is in `summary.duplicateClientIds`
 *   (the later rows of a duplicated id are never passed to `onRecord`; only the first is);
 * - policy `last`: `onRecord` may be called again with a clientId already seen; the later
 *   record replaces the earlier one;
 * - policy `first`: later rows are never passed to `onRecord`; nothing to do.
 *
 * Original cells of duplicate rows (needed for rejected.csv): the later rows' cells are kept
 * when they are met (duplicates are rare, and the count is capped). The first row's cells were
 * already gone by then, so when `reopen` is given and duplicates were found, the source is read
 * a second time, only to collect those rows' cells. Without `reopen` they are left empty.
 *
 * The read itself, row by row, is RosterPass (roster-pass.ts); this module settles the duplicates
 * once every file has been read, and makes the summary.
 */
import type { OpenedSource, Provenance } from '../sources/types.js';
import { truncate } from '../sources/headers.js';
import type { CompiledMapping } from './compile.js';
import type { DuplicatePair, DuplicatePeopleFound } from './duplicate-people.js';
import type { DesiredRecord, DiscardedRow, FilteredRow, RejectedRow, RowProblem } from './types.js';
import type { KnownRecords, RosterIds } from './first-rows.js';
import { collectValues, discardedRows, rowRef } from './duplicate-rows.js';
import { FILTERED_ROWS_LISTED, RosterPass, type FastPath, type RosterCounts } from './roster-pass.js';

export type { FastPath, KnownRecords, RosterCounts, RosterIds };
export { FILTERED_ROWS_LISTED };

export interface RosterSummary {
  /** Rows recognised by the key the inventory stored (the plan's fast path) and not mapped again. */
  knownRows: number;
  counts: RosterCounts;
  /** Rejected rows in row order, at most `maxStoredRejected` of them. */
  rejected: RejectedRow[];
  /** Rejected rows beyond the cap (counted, not stored). */
  rejectedNotStored: number;
  /**
   * client_ids carried by more than one row. Under policy `reject` the consumer MUST drop the
   * records it received for these ids (see the module comment).
   */
  duplicateClientIds: Set<string>;
  /**
   * Notes on rows ignored by the `first` / `last` policies, and on values of synced rows: skipped
   * under `on_invalid: skip_value`, names left as written, formula-like values (capped like `rejected`).
   */
  warnings: RowProblem[];
  /** Rows synced with warnings about their values, with their cells (for rejected.csv), capped like `rejected`. */
  warnedRows?: RejectedRow[];
  /** Rows with value warnings beyond the cap (counted, not stored). */
  warnedRowsNotStored?: number;
  /**
   * client_ids of rows rejected for their values: the person is still in the roster, so the
   * consumer must neither write nor delete these records.
   */
  rejectedClientIds: Set<string>;
  /** Rejected rows whose client_id could not be read (unreadable lines, missing or invalid ids). */
  unidentifiedRejected: number;
  /**
   * Every client_id a valid row carried (duplicated ones included), with its first row: the
   * roster's ids, which the planner compares with the inventory's.
   */
  firstRowById: RosterIds;
  /** Rows `skip_rows` left out, with the entry that matched, at most FILTERED_ROWS_LISTED of them. */
  filteredRows?: FilteredRow[];
  /** Rows the `first` / `last` policies set aside, with what they carried (capped like `rejected`). */
  discarded?: DiscardedRow[];
  /** Filtered rows beyond that cap (counted, not listed). */
  filteredRowsNotStored?: number;
  /** What the files layered over the source did (only when there are overlays). */
  layers?: LayersSummary;
  /** Rows of different client_ids that are probably one person (set by the caller that looks). */
  duplicatePeople?: DuplicatePair[];
  /** How many pairs were found by tier, and how many `duplicatePeople` leaves out. */
  duplicatePeopleFound?: DuplicatePeopleFound;
}

/** The effect of `source.overlays`: rows replaced, rows added. */
export interface LayersSummary {
  /** The overlay files, in the pipeline's order. */
  files: string[];
  /** Rows of earlier files that a later file's row of the same client_id replaced. */
  replaced: number;
  /** The first overlay row of each client_id no earlier file has: new rows (at most `maxStoredRejected`). */
  added: Array<{ clientId: string; provenance: Provenance }>;
  /** New rows beyond those listed. */
  addedNotStored: number;
}

export interface MapRosterOptions {
  /**
   * Called for each accepted record, in row order. May return a promise, which is awaited.
   * `replaces`: an earlier row of its client_id was passed on, and this one wins (`duplicate_client_ids: last`).
   */
  onRecord?: (record: DesiredRecord, replaces?: boolean) => void | Promise<void>;
  /** Opens the same source again, for the cells of first occurrences of duplicated ids. */
  reopen?: () => Promise<OpenedSource>;
  /** Cap on stored rejected rows and warnings. @default 10000 */
  maxStoredRejected?: number;
  /** Stops reading between rows when aborted (the summary covers the rows read so far). */
  signal?: AbortSignal;
  /** Skips mapping the rows the inventory knows unchanged (the plan's fast path). */
  fastPath?: FastPath;
  /**
   * Files layered over the source, in order, each as a function that opens it (again, when the
   * cells of its duplicate rows are collected). A row of a later file replaces every row of its
   * client_id in the earlier files and the source. They are read first, last file first, so each
   * row is mapped once; the fast path applies to the source's own rows only.
   */
  overlays?: ReadonlyArray<() => Promise<OpenedSource>>;
}

export async function mapRoster(
  source: OpenedSource,
  compiled: CompiledMapping,
  options: MapRosterOptions = {},
): Promise<RosterSummary> {
  compiled.checkHeaders(source.headers, source.file);
  const cap = options.maxStoredRejected ?? 10_000;
  const overlays = options.overlays ?? [];
  const pass = new RosterPass(source, compiled, { cap, onRecord: options.onRecord, signal: options.signal, fastPath: options.fastPath });
  await pass.readOverlays(overlays);
  await pass.readSource();

  // The records are gone (streamed out): what is left is to settle the duplicates by what was kept.
  const duplicateClientIds = new Set(pass.duplicateRows.keys());
  pass.counts.valid = pass.firstRows.size;
  const shadowed = shadowedRows(pass, compiled.duplicatePolicy);
  const openers = [...(options.reopen ? [options.reopen] : []), ...overlays];
  await collectDuplicateCells(pass, { shadowed, policy: compiled.duplicatePolicy, cap }, { openers, signal: options.signal });
  rejectShadowedRows(pass, shadowed, compiled.clientIdColumn);
  for (const clientId of shadowed.keys()) duplicateClientIds.add(clientId);
  if (compiled.duplicatePolicy === 'reject') rejectDuplicatedIds(pass, compiled.clientIdColumn);
  return summarize(pass, { source: source.file, policy: compiled.duplicatePolicy, cap, duplicateClientIds, sortRejected: shadowed.size > 0 || overlays.length > 0 });
}

/**
 * A valid row whose client_id a rejected row also carries is a duplicate too: the person's record
 * is left as it is until the rows are fixed (the consumer neither writes nor deletes a rejected
 * id), so the valid row must not count as valid. Under `reject`, ids with several valid rows are
 * rejected with the others anyway. Returns the row that stood for each such id, by client_id.
 */
function shadowedRows(pass: RosterPass, policy: CompiledMapping['duplicatePolicy']): Map<string, number> {
  const shadowed = new Map<string, number>();
  for (const clientId of pass.rejectedRowsById.keys()) {
    if (!pass.firstRows.has(clientId) || (policy === 'reject' && pass.duplicateRows.has(clientId))) continue;
    const validRows = pass.duplicateRows.get(clientId);
    shadowed.set(clientId, policy === 'last' && validRows ? validRows[validRows.length - 1]! : pass.firstRows.get(clientId)!);
  }
  return shadowed;
}

/**
 * The cells of the rows the report lists that were gone by the time they turned out to matter:
 * the shadowed rows, and the first row of each duplicated id (gone when the second was met).
 * Read again from the files (`openers`, when given), only as far as needed; without them the
 * cells are left empty.
 */
async function collectDuplicateCells(
  pass: RosterPass,
  wanted: { shadowed: ReadonlyMap<string, number>; policy: CompiledMapping['duplicatePolicy']; cap: number },
  reading: { openers: ReadonlyArray<() => Promise<OpenedSource>>; signal: AbortSignal | undefined },
): Promise<void> {
  const needValues = new Set([...wanted.shadowed].map(([clientId, row]) => rowRef({ ...pass.fileOf(clientId), row })));
  for (const [clientId, rows] of pass.duplicateRows) if (wanted.policy === 'reject' || needValues.size < wanted.cap) needValues.add(rowRef({ ...pass.fileOf(clientId), row: rows[0]! }));
  if (!needValues.size) return;
  for (const reopen of reading.openers) if (needValues.size > 0) await collectValues(await reopen(), needValues, pass.duplicateValues, reading.signal);
}

/** Each shadowed row (see shadowedRows) is rejected, naming the rejected rows of its id. */
function rejectShadowedRows(pass: RosterPass, shadowed: ReadonlyMap<string, number>, clientIdColumn: string): void {
  for (const [clientId, validRow] of shadowed) {
    pass.counts.valid--;
    rejectForSharedId(pass, clientIdColumn, { clientId, row: validRow, others: pass.rejectedRowsById.get(clientId)!, othersRejected: true });
  }
}

/** `duplicate_client_ids: reject`: every row of a duplicated id is rejected, naming the others. */
function rejectDuplicatedIds(pass: RosterPass, clientIdColumn: string): void {
  pass.counts.valid -= pass.duplicateRows.size;
  for (const [clientId, rows] of pass.duplicateRows) {
    for (const row of rows) rejectForSharedId(pass, clientIdColumn, { clientId, row, others: rows.filter((other) => other !== row), othersRejected: false });
  }
}

/**
 * Rejects one row for a client_id that `others` (rows of the same file) carry too, with its cells
 * when they were kept. When the others are rejected rows, the fix is in them, not in this row.
 */
function rejectForSharedId(pass: RosterPass, clientIdColumn: string, shared: { clientId: string; row: number; others: readonly number[]; othersRejected: boolean }): void {
  const { clientId, others } = shared;
  pass.counts.rejected++;
  const provenance: Provenance = { ...pass.fileOf(clientId), row: shared.row };
  const otherRows = `row${others.length > 1 ? 's' : ''} ${others.join(', ')}`;
  pass.keep({
    provenance,
    values: pass.duplicateValues.get(rowRef(provenance)) ?? {},
    problems: [
      {
        provenance,
        column: clientIdColumn,
        value: truncate(clientId),
        code: 'duplicate_client_id',
        message: shared.othersRejected
          ? `client_id "${truncate(clientId, 40)}" is also used by rejected ${otherRows}; this row is not written until that is resolved`
          : `client_id "${truncate(clientId, 40)}" is also used by ${otherRows}`,
        hint: shared.othersRejected
          ? 'Each person must appear once: fix the rejected row (or remove it if it is the same person), or correct the ID.'
          : 'Each person must appear once: merge the rows or correct the ID; or set `duplicate_client_ids: first` or `last` in the mapping.',
      },
    ],
  });
}

/** The summary of the pass, its row lists in the pipeline's order of files, then by row. */
function summarize(
  pass: RosterPass,
  settled: { source: string; policy: CompiledMapping['duplicatePolicy']; cap: number; duplicateClientIds: Set<string>; sortRejected: boolean },
): RosterSummary {
  const { policy, cap } = settled;
  const order = new Map([settled.source, ...pass.overlayFiles].map((file, i) => [file, i]));
  const byFileAndRow = (a: { provenance: Provenance }, b: { provenance: Provenance }) =>
    (order.get(a.provenance.file) ?? 0) - (order.get(b.provenance.file) ?? 0) || a.provenance.row - b.provenance.row;
  // Rows were kept as met (overlays first) and settled rows appended: sorted when either happened.
  if (settled.sortRejected || (policy === 'reject' && pass.duplicateRows.size)) pass.rejected.sort(byFileAndRow);
  const added = [...pass.replacedBy].filter(([clientId]) => !pass.replacing.has(clientId));
  const discarded = policy === 'reject' ? [] : discardedRows(pass.duplicateRows, pass.duplicateValues, policy, (clientId) => pass.fileOf(clientId), cap).sort(byFileAndRow);
  const { counts } = pass;
  return {
    counts,
    knownRows: pass.knownRows,
    rejected: pass.rejected,
    rejectedNotStored: pass.rejectedNotStored,
    duplicateClientIds: settled.duplicateClientIds,
    warnings: pass.warnings,
    rejectedClientIds: new Set(pass.rejectedRowsById.keys()),
    firstRowById: pass.firstRows,
    unidentifiedRejected: pass.unidentifiedRejected,
    filteredRows: pass.filteredRows,
    filteredRowsNotStored: counts.filtered - pass.filteredRows.length,
    warnedRows: pass.warnedRows,
    warnedRowsNotStored: pass.warnedRowsNotStored,
    ...(pass.overlayFiles.length > 0
      ? { layers: { files: pass.overlayFiles, replaced: pass.replaced, added: added.slice(0, cap).map(([clientId, provenance]) => ({ clientId, provenance })), addedNotStored: Math.max(0, added.length - cap) } }
      : {}),
    ...(discarded.length > 0 ? { discarded } : {}),
  };
}
