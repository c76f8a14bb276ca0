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

export interface ApplyResult {
  outcomes: Map<string, ItemOutcome>;
  stopped?: { reason: StopReason; message: string; exitCode: number };
}
