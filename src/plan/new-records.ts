/**
 * The records a plan creates, kept out of memory until apply writes them.
 *
 * A first sync of a million rows is a million creates. Held as plan items (their fields as JSON,
 * the request body, one change per field for the report) they took about 3 KB each: 3 GB at a
 * million rows. So the planner hands each new record to this spool as it classifies it. The
 * spool keeps each page's client_ids (the plan counts, filters and claims them) and each record's
 * fields as one line of text: the first pages in memory, the rest, ids and lines apart, in its page
 * store (plan/page-store.ts: a run gives it an owner-only temporary file). Apply and the report
 * read them back a page at a time, in the order they were added (the roster's).
 *
 * Two things are learned only once the roster has been read, and are applied when reading:
 * - a later row of the same client_id (`duplicate_client_ids: last`) replaces the earlier one;
 * - client_ids that must not be written after all (rejected rows, duplicates, other pipelines'
 *   records) are left out (`finish`).
 */
import type { DesiredRecord } from '../mapping/types.js';
import type { Provenance } from '../sources/types.js';
import { MemoryPageStore, type PagePlace, type PageStore } from './page-store.js';
import type { Fields } from './types.js';

/** A record as the classifier saw it: its fields' canonical JSON and that JSON's hash. */
export interface ClassifiedRecord {
  record: DesiredRecord;
  fieldsJson: string;
  hash: string;
}

export interface NewRecordsOptions {
  /** Records per page. @default 2000 */
  pageSize?: number;
  /** Pages kept here; later ones go to `pages`. @default 2 */
  pagesInMemory?: number;
  /** Where the later pages go. @default in memory */
  pages?: PageStore;
}

interface Page {
  /** The sequence number of the page's first record. */
  first: number;
  /**
   * The client_ids, NUL-joined (a million ids as a million strings would cost 30 MB more), in
   * memory; undefined once put in the page store (a million ids held so cost about 20 MB through
   * apply and the report). A valid row's client_id holds no control character (mapping/client-id.ts
   * rejects the row).
   */
  ids: string | undefined;
  /** One line per record, in memory; undefined once put in the page store. */
  text: string | undefined;
  /** Where the page's ids and its text are in the page store. */
  place: { ids: PagePlace; text: PagePlace } | undefined;
}

const NUL = '\0';

export class NewRecords {
  private readonly pageSize: number;
  private readonly pagesInMemory: number;
  private readonly pageStore: PageStore;
  private readonly pages: Page[] = [];
  private ids: string[] = [];
  private lines: string[] = [];
  private added = 0;
  /** Rows added for a client_id that was added before. */
  private replacing = 0;
  /** The last sequence number of each client_id added again (`duplicate_client_ids: last`). */
  private readonly latest = new Map<string, number>();
  private drop: (clientId: string) => boolean = () => false;
  private kept: number | undefined;

  constructor(options: NewRecordsOptions = {}) {
    this.pageSize = options.pageSize ?? 2000;
    this.pagesInMemory = options.pagesInMemory ?? 2;
    this.pageStore = options.pages ?? new MemoryPageStore();
  }

  /** Client_ids added, each once (a replacing row does not count twice). */
  get distinct(): number {
    return this.added - this.replacing;
  }

  /** Adds a new record; `replaces`: an earlier row of its client_id was added, and this one wins. */
  add(item: ClassifiedRecord, replaces = false): void {
    const { record } = item;
    if (replaces) {
      this.replacing += 1;
      this.latest.set(record.clientId, this.added);
    }
    this.added += 1;
    this.ids.push(record.clientId);
    // Tab-separated: the header as JSON, then the canonical JSON of the fields as the planner made it
    // (JSON escapes tabs and newlines inside strings, so neither appears raw in either part).
    this.lines.push(`${JSON.stringify([record.clientId, item.hash, record.rowKey ?? null, record.provenance, record.skipped ?? null])}\t${item.fieldsJson}`);
    if (this.ids.length === this.pageSize) this.closePage();
  }

  /** Closes the spool: `drop` names the client_ids not to write. Returns how many are kept. */
  finish(drop: (clientId: string) => boolean = () => false): number {
    this.drop = drop;
    let kept = 0;
    for (const _ of this.clientIds()) kept += 1;
    this.kept = kept;
    return kept;
  }

  /** Records kept by `finish` (before it, every record added, each client_id once). */
  get count(): number {
    return this.kept ?? this.distinct;
  }

  /** The client_ids kept, in order. */
  *clientIds(): Generator<string> {
    this.closePage();
    for (const page of this.pages) {
      const ids = this.idsOf(page).split(NUL);
      for (let i = 0; i < ids.length; i++) if (this.keeps(ids[i]!, page.first + i)) yield ids[i]!;
    }
  }

  /** The records kept, a page at a time, in the order they were added. */
  *read(): Generator<ClassifiedRecord[]> {
    this.closePage();
    for (const page of this.pages) {
      const ids = this.idsOf(page).split(NUL);
      const lines = this.textOf(page).split('\n');
      const records: ClassifiedRecord[] = [];
      for (let i = 0; i < ids.length; i++) if (this.keeps(ids[i]!, page.first + i)) records.push(parseLine(lines[i]!));
      if (records.length > 0) yield records;
    }
  }

  /** Lets go of the page store (a temporary file is deleted). */
  dispose(): void {
    this.pageStore.dispose();
  }

  private keeps(clientId: string, sequence: number): boolean {
    const latest = this.latest.get(clientId);
    return (latest === undefined || latest === sequence) && !this.drop(clientId);
  }

  private idsOf(page: Page): string {
    return page.ids ?? this.pageStore.get(page.place!.ids);
  }

  private textOf(page: Page): string {
    return page.text ?? this.pageStore.get(page.place!.text);
  }

  private closePage(): void {
    if (this.ids.length === 0) return;
    const page: Page = { first: this.added - this.ids.length, ids: this.ids.join(NUL), text: this.lines.join('\n'), place: undefined };
    this.ids = [];
    this.lines = [];
    this.pages.push(page);
    if (this.pages.length > this.pagesInMemory) {
      page.place = { ids: this.pageStore.put(page.ids!), text: this.pageStore.put(page.text!) };
      page.ids = undefined;
      page.text = undefined;
    }
  }
}

function parseLine(line: string): ClassifiedRecord {
  const tab = line.indexOf('\t');
  const [clientId, hash, rowKey, provenance, skipped] = JSON.parse(line.slice(0, tab)) as [string, string, string | null, Provenance, string[] | null];
  const fieldsJson = line.slice(tab + 1);
  const record: DesiredRecord = { clientId, fields: JSON.parse(fieldsJson) as Fields, provenance };
  if (skipped !== null) record.skipped = skipped;
  if (rowKey !== null) record.rowKey = rowKey;
  return { record, fieldsJson, hash };
}
