/**
 * Whether a run's journal lets `rostersync revert` know what the run did and where, checked before
 * any call: a revert never guesses. It refuses (exit 1, nothing written) a run whose journal is
 * missing (a state moved with `state export`/`import`, which carries no journal) or incomplete
 * (fewer writes journaled than the run's counts report), a run journaled by a rostersync older
 * than state schema 5 (no service and group with each write, undo values of unknown source), and
 * a run that wrote to another service or group than the one the state is bound to now (after
 * `state rebind` or `state set-group`: the inventory is no longer that group's, so it cannot say
 * which records there are still the pipeline's).
 */
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';
import type { JournalEntry, RunRow, Target } from '../state/backend.js';
import { UNDO_FORMAT, parseUndoRecord } from '../apply/undo-record.js';

export function revertTarget(run: RunRow, entries: readonly JournalEntry[], bound: { baseUrl: string | null; groupId: number | null }): Target {
  const refuse = (why: string, hint?: string) => new UserFacingError(`cannot revert run ${run.id}: ${why} Nothing was written.`, { exitCode: EXIT.usage, ...(hint ? { hint } : {}) });
  const done = doneReported(run.countsJson);
  const moved = 'Only runs journaled in this state can be reverted: undo that run by hand (its report lists every record it wrote), or from the state it was made with.';
  if (entries.length === 0) {
    if (done === null) throw refuse('the state holds no journal of its writes: it stopped before writing anything, or the state was moved since (`state export`/`state import` keep the run history, not the journal).', moved);
    if (done === 0) throw refuse('it wrote nothing (its report counts no write done and its journal holds none), so there is nothing to undo.');
    throw refuse(`its report counts ${done} write${done === 1 ? '' : 's'} done, but the state holds no journal of them (a state moved with \`state export\`/\`state import\` keeps the run history, not the journal).`, moved);
  }
  if (done !== null && entries.filter((entry) => entry.state === 'done').length < done) {
    throw refuse(`its journal is incomplete: it holds fewer confirmed writes than the ${done} its report counts.`, moved);
  }
  const old = entries.filter((entry) => entry.target === null || parseUndoRecord(entry.undoJson)?.v !== UNDO_FORMAT);
  if (old.length > 0) {
    throw refuse(
      `${old.length === entries.length ? 'its writes were' : `${old.length} of its writes were`} journaled by a rostersync older than state schema 5, which did not record the service and group of each write nor where the values to restore came from (e.g. ${old.slice(0, 3).map((entry) => entry.clientId).join(', ')}).`,
      'Runs made since the upgrade can be reverted; undo this one by hand (its report lists every record it wrote).',
    );
  }
  const targets = new Map(entries.map((entry) => [`${entry.target!.baseUrl} ${entry.target!.groupId}`, entry.target!]));
  if (targets.size > 1) throw refuse(`its writes went to more than one group (${[...targets.values()].map((t) => `group ${t.groupId} of ${t.baseUrl}`).join(', ')}).`);
  const target = [...targets.values()][0]!;
  if (target.baseUrl !== bound.baseUrl || target.groupId !== bound.groupId) {
    throw refuse(
      `it wrote to group ${target.groupId} of ${target.baseUrl}, but the state is bound to group ${bound.groupId ?? '(none)'} of ${bound.baseUrl ?? '(none)'} now (\`state set-group\` or \`state rebind\` since). The inventory no longer tells which records in group ${target.groupId} are this pipeline's, and the run's records are not in group ${bound.groupId ?? '(none)'}.`,
      `A revert acts only where the run wrote and only on records the pipeline still owns there. The records the run created in group ${target.groupId} are listed in its report.`,
    );
  }
  return target;
}

/** Writes done in a finished run's counts (report.json's `counts`); null when the run never finished. */
function doneReported(countsJson: string | null): number | null {
  if (countsJson === null) return null;
  const counts = JSON.parse(countsJson) as Record<string, Record<string, number> | undefined>;
  return ['create', 'update', 'delete'].reduce((total, action) => total + (counts[action]?.done ?? 0), 0);
}
