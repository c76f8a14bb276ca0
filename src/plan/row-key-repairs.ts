/**
 * The plan's row key repairs (`plan.rowKeys`, stored by apply), kept as pages of text: no object
 * and no separate string per record while the plan is held. See `rowKeyRepairPageSchema`.
 */
import type { RowKeyRepair, RowKeyRepairPage } from './types.js';

/** Repairs per page: small enough that apply unpacks one at a time, large enough to be few. */
const PAGE_SIZE = 10_000;
const NUL = '\0';

export class RowKeyRepairs {
  private readonly pages: RowKeyRepairPage[];
  private clientIds: string[] = [];
  private rowKeys: string[] = [];
  private hashes: string[] = [];

  constructor(pages: readonly RowKeyRepairPage[] = []) {
    this.pages = [...pages];
  }

  add(repair: RowKeyRepair): void {
    this.clientIds.push(repair.clientId);
    this.rowKeys.push(repair.rowKey);
    this.hashes.push(repair.hash);
    if (this.clientIds.length === PAGE_SIZE) this.closePage();
  }

  /** Every page, the open one closed. */
  toPages(): RowKeyRepairPage[] {
    this.closePage();
    return [...this.pages];
  }

  private closePage(): void {
    if (this.clientIds.length === 0) return;
    this.pages.push({ count: this.clientIds.length, clientIds: this.clientIds.join(NUL), rowKeys: this.rowKeys.join(NUL), hashes: this.hashes.join(NUL) });
    this.clientIds = [];
    this.rowKeys = [];
    this.hashes = [];
  }
}

/** The repairs of a page. A page whose columns do not hold `count` values each is refused. */
export function unpackRepairs(page: RowKeyRepairPage): RowKeyRepair[] {
  const clientIds = page.clientIds.split(NUL);
  const rowKeys = page.rowKeys.split(NUL);
  const hashes = page.hashes.split(NUL);
  if (clientIds.length !== page.count || rowKeys.length !== page.count || hashes.length !== page.count) {
    throw new Error(`a page of row key repairs holds ${clientIds.length} client_ids, ${rowKeys.length} keys and ${hashes.length} hashes for ${page.count} repairs`);
  }
  return clientIds.map((clientId, i) => ({ clientId, rowKey: rowKeys[i]!, hash: hashes[i]! }));
}

/**
 * The pages without the repairs whose client_id `keep` refuses. Pages that keep every repair are
 * passed on as they are, read for their client_ids only: after a mapping change there are a
 * million repairs, and unpacking them all only to keep them all made a burst of garbage.
 */
export function keptRepairs(pages: readonly RowKeyRepairPage[], keep: (clientId: string) => boolean): RowKeyRepairPage[] {
  const kept: RowKeyRepairPage[] = [];
  for (const page of pages) {
    if (page.clientIds.split(NUL).every(keep)) {
      kept.push(page);
      continue;
    }
    const rebuilt = new RowKeyRepairs();
    for (const repair of unpackRepairs(page)) if (keep(repair.clientId)) rebuilt.add(repair);
    kept.push(...rebuilt.toPages());
  }
  return kept;
}
