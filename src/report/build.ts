/**
 * Turns a plan and the outcomes of applying it into the RunReport (shared/design.md decision 8).
 */
import type { ApplyResult } from '../apply/apply.js';
import type { Plan } from '../plan/types.js';
import type { RosterSummary } from '../mapping/roster.js';
import type { PlanAction, RecordEntry, RecordOutcome, RunReport } from '../report/types.js';

export interface ReportInput {
  base: Omit<RunReport, 'counts' | 'records' | 'orphans' | 'guards' | 'estimate' | 'input' | 'rejectedRows' | 'rejectedRowsOmitted' | 'notes' | 'finishedAt' | 'durationMs'>;
  plan: Plan;
  roster: RosterSummary;
  applied?: ApplyResult;
  finishedAt: number;
  startedAt: number;
  notes: string[];
}

export function buildRunReport(input: ReportInput): RunReport {
  const { plan, roster, applied } = input;
  const counts: RunReport['counts'] = { create: {}, update: {}, delete: {}, noop: {} };
  const bump = (action: PlanAction, outcome: RecordOutcome, by = 1) => {
    counts[action][outcome] = (counts[action][outcome] ?? 0) + by;
  };
  const records: RecordEntry[] = plan.items.map((item) => {
    const result = applied?.outcomes.get(item.clientId);
    const outcome: RecordOutcome = result?.outcome ?? (applied ? 'skipped' : 'planned');
    bump(item.action, outcome);
    const entry: RecordEntry = { clientId: item.clientId, action: item.action, reason: item.reason, changes: item.changes, outcome };
    if (item.provenance) entry.provenance = item.provenance;
    if (item.pairedWith) entry.pairedWith = item.pairedWith;
    if (result?.httpStatus !== undefined) entry.httpStatus = result.httpStatus;
    if (result?.attempts !== undefined) entry.attempts = result.attempts;
    if (result?.error !== undefined) entry.error = result.error;
    if (result?.recreated) entry.reason = 'remote_deleted';
    return entry;
  });
  if (plan.counts.noop > 0) bump('noop', applied ? 'done' : 'planned', plan.counts.noop);
  return {
    ...input.base,
    finishedAt: new Date(input.finishedAt).toISOString(),
    durationMs: input.finishedAt - input.startedAt,
    input: {
      rowsRead: roster.counts.rowsRead,
      valid: roster.counts.valid,
      rejected: roster.counts.rejected,
      filtered: roster.counts.filtered,
      duplicates: roster.duplicateClientIds.size,
    },
    counts,
    estimate: plan.estimate,
    guards: plan.guards,
    records,
    orphans: plan.orphans,
    rejectedRows: roster.rejected,
    rejectedRowsOmitted: roster.rejectedNotStored,
    notes: [...plan.notes, ...input.notes],
  };
}
