/**
 * The rotating window of the drift check (sync/drift.ts): besides the random sample, each real run
 * reads back the next ceil(owned / `policy.drift_cycle`) owned records in client_id order, after
 * the last one the previous run read, wrapping round at the end. Every owned record is so read back
 * once every `drift_cycle` runs while the group keeps its size, however large it is: a random
 * sample of 5 alone would leave a deleted record of a 50,000-record group unnoticed for years.
 *
 * Where the window stands is kept in the state's meta table (both backends have one, so no
 * migration): the last client_id read, when the current pass began, how many records it has
 * walked, and when the last full pass ended; the report says so. The window moves on only once the
 * run's writes were all attempted (sync/run-plan.ts): a run refused by a guard or stopped early
 * reads the same records again next time, so a drifted record it could not repair is found again.
 *
 * Order is JavaScript string order (UTF-16 code units), the same whatever order a backend lists
 * its ids in; the pass over the ids keeps only the few smallest, so memory is bounded by the
 * window, not the group.
 */
import type { StateBackend } from '../state/backend.js';

/** The state's meta key of the window. */
export const DRIFT_WINDOW_KEY = 'drift_window';

export interface DriftWindowState {
  /** The last client_id the window read; null: the next pass starts at the first. */
  after: string | null;
  /** When the current pass began (ISO); null before the first. */
  passStartedAt: string | null;
  /** Owned records the current pass has walked. */
  walked: number;
  /** When the last full pass over the group ended (ISO); null before the first ended. */
  lastFullPassAt: string | null;
}

const FRESH: DriftWindowState = { after: null, passStartedAt: null, walked: 0, lastFullPassAt: null };

/** The window as the state keeps it; one that cannot be read (edited by hand) starts afresh. */
export function readDriftWindow(store: Pick<StateBackend, 'getMeta'>): DriftWindowState {
  const text = store.getMeta(DRIFT_WINDOW_KEY);
  if (text === undefined) return FRESH;
  try {
    const parsed = JSON.parse(text) as Partial<DriftWindowState>;
    const isoOrNull = (value: unknown) => (typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? value : null);
    return {
      after: typeof parsed.after === 'string' ? parsed.after : null,
      passStartedAt: isoOrNull(parsed.passStartedAt),
      walked: Number.isSafeInteger(parsed.walked) && parsed.walked! >= 0 ? parsed.walked! : 0,
      lastFullPassAt: isoOrNull(parsed.lastFullPassAt),
    };
  } catch {
    return FRESH;
  }
}

export function saveDriftWindow(store: Pick<StateBackend, 'setMeta'>, state: DriftWindowState): void {
  store.setMeta(DRIFT_WINDOW_KEY, JSON.stringify(state));
}

/** The `size` smallest strings fed to it, in order; holds at most about twice that many. */
class Smallest {
  private items: string[] = [];

  constructor(private readonly size: number) {}

  add(item: string): void {
    if (this.size === 0) return;
    this.items.push(item);
    if (this.items.length >= 2 * this.size + 64) this.trim();
  }

  result(): string[] {
    this.trim();
    return this.items;
  }

  private trim(): void {
    this.items.sort();
    this.items.length = Math.min(this.items.length, this.size);
  }
}

/** Chooses this run's window while the owned ids stream past once (`add`), then `finish`. */
export class DriftWindowPicker {
  private readonly afterCursor: Smallest;
  private readonly fromStart: Smallest;
  private owned = 0;
  private remaining = 0;

  constructor(
    private readonly state: DriftWindowState,
    private readonly share: number,
  ) {
    this.afterCursor = new Smallest(share);
    this.fromStart = new Smallest(share);
  }

  add(clientId: string): void {
    this.owned += 1;
    if (this.state.after === null || clientId > this.state.after) {
      this.remaining += 1;
      this.afterCursor.add(clientId);
    } else {
      this.fromStart.add(clientId);
    }
  }

  /** The window (client_ids in order) and where the next run's starts. */
  finish(nowIso: string): { ids: string[]; next: DriftWindowState; owned: number } {
    const ahead = this.afterCursor.result();
    const passStartedAt = this.state.passStartedAt ?? nowIso;
    if (this.remaining > ahead.length || this.share === 0) {
      return { ids: ahead, owned: this.owned, next: { after: ahead.at(-1) ?? this.state.after, passStartedAt, walked: this.state.walked + ahead.length, lastFullPassAt: this.state.lastFullPassAt } };
    }
    // This window reaches the end: the pass is complete, and the next one starts from the first id.
    const wrapped = this.fromStart.result().slice(0, this.share - ahead.length);
    return {
      ids: [...ahead, ...wrapped],
      owned: this.owned,
      next: { after: wrapped.at(-1) ?? null, passStartedAt: nowIso, walked: wrapped.length, lastFullPassAt: nowIso },
    };
  }
}

/** Records per run so that `owned` records are walked in `cycle` runs; 0 when the window is off. */
export function windowShare(owned: number, cycle: number): number {
  return cycle > 0 ? Math.ceil(owned / cycle) : 0;
}
