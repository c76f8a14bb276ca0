/**
 * The plan: a closed set of actions (Terraform's + ~ - and no-op), computed by a pure function
 * from the desired records, the inventory and, when refreshing, the remote records.
 */
import type { FieldValue } from '../mapping/types.js';
import type { FieldChange, GuardResult, PlanAction } from '../report/types.js';
import type { Provenance } from '../sources/types.js';

export type { PlanAction };

export type Fields = Record<string, FieldValue>;

/** Why an action was planned; shown in reports. */
export type PlanReason =
  | 'new'
  | 'changed'
  | 'retry_failed'
  | 'drift'
  | 'remote_deleted'
  | 'gone_from_roster'
  | 'client_id_changed';

export interface PlanItem {
  clientId: string;
  action: Exclude<PlanAction, 'noop'>;
  reason: PlanReason;
  /** Request body: the full record for create / full update, only changed fields for partial update. */
  body?: Fields;
  /** An update sent as a full POST (`update: full`), replacing the whole record. */
  replace?: boolean;
  /** What the inventory records once the write succeeds (all managed fields, canonical). */
  desired?: { fieldsJson: string; hash: string };
  changes: FieldChange[];
  provenance?: Provenance;
  pairedWith?: string;
}

/** Inventory corrections that need no call (the remote already matches the roster). */
export interface StateRepair {
  clientId: string;
  fieldsJson: string;
  hash: string;
}

export interface PlanCounts {
  create: number;
  update: number;
  delete: number;
  noop: number;
}

export interface Plan {
  items: PlanItem[];
  counts: PlanCounts;
  /** Owned records gone from the roster that upsert mode keeps. */
  orphans: string[];
  stateRepairs: StateRepair[];
  guards: GuardResult[];
  /** True when a tripped guard refuses the run. */
  refused: boolean;
  estimate: { calls: number; rps: number; seconds: number; text: string };
  notes: string[];
}
