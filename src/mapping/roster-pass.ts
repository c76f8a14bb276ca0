/**
 * One read of a roster's files through a compiled mapping (src/mapping/roster.ts drives it and
 * settles the duplicates at the end): what each row becomes, and the little that is kept of it.
 *
 * `readItem` runs once per row, a million times on a first sync. So the pass is a class whose
 * methods are made once, not closures per call; a row allocates only what is kept of it; and
 * nothing per row is async: a promise (and a microtask) per row is measurable at a million rows,
 * so a promise is returned only when `onRecord` returned one.
 */
import type { CellValue, OpenedSource, Provenance, SourceItem, SourceRow, SourceRowError } from '../sources/types.js';
import { truncate } from '../sources/headers.js';
import type { CompiledMapping } from './compile.js';
import type { MapRowResult } from './map-row.js';
import type { DesiredRecord, FilteredRow, RejectedRow, RowProblem } from './types.js';
import { FirstRows, type KnownRecords } from './first-rows.js';
import { rowRef, withoutRow } from './duplicate-rows.js';

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

/** Filtered rows listed for the report: they are skipped on purpose, a sample is enough to check the filter. */
export const FILTERED_ROWS_LISTED = 1000;

export interface RosterPassOptions {
  /** See MapRosterOptions.onRecord (src/mapping/roster.ts). */
  onRecord?: ((record: DesiredRecord, replaces?: boolean) => void | Promise<void>) | undefined;
  /** Cap on stored rejected rows, warnings and duplicate rows' cells. */
  cap: number;
  signal?: AbortSignal | undefined;
  /** Given to the source's own rows only, never an overlay's. */
  fastPath?: FastPath | undefined;
}

export class RosterPass {
  readonly counts: RosterCounts = { rowsRead: 0, valid: 0, rejected: 0, filtered: 0, duplicatesIgnored: 0 };
  /** Rows recognised by their row key (the fast path) and not mapped. */
  knownRows = 0;
  readonly firstRows: FirstRows;
  /**
   * Row numbers of every occurrence of a duplicated id, in order. The rows of one client_id that
   * count are all in one file (`fileOf`): a later file's row replaces them in every earlier file.
   */
  readonly duplicateRows = new Map<string, number[]>();
  /** Cells of duplicate rows, by `rowRef` (filled for later rows as met, first rows by reopening). */
  readonly duplicateValues = new Map<string, Record<string, CellValue>>();
  /**
   * client_ids of the files read so far, which are later in the pipeline's order (overlays are
   * read last first, the source last): a row of an earlier file with one of them is replaced.
   */
  readonly replacedBy = new Map<string, Provenance>();
  /** Those met again in an earlier file: the others are new rows. */
  readonly replacing = new Set<string>();
  /** Rows of earlier files left out because a later file has their client_id. */
  replaced = 0;
  /** The overlay files, in the pipeline's order. */
  readonly overlayFiles: string[] = [];
  readonly rejected: RejectedRow[] = [];
  rejectedNotStored = 0;
  readonly warnings: RowProblem[] = [];
  readonly warnedRows: RejectedRow[] = [];
  warnedRowsNotStored = 0;
  readonly filteredRows: FilteredRow[] = [];
  /** Row numbers of rows rejected for their values, by client_id (a valid row may share the id). */
  readonly rejectedRowsById = new Map<string, number[]>();
  unidentifiedRejected = 0;

  private readonly policy: CompiledMapping['duplicatePolicy'];
  /** The fast path of the file being read: the source's own rows only, never an overlay's. */
  private fastPath: FastPath | undefined;
  /** The client_ids of the overlay being read, for the files before it (see `replacedBy`). */
  private readingIds: Map<string, Provenance> | undefined;
  /** The last row read, for the source's sheet (the provenance every row of the source shares). */
  private lastProvenance: Provenance | undefined;
  private sourceFile: Omit<Provenance, 'row'>;

  constructor(
    private readonly source: OpenedSource,
    private readonly compiled: CompiledMapping,
    private readonly options: RosterPassOptions,
  ) {
    this.policy = compiled.duplicatePolicy;
    this.firstRows = new FirstRows(options.fastPath?.known);
    this.sourceFile = { file: source.file };
  }

  /**
   * The overlays, last file first, before the source: a row of a later file replaces every row of
   * its client_id in the earlier files, so reading backwards maps each row that counts once.
   */
  async readOverlays(overlays: ReadonlyArray<() => Promise<OpenedSource>>): Promise<void> {
    for (let i = overlays.length - 1; i >= 0; i--) {
      const overlay = await overlays[i]!();
      this.compiled.checkHeaders(overlay.headers, overlay.file);
      this.overlayFiles.unshift(overlay.file);
      this.readingIds = new Map();
      await this.readFile(overlay);
      for (const [clientId, provenance] of this.readingIds) this.replacedBy.set(clientId, provenance);
    }
  }

