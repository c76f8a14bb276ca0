/**
 * Row keys to store for records whose rows took the full path and mapped to exactly what the
 * inventory holds: the next run then takes those rows' fast path. Apply stores them
 * (`store.setRowKeyPages`), each only while its record still has the hash it was computed for.
 *
 * After a mapping, listing or version change there is one for every record of the roster. A
 * million of them held in memory until apply (as objects, then as pages of text) were the largest
 * part of that run's peak RSS, so they are not part of the plan: the planner hands them to this
 * sink, which keeps a few pages in memory and puts the rest in its page store (plan/page-store.ts:
 * a run gives it an owner-only temporary file), read back a page at a time by apply. A saved plan
 * does not carry them: `apply` plans again before it writes, and gathers its own.
 */
import { MemoryPageStore, type PagePlace, type PageStore } from './page-store.js';
import type { RowKeyRepair } from './types.js';

const NUL = '\0';

/** A page: `count` repairs, their client_ids, keys and hashes each joined by NUL. */
interface Page {
  count: number;
  clientIds: string;
  rowKeys: string;
  hashes: string;
}

export interface RowKeyRepairsOptions {
  /** Repairs per page. @default 10000 */
  pageSize?: number;
  /** Pages kept here; later ones go to `pages`. @default 4 */
  pagesInMemory?: number;
  /** Where the later pages go. @default in memory */
  pages?: PageStore;
}

export class RowKeyRepairs {
  private readonly pageSize: number;
  private readonly pagesInMemory: number;
  private readonly pages: Page[] = [];
  /** Where each page put in the page store is. */
  private readonly spilled: PagePlace[] = [];
  private readonly pageStore: PageStore;
  private clientIds: string[] = [];
  private rowKeys: string[] = [];
  private hashes: string[] = [];
  private keep: (clientId: string) => boolean = () => true;
  private addedCount = 0;

  constructor(options: RowKeyRepairsOptions = {}) {
    this.pageSize = options.pageSize ?? 10_000;
    this.pagesInMemory = options.pagesInMemory ?? 4;
    this.pageStore = options.pages ?? new MemoryPageStore();
  }

  /** Repairs added (before `keepOnly` leaves some out). */
  get added(): number {
    return this.addedCount;
  }

  add(repair: RowKeyRepair): void {
    this.addedCount++;
    this.clientIds.push(repair.clientId);
    this.rowKeys.push(repair.rowKey);
    this.hashes.push(repair.hash);
    if (this.clientIds.length === this.pageSize) this.closePage();
  }

  /**
   * Leaves out, when read, the repairs whose client_id `keep` refuses (the planner learns only at
   * the end of the roster which records are dropped or changed after all).
   */
  keepOnly(keep: (clientId: string) => boolean): void {
    this.keep = keep;
  }

  /** The repairs to store, a page at a time, in the order they were added. */
  *read(): Generator<RowKeyRepair[]> {
    this.closePage();
    for (const page of this.pages) yield this.kept(page);
    for (const place of this.spilled) yield this.kept(JSON.parse(this.pageStore.get(place)) as Page);
  }

  /** Lets go of the page store (a temporary file is deleted). */
  dispose(): void {
    this.pageStore.dispose();
  }

  private kept(page: Page): RowKeyRepair[] {
    const clientIds = page.clientIds.split(NUL);
    const rowKeys = page.rowKeys.split(NUL);
    const hashes = page.hashes.split(NUL);
    const repairs: RowKeyRepair[] = [];
    for (let i = 0; i < page.count; i++) if (this.keep(clientIds[i]!)) repairs.push({ clientId: clientIds[i]!, rowKey: rowKeys[i]!, hash: hashes[i]! });
    return repairs;
  }

  private closePage(): void {
    if (this.clientIds.length === 0) return;
    const page: Page = { count: this.clientIds.length, clientIds: this.clientIds.join(NUL), rowKeys: this.rowKeys.join(NUL), hashes: this.hashes.join(NUL) };
    this.clientIds = [];
    this.rowKeys = [];
    this.hashes = [];
    if (this.pages.length < this.pagesInMemory) {
      this.pages.push(page);
      return;
    }
    this.spilled.push(this.pageStore.put(JSON.stringify(page)));
  }
}
