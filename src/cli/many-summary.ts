/**
 * The combined summary of `rostersync sync a.yaml b.yaml …`: one line per pipeline (its outcome,
 * exit code, what it did, where its report is), then the exit code of the whole command.
 */
import { relative } from 'node:path';
import { actionTotal, reportOutcomeWords } from '../report/format.js';
import type { ManyRunResult, PipelineOutcome } from '../sync/run-many.js';

export function renderManySummary(result: ManyRunResult, options: { cwd: string; index?: string | undefined }): string {
  const lines: string[] = [];
  const failed = result.outcomes.filter((o) => o.exitCode !== 0).length;
  lines.push(`${result.outcomes.length} pipelines: ${result.outcomes.length - failed} ok, ${failed} not · exit ${result.exitCode} (the worst)`);
  const width = Math.max(...result.outcomes.map((o) => label(o).length));
  for (const outcome of result.outcomes) lines.push(`  ${label(outcome).padEnd(width)}  ${describe(outcome, options.cwd)}`);
  if (options.index) lines.push(`Run history of all: ${relative(options.cwd, options.index) || options.index}`);
  return `${lines.join('\n')}\n`;
}

function label(outcome: PipelineOutcome): string {
  return outcome.name ?? outcome.pipelinePath;
}

function describe(outcome: PipelineOutcome, cwd: string): string {
  if (!outcome.result) return `error (exit ${outcome.exitCode}): ${outcome.error?.message ?? 'no report'}${outcome.error?.hint ? ` — ${outcome.error.hint}` : ''}`;
  const { report, written } = outcome.result;
  const done = (['create', 'update', 'delete'] as const)
    .map((action) => [action, actionTotal(report, action)] as const)
    .filter(([, n]) => n > 0)
    .map(([action, n]) => `${n} ${action}`);
  const what = done.length > 0 ? done.join(', ') : 'no change';
  const message = report.message ? ` — ${report.message}` : '';
  return `${reportOutcomeWords(report)} (exit ${outcome.exitCode}): ${what}${message} · report ${relative(cwd, written.files.html) || written.files.html}`;
}
