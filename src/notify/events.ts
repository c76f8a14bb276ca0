/**
 * Which `notify.on` events a finished run raises. A run can raise several (a success that found
 * drift raises `success` and `drift`); it notifies when any of them is listed.
 */
import type { NotifyEvent, RejectsPolicy } from '../config/pipeline.js';
import { judgeRejects } from '../plan/rejects-tolerance.js';
import { failedRecords } from '../report/format.js';
import type { RunReport } from '../report/types.js';

export function runEvents(report: RunReport, rejects?: RejectsPolicy): NotifyEvent[] {
  const events: NotifyEvent[] = [];
  if (report.outcome === 'failed' || report.outcome === 'interrupted' || failedRecords(report).length > 0) events.push('failure');
  if (report.outcome === 'refused') events.push('refused');
  // Rejected rows over policy.rejects (all of them without one); a run that is partial for failed
  // records while its rejects were tolerated raises `failure`, not this.
  if (report.outcome === 'partial' && report.input.rejected > 0 && !judgeRejects(report.input, rejects).tolerated) events.push('rejects');
  if (report.drift && report.drift.deleted.length + report.drift.changed.length > 0) events.push('drift');
  if (report.outcome === 'success' || report.outcome === 'warning') events.push('success');
  return events;
}
