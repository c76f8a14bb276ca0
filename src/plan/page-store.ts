/**
 * Where the plan's spools (plan/new-records.ts, plan/row-key-repairs.ts) keep the pages that wait
 * for apply past the few they hold themselves: a page of text is put once, then read back by its
 * place any number of times. Planning never chooses where the pages go: by default they stay in
 * memory; a run gives its spools an owner-only temporary file instead (src/spill/), made and
 * deleted by the run (sync/run-context.ts), so that a million new records do not stay in memory.
 */

/** Where a page went in its store. */
export interface PagePlace {
  at: number;
  bytes: number;
}

export interface PageStore {
  /** Keeps a page of text; a store that cannot (a full disk) refuses with a clear message. */
  put(text: string): PagePlace;
  /** The page kept at `place`. */
  get(place: PagePlace): string;
  /** Lets go of every page (a file store deletes its file); the store may not be used after. */
  dispose(): void;
}

/** The default store: pages stay in memory. */
export class MemoryPageStore implements PageStore {
  private pages: string[] = [];

  put(text: string): PagePlace {
    this.pages.push(text);
    return { at: this.pages.length - 1, bytes: text.length };
  }

  get(place: PagePlace): string {
    return this.pages[place.at]!;
  }

  dispose(): void {
    this.pages = [];
  }
}
