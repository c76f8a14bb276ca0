/**
 * The mapping's output: desired author-from-group records, and rejected rows with every problem
 * explained. Field values are already in the service's write shape (docs/service-contract.md, call 2):
 * standard fields by name, custom fields by api_id, option labels resolved to option api_ids.
 */
import type { FieldValue } from '../client/schemas.js';
import type { CellValue, Provenance } from '../sources/types.js';

/** A value of one managed field; null means "empty in the roster" (sent as null to clear it). */
export type { FieldValue };

export interface DesiredRecord {
  clientId: string;
  /**
   * Every managed field of the mapping, present even when empty (null), keys in a stable order,
   * so two runs over the same roster produce identical canonical JSON. The `skipped` fields are
   * absent.
   */
  fields: Record<string, FieldValue>;
  /**
   * Managed fields left out because every value of theirs was invalid under `on_invalid:
   * skip_value`: they are neither sent nor cleared, so the service keeps its own value.
   */
  skipped?: string[];
  provenance: Provenance;
  /** The key of the row it was mapped from (src/mapping/row-key.ts), when the plan's fast path is on. */
  rowKey?: string;
}

/** One thing wrong with one row, precise enough to fix the cell without guessing. */
export interface RowProblem {
  provenance: Provenance;
  /** Source column the problem is about, when there is one. */
  column?: string;
  /** The offending value, truncated to 80 characters. */
  value?: string;
  /** Stable machine code, e.g. `invalid_orcid`, `unknown_option`, `duplicate_client_id`. */
  code: string;
  message: string;
  /** What to do about it. */
  hint?: string;
}

export interface RejectedRow {
  provenance: Provenance;
  /** The row's client_id, when it could still be read (the report shows it beside the problems). */
  clientId?: string;
  /** The row's name, when it could still be read. */
  name?: string;
  /** The original cells, so rejected.csv can be fixed and fed back. */
  values: Record<string, CellValue>;
  problems: RowProblem[];
}

/**
 * A row the `first` / `last` duplicate policy set aside: its record was not synced, so what it
 * carried that the kept row does not (an ORCID, an e-mail) is lost unless someone merges the rows.
 */
export interface DiscardedRow {
  provenance: Provenance;
  clientId: string;
  /** The row of the same client_id that was synced. */
  keptRow: number;
  /** The discarded row's non-empty cells that differ from the kept row's (all of them when the kept row's cells are unknown). */
  notSynced: Record<string, CellValue>;
}

/** A row a `skip_rows` entry of the mapping left out on purpose (counted as filtered, not rejected). */
export interface FilteredRow {
  provenance: Provenance;
  /** Which entry matched, in words, e.g. `skip_rows[0]: Active equals "No"`. */
  reason: string;
  clientId?: string;
  name?: string;
}
