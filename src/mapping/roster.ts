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
 */
import type { CellValue, OpenedSource, Provenance, SourceItem, SourceRow } from '../sources/types.js';
import { truncate } from '../sources/headers.js';
import type { CompiledMapping } from './compile.js';
import type { DuplicatePair, DuplicatePeopleFound } from './duplicate-people.js';
import type { MapRowResult } from './map-row.js';
import type { DesiredRecord, DiscardedRow, FilteredRow, RejectedRow, RowProblem } from './types.js';
import { FirstRows, type KnownRecords, type RosterIds } from './first-rows.js';
import { collectValues, discardedRows, rowRef, withoutRow } from './duplicate-rows.js';

export type { KnownRecords, RosterIds };

export interface RosterCounts {
  /** Rows read from the source, unreadable rows included. */
  rowsRead: number;
  /** Distinct records that survive (after the duplicate policy). */
  valid: number;
  /** Rows rejected: mapping problems, unreadable rows and, under `reject`, duplicated ids. */
  rejected: number;
  /** Rows skipped by `skip_rows`. */
  filtered: number;
  /** Rows set aside by the `first` / `last` duplicate policies. */
  duplicatesIgnored: number;
}

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

/** Filtered rows listed for the report: they are skipped on purpose, a sample is enough to check the filter. */
export const FILTERED_ROWS_LISTED = 1000;

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

/**
 * The plan's fast path, as the roster sees it. A row whose key names a known record is not mapped:
 * it is that record, unchanged. Duplicates are decided by client_id as for mapped rows. Other rows
 * are mapped, and their record carries the row key.
 */
export interface FastPath {
  /** The row's key (src/mapping/row-key.ts); undefined when the row has none. */
  rowKey(row: SourceRow): string | undefined;
  /** The unchanged owned records the inventory knows by row key (src/plan/known-rows.ts). */
  known: KnownRecords;
  /**
   * A known row replaces an earlier row of its client_id (`duplicate_client_ids: last`). A known
   * row met first needs no call: nothing of its client_id was passed on before it.
   */
  onKnown(clientId: string): void;
}