  /** The source, last: with the fast path, and without keeping its ids (nothing comes before it). */
  async readSource(): Promise<void> {
    this.readingIds = undefined;
    this.fastPath = this.options.fastPath;
    this.lastProvenance = undefined;
    await this.readFile(this.source);
    if (this.lastProvenance) this.sourceFile = withoutRow(this.lastProvenance);
  }

  /** The file of the rows of `clientId` that count (an overlay's, else the source's). */
  fileOf(clientId: string): Omit<Provenance, 'row'> {
    const provenance = this.replacedBy.get(clientId);
    return provenance ? withoutRow(provenance) : this.sourceFile;
  }

  /** Stores a rejected row, up to the cap; counts the others. */
  keep(row: RejectedRow): void {
    if (this.rejected.length < this.options.cap) this.rejected.push(row);
    else this.rejectedNotStored++;
  }

  private async readFile(file: OpenedSource): Promise<void> {
    const { signal } = this.options;
    // A reader that hands out rows in batches (read in a worker thread) is walked a batch at a time:
    // an await per row is measurable at a million rows.
    if (file.batches) {
      reading: for await (const batch of file.batches) {
        for (const item of batch) {
          if (signal?.aborted) break reading;
          const pending = this.readItem(item);
          if (pending) await pending;
        }
      }
    } else {
      for await (const item of file.items) {
        if (signal?.aborted) break;
        const pending = this.readItem(item);
        if (pending) await pending;
      }
    }
  }

  /** One item of a file; returns a promise only when `onRecord` did (awaited by the loop). */
  private readItem(item: SourceItem): void | Promise<void> {
    this.counts.rowsRead++;
    if (item.kind === 'error') {
      this.unreadable(item.error);
      return undefined;
    }
    return this.readRow(item.row);
  }

