/**
 * What applying a plan did, in the plan's vocabulary: the outcome of each item and why a run
 * stopped early. apply/ produces them; report/ and sync/ read them.
 */
import type { Fields, RecordOutcome } from './types.js';

export interface ItemOutcome {
  outcome: RecordOutcome;
  httpStatus?: number;
  attempts?: number;
  error?: string;
  /** A partial update that found the record deleted remotely and recreated it with a full POST. */
  recreated?: boolean;
  /** A create-if-absent that found the record existing: adopted, only managed fields written. */
  adopted?: boolean;
  /** Fields of the plan's body not sent because the record already held a value (`ifEmpty`). */
  kept?: string[];
  /** Managed fields of an adopted record whose value in the service was replaced. */
  overwritten?: Overwritten[];
}

/** A managed field an adoption overwrote: the value the service held, and the roster's. */
export interface Overwritten {
  field: string;
  before: Fields[string];
  after: Fields[string];
}

export type StopReason = 'interrupted' | 'lock_lost' | 'deadline' | 'unavailable' | 'auth' | 'group_gone';

/**
 * The outcome of nearly every write, shared: a first sync of a million records would otherwise
 * hold a million copies of it until the report is written.
 */
export const DONE_FIRST_TIME: ItemOutcome = Object.freeze({ outcome: 'done', httpStatus: 200, attempts: 1 });

export interface ApplyResult {
  /**
   * The outcome of each item apply reached, but for new records (`Plan.newRecords`) done first
   * time: a million of them would be a million entries. `outcomeOf` tells them.
   */
  outcomes: Map<string, ItemOutcome>;
  /** How many of the plan's new records apply reached, in order. */
  newRecordsReached: number;
  stopped?: { reason: StopReason; message: string; exitCode: number };
}

/**
 * The outcome of a plan item: `position` is its place among the plan's new records (planItems'
 * order), undefined for the other items. Undefined when apply did not reach it.
 */
export function outcomeOf(applied: ApplyResult, clientId: string, position: number | undefined): ItemOutcome | undefined {
  return applied.outcomes.get(clientId) ?? (position !== undefined && position < applied.newRecordsReached ? DONE_FIRST_TIME : undefined);
}