export async function mapRoster(
  source: OpenedSource,
  compiled: CompiledMapping,
  options: MapRosterOptions = {},
): Promise<RosterSummary> {
  compiled.checkHeaders(source.headers, source.file);
  const cap = options.maxStoredRejected ?? 10_000;
  const policy = compiled.duplicatePolicy;

  const firstRows = new FirstRows(options.fastPath?.known);
  /** The fast path of the file being read: the source's own rows only, never an overlay's. */
  let fastPath: FastPath | undefined;
  /**
   * Row numbers of every occurrence of a duplicated id, in order. The rows of one client_id that
   * count are all in one file (`fileOf`): a later file's row replaces them in every earlier file.
   */
  const duplicateRows = new Map<string, number[]>();
  /** Cells of duplicate rows, by `rowRef` (filled for later rows as met, first rows by reopen). */
  const duplicateValues = new Map<string, Record<string, CellValue>>();
  /**
   * client_ids of the files read so far, which are later in the pipeline's order (overlays are
   * read last first, the source last): a row of an earlier file with one of them is replaced.
   */
  const replacedBy = new Map<string, Provenance>();
  /** Those met again in an earlier file: the others are new rows. */
  const replacing = new Set<string>();
  let replaced = 0;
  /** The file of the rows of `clientId` that count (an overlay's, else the source's). */
  const fileOf = (clientId: string): Omit<Provenance, 'row'> => {
    const provenance = replacedBy.get(clientId);
    return provenance ? withoutRow(provenance) : sourceFile;
  };
  let sourceFile: Omit<Provenance, 'row'> = { file: source.file };
  const rejected: RejectedRow[] = [];
  const warnings: RowProblem[] = [];
  const warnedRows: RejectedRow[] = [];
  let warnedRowsNotStored = 0;
  let rejectedNotStored = 0;
  const filteredRows: FilteredRow[] = [];
  const counts: RosterCounts = { rowsRead: 0, valid: 0, rejected: 0, filtered: 0, duplicatesIgnored: 0 };
  let knownRows = 0;
  const keep = (row: RejectedRow): void => {
    if (rejected.length < cap) rejected.push(row);
    else rejectedNotStored++;
  };
  let lastProvenance: Provenance | undefined;
  /** Row numbers of rows rejected for their values, by client_id (a valid row may share the id). */
  const rejectedRowsById = new Map<string, number[]>();
  let unidentifiedRejected = 0;
  const noteRejected = (clientId: string | undefined, rowNumber: number): void => {
    if (clientId === undefined) {
      unidentifiedRejected++;
      return;
    }
    const rows = rejectedRowsById.get(clientId);
    if (rows) rows.push(rowNumber);
    else rejectedRowsById.set(clientId, [rowNumber]);
  };

  /**
   * A valid row: mapped into `record` (its client_id's known entry, or -1), or known unchanged
   * (`entry`, no record): duplicates by client_id. Not async: a promise (and a microtask) per row
   * is measurable at a million rows.
   */
  const accept = (clientIdOfRecord: string | undefined, entry: number, row: SourceRow, record: DesiredRecord | undefined): void | Promise<void> => {
    const seenAt = firstRows.firstRow(clientIdOfRecord, entry);
    if (seenAt === undefined) {
      firstRows.add(clientIdOfRecord, entry, row.provenance.row);
      return record ? options.onRecord?.(record) : undefined;
    }
    const clientId = clientIdOfRecord ?? fastPath!.known.clientIdAt(entry);
    const rows = duplicateRows.get(clientId) ?? [seenAt];
    rows.push(row.provenance.row);
    duplicateRows.set(clientId, rows);
    // Kept under every policy: `reject` lists the rows' cells, `first`/`last` what the row set aside carried.
    if (duplicateValues.size < cap) duplicateValues.set(rowRef(row.provenance), row.values);
    if (policy === 'reject') return;
    counts.duplicatesIgnored++;
    const ignoredRow = policy === 'first' ? row.provenance.row : rows[rows.length - 2]!;
    const keptRow = policy === 'first' ? seenAt : row.provenance.row;
    if (warnings.length < cap) {
      warnings.push({
        provenance: { ...row.provenance, row: ignoredRow },
        column: compiled.clientIdColumn,
        value: truncate(clientId),
        code: 'duplicate_client_id_ignored',
        message: `client_id "${truncate(clientId, 40)}" appears again; row ${ignoredRow} ignored, row ${keptRow} kept (duplicate_client_ids: ${policy})`,
        hint: 'Merge the rows in the roster if they are the same person.',
      });
    }
    if (policy !== 'last') return undefined;
    return record ? options.onRecord?.(record, true) : fastPath!.onKnown(clientId);
  };

  /** A row of an earlier file whose client_id a later file has: left out (the later row counts). */
  const isReplaced = (clientId: string | undefined): boolean => {
    if (clientId === undefined || !replacedBy.has(clientId)) return false;
    replaced++;
    replacing.add(clientId);
    return true;
  };
  /** The client_ids of the overlay being read, for the files before it (see `replacedBy`). */
  let readingIds: Map<string, Provenance> | undefined;
  const noteId = (clientId: string | undefined, provenance: Provenance): void => {
    if (clientId !== undefined && readingIds && !readingIds.has(clientId)) readingIds.set(clientId, provenance);
  };

  /** One item of the source; returns a promise only when `onRecord` did (awaited by the loop). */
  const step = (item: SourceItem): void | Promise<void> => {
    counts.rowsRead++;
    if (item.kind === 'error') {
      const { error } = item;
      // The reader may still give the cells it could read (an XLSX row with an error cell): their
      // client_id says whose row it is, so that record is neither written nor deleted.
      const identity = error.values ? identityOf(compiled.mapRow({ values: error.values, provenance: error.provenance })) : {};
      if (isReplaced(identity.clientId)) return undefined;
      noteId(identity.clientId, error.provenance);
      counts.rejected++;
      noteRejected(identity.clientId, error.provenance.row);
      keep({
        provenance: error.provenance,
        ...identity,
        values: error.values ?? {},
        problems: [
          {
            provenance: error.provenance,
            code: 'unreadable_row',
            message: error.message,
            ...(error.raw !== undefined ? { value: truncate(error.raw) } : {}),
            hint: error.hint ?? 'Fix the line in the file (often an unbalanced quote); the other rows were read.',
          },
        ],
      });
      return undefined;
    }
    const { row } = item;
    lastProvenance = row.provenance;
    const rowKey = fastPath?.rowKey(row);
    const knownEntry = rowKey === undefined ? -1 : fastPath!.known.entryOfRowKey(rowKey);
    if (knownEntry >= 0) {
      if (replacedBy.size > 0 && isReplaced(fastPath!.known.clientIdAt(knownEntry))) return undefined;
      knownRows++;
      return accept(undefined, knownEntry, row, undefined);
    }
    const result = compiled.mapRow(row);
    if (replacedBy.size > 0 || readingIds) {
      const clientId = result.kind === 'filtered' ? result.identify().clientId : result.kind === 'rejected' ? result.clientId : result.record.clientId;
      if (isReplaced(clientId)) return undefined;
      noteId(clientId, row.provenance);
    }
    if (result.kind === 'filtered') {
      counts.filtered++;
      if (filteredRows.length < FILTERED_ROWS_LISTED) filteredRows.push({ provenance: row.provenance, reason: result.reason, ...result.identify() });
      return undefined;
    }
    if (result.kind === 'rejected') {
      counts.rejected++;
      noteRejected(result.clientId, row.provenance.row);
      keep({
        provenance: row.provenance,
        ...(result.clientId !== undefined ? { clientId: result.clientId } : {}),
        ...(result.name !== undefined ? { name: result.name } : {}),
        values: row.values,
        problems: result.problems,
      });
      return undefined;
    }
    if (result.warnings) {
      // No row key: the fast path would skip this row on the next run, and its warnings with it.
      for (const warning of result.warnings) if (warnings.length < cap) warnings.push(warning);
      const name = result.record.fields.name;
      const warned: RejectedRow = { provenance: row.provenance, clientId: result.record.clientId, values: row.values, problems: result.warnings };
      if (typeof name === 'string') warned.name = name;
      if (warnedRows.length < cap) warnedRows.push(warned);
      else warnedRowsNotStored++;
    } else if (rowKey !== undefined) result.record.rowKey = rowKey;
    return accept(result.record.clientId, firstRows.entryOf(result.record.clientId), row, result.record);
  };

  const read = async (file: OpenedSource): Promise<void> => {
    // A reader that hands out rows in batches (read in a worker thread) is walked a batch at a time:
    // an await per row is measurable at a million rows.
    if (file.batches) {
      reading: for await (const batch of file.batches) {
        for (const item of batch) {
          if (options.signal?.aborted) break reading;
          const pending = step(item);
          if (pending) await pending;
        }
      }
    } else {
      for await (const item of file.items) {
        if (options.signal?.aborted) break;
        const pending = step(item);
        if (pending) await pending;
      }
    }
  };

  const overlays = options.overlays ?? [];
  const overlayFiles: string[] = [];
  for (let i = overlays.length - 1; i >= 0; i--) {
    const overlay = await overlays[i]!();
    compiled.checkHeaders(overlay.headers, overlay.file);
    overlayFiles.unshift(overlay.file);
    readingIds = new Map();
    await read(overlay);
    for (const [clientId, provenance] of readingIds) replacedBy.set(clientId, provenance);
  }
  // Nothing comes before the source: its ids need not be kept.
  readingIds = undefined;
  fastPath = options.fastPath;
  lastProvenance = undefined;
  await read(source);
  if (lastProvenance) sourceFile = withoutRow(lastProvenance);

  const duplicateClientIds = new Set(duplicateRows.keys());
  counts.valid = firstRows.size;

  // A valid row whose client_id a rejected row also carries is a duplicate too: the person's record
  // is left as it is until the rows are fixed (the consumer neither writes nor deletes a rejected
  // id), so the valid row must not count as valid. Under `reject`, ids with several valid rows are
  // rejected below anyway.
  const shadowed = new Map<string, number>();
  for (const clientId of rejectedRowsById.keys()) {
    if (!firstRows.has(clientId) || (policy === 'reject' && duplicateRows.has(clientId))) continue;
    const validRows = duplicateRows.get(clientId);
    shadowed.set(clientId, policy === 'last' && validRows ? validRows[validRows.length - 1]! : firstRows.get(clientId)!);
  }
  const needValues = new Set([...shadowed].map(([clientId, row]) => rowRef({ ...fileOf(clientId), row })));
  // The first row of each duplicated id was gone when the second was met.
  for (const [clientId, rows] of duplicateRows) if (policy === 'reject' || needValues.size < cap) needValues.add(rowRef({ ...fileOf(clientId), row: rows[0]! }));
  if (needValues.size) {
    const openers = [...(options.reopen ? [options.reopen] : []), ...overlays];
    for (const reopen of openers) if (needValues.size > 0) await collectValues(await reopen(), needValues, duplicateValues, options.signal);
  }
  for (const [clientId, validRow] of shadowed) {
    counts.valid--;
    counts.rejected++;
    duplicateClientIds.add(clientId);
    const provenance: Provenance = { ...fileOf(clientId), row: validRow };
    const others = rejectedRowsById.get(clientId)!;
    keep({
      provenance,
      values: duplicateValues.get(rowRef(provenance)) ?? {},
      problems: [
        {
          provenance,
          column: compiled.clientIdColumn,
          value: truncate(clientId),
          code: 'duplicate_client_id',
          message: `client_id "${truncate(clientId, 40)}" is also used by rejected row${others.length > 1 ? 's' : ''} ${others.join(', ')}; this row is not written until that is resolved`,
          hint: 'Each person must appear once: fix the rejected row (or remove it if it is the same person), or correct the ID.',
        },
      ],
    });
  }

  if (policy === 'reject' && duplicateRows.size) {
    counts.valid -= duplicateRows.size;
    for (const [clientId, rows] of duplicateRows) {
      for (const r of rows) {
        counts.rejected++;
        const provenance: Provenance = { ...fileOf(clientId), row: r };
        const others = rows.filter((o) => o !== r);
        keep({
          provenance,
          values: duplicateValues.get(rowRef(provenance)) ?? {},
          problems: [
            {
              provenance,
              column: compiled.clientIdColumn,
              value: truncate(clientId),
              code: 'duplicate_client_id',
              message: `client_id "${truncate(clientId, 40)}" is also used by row${others.length > 1 ? 's' : ''} ${others.join(', ')}`,
              hint: 'Each person must appear once: merge the rows or correct the ID; or set `duplicate_client_ids: first` or `last` in the mapping.',
            },
          ],
        });
      }
    }
  }
  // In the pipeline's order of files (the source, then each overlay), then by row.
  const order = new Map([source.file, ...overlayFiles].map((file, i) => [file, i]));
  const byFileAndRow = (a: { provenance: Provenance }, b: { provenance: Provenance }) =>
    (order.get(a.provenance.file) ?? 0) - (order.get(b.provenance.file) ?? 0) || a.provenance.row - b.provenance.row;
  if (shadowed.size || (policy === 'reject' && duplicateRows.size) || overlays.length > 0) rejected.sort(byFileAndRow);
  const added = [...replacedBy].filter(([clientId]) => !replacing.has(clientId));
  const discarded = policy === 'reject' ? [] : discardedRows(duplicateRows, duplicateValues, policy, fileOf, cap).sort(byFileAndRow);

  return {
    counts,
    knownRows,
    rejected,
    rejectedNotStored,
    duplicateClientIds,
    warnings,
    rejectedClientIds: new Set(rejectedRowsById.keys()),
    firstRowById: firstRows,
    unidentifiedRejected,
    filteredRows,
    filteredRowsNotStored: counts.filtered - filteredRows.length,
    warnedRows,
    warnedRowsNotStored,
    ...(overlays.length > 0
      ? { layers: { files: overlayFiles, replaced, added: added.slice(0, cap).map(([clientId, provenance]) => ({ clientId, provenance })), addedNotStored: Math.max(0, added.length - cap) } }
      : {}),
    ...(discarded.length > 0 ? { discarded } : {}),
  };
}

/** client_id and name of a row, whatever became of it (for rows a reader rejected). */
function identityOf(result: MapRowResult): { clientId?: string; name?: string } {
  if (result.kind === 'filtered') return result.identify();
  if (result.kind === 'rejected') return { ...(result.clientId !== undefined ? { clientId: result.clientId } : {}), ...(result.name !== undefined ? { name: result.name } : {}) };
  const name = result.record.fields.name;
  return { clientId: result.record.clientId, ...(typeof name === 'string' && name !== '' ? { name } : {}) };
}