  /** A row the reader could not read: rejected, under the client_id of the cells it could read, if any. */
  private unreadable(error: SourceRowError): void {
    // The reader may still give the cells it could read (an XLSX row with an error cell): their
    // client_id says whose row it is, so that record is neither written nor deleted.
    const identity = error.values ? identityOf(this.compiled.mapRow({ values: error.values, provenance: error.provenance })) : {};
    if (this.isReplaced(identity.clientId)) return;
    this.noteId(identity.clientId, error.provenance);
    this.rejectRow(identity.clientId, {
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
  }

  /** A row that was read: a known record (fast path), else mapped: filtered, rejected or accepted. */
  private readRow(row: SourceRow): void | Promise<void> {
    this.lastProvenance = row.provenance;
    const fastPath = this.fastPath;
    const rowKey = fastPath?.rowKey(row);
    const knownEntry = rowKey === undefined ? -1 : fastPath!.known.entryOfRowKey(rowKey);
    if (knownEntry >= 0) {
      if (this.replacedBy.size > 0 && this.isReplaced(fastPath!.known.clientIdAt(knownEntry))) return undefined;
      this.knownRows++;
      return this.accept(undefined, knownEntry, row, undefined);
    }
    const result = this.compiled.mapRow(row);
    if (this.replacedBy.size > 0 || this.readingIds) {
      const clientId = result.kind === 'filtered' ? result.identify().clientId : result.kind === 'rejected' ? result.clientId : result.record.clientId;
      if (this.isReplaced(clientId)) return undefined;
      this.noteId(clientId, row.provenance);
    }
    if (result.kind === 'filtered') {
      this.counts.filtered++;
      if (this.filteredRows.length < FILTERED_ROWS_LISTED) this.filteredRows.push({ provenance: row.provenance, reason: result.reason, ...result.identify() });
      return undefined;
    }
    if (result.kind === 'rejected') {
      this.rejectRow(result.clientId, {
        provenance: row.provenance,
        ...(result.clientId !== undefined ? { clientId: result.clientId } : {}),
        ...(result.name !== undefined ? { name: result.name } : {}),
        values: row.values,
        problems: result.problems,
      });
      return undefined;
    }
    const { record } = result;
    if (result.warnings) this.noteWarnings(row, record, result.warnings);
    // No row key on a record with warnings: the fast path would skip this row on the next run, and its warnings with it.
    else if (rowKey !== undefined) record.rowKey = rowKey;
    return this.accept(record.clientId, this.firstRows.entryOf(record.clientId), row, record);
  }

  /** Warnings about the values of a row that is synced: listed, and the row kept for rejected.csv (both capped). */
  private noteWarnings(row: SourceRow, record: DesiredRecord, rowWarnings: RowProblem[]): void {
    const { cap } = this.options;
    for (const warning of rowWarnings) if (this.warnings.length < cap) this.warnings.push(warning);
    const name = record.fields.name;
    const warned: RejectedRow = { provenance: row.provenance, clientId: record.clientId, values: row.values, problems: rowWarnings };
    if (typeof name === 'string') warned.name = name;
    if (this.warnedRows.length < cap) this.warnedRows.push(warned);
    else this.warnedRowsNotStored++;
  }

  /**
   * A valid row: mapped into `record` (its client_id's known entry, or -1), or known unchanged
   * (`entry`, no record). The first row of its client_id is passed on; a later one is a duplicate.
   */
  private accept(clientIdOfRecord: string | undefined, entry: number, row: SourceRow, record: DesiredRecord | undefined): void | Promise<void> {
    const seenAt = this.firstRows.firstRow(clientIdOfRecord, entry);
    if (seenAt === undefined) {
      this.firstRows.add(clientIdOfRecord, entry, row.provenance.row);
      return record ? this.options.onRecord?.(record) : undefined;
    }
    return this.duplicate(clientIdOfRecord ?? this.fastPath!.known.clientIdAt(entry), seenAt, row, record);
  }

  /** A later row of a client_id already met, under the mapping's `duplicate_client_ids` policy. */
  private duplicate(clientId: string, seenAt: number, row: SourceRow, record: DesiredRecord | undefined): void | Promise<void> {
    const { policy } = this;
    const rows = this.duplicateRows.get(clientId) ?? [seenAt];
    rows.push(row.provenance.row);
    this.duplicateRows.set(clientId, rows);
    // Kept under every policy: `reject` lists the rows' cells, `first`/`last` what the row set aside carried.
    if (this.duplicateValues.size < this.options.cap) this.duplicateValues.set(rowRef(row.provenance), row.values);
    if (policy === 'reject') return undefined;
    this.counts.duplicatesIgnored++;
    const ignoredRow = policy === 'first' ? row.provenance.row : rows[rows.length - 2]!;
    const keptRow = policy === 'first' ? seenAt : row.provenance.row;
    if (this.warnings.length < this.options.cap) {
      this.warnings.push({
        provenance: { ...row.provenance, row: ignoredRow },
        column: this.compiled.clientIdColumn,
        value: truncate(clientId),
        code: 'duplicate_client_id_ignored',
        message: `client_id "${truncate(clientId, 40)}" appears again; row ${ignoredRow} ignored, row ${keptRow} kept (duplicate_client_ids: ${policy})`,
        hint: 'Merge the rows in the roster if they are the same person.',
      });
    }
    if (policy !== 'last') return undefined;
    return record ? this.options.onRecord?.(record, true) : this.fastPath!.onKnown(clientId);
  }

  /** A row of an earlier file whose client_id a later file has: left out (the later row counts). */
  private isReplaced(clientId: string | undefined): boolean {
    if (clientId === undefined || !this.replacedBy.has(clientId)) return false;
    this.replaced++;
    this.replacing.add(clientId);
    return true;
  }

  /** The first row of each client_id of the overlay being read (see `readingIds`). */
  private noteId(clientId: string | undefined, provenance: Provenance): void {
    const ids = this.readingIds;
    if (clientId !== undefined && ids && !ids.has(clientId)) ids.set(clientId, provenance);
  }

  /** A row rejected as it was read: counted, kept (capped), and noted under its client_id when it has one. */
  private rejectRow(clientId: string | undefined, rejected: RejectedRow): void {
    this.counts.rejected++;
    if (clientId === undefined) this.unidentifiedRejected++;
    else {
      const rows = this.rejectedRowsById.get(clientId);
      if (rows) rows.push(rejected.provenance.row);
      else this.rejectedRowsById.set(clientId, [rejected.provenance.row]);
    }
    this.keep(rejected);
  }
}

/** client_id and name of a row, whatever became of it (for rows a reader rejected). */
function identityOf(result: MapRowResult): { clientId?: string; name?: string } {
  if (result.kind === 'filtered') return result.identify();
  if (result.kind === 'rejected') return { ...(result.clientId !== undefined ? { clientId: result.clientId } : {}), ...(result.name !== undefined ? { name: result.name } : {}) };
  const name = result.record.fields.name;
  return { clientId: result.record.clientId, ...(typeof name === 'string' && name !== '' ? { name } : {}) };
}
