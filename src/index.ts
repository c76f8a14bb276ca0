/**
 * rostersync as a library: what the CLI does, callable from your own code.
 *
 * - {@link loadPipeline}: read and check a pipeline file (and its mapping);
 * - {@link validatePipeline}: read and map the roster, explaining every rejected row;
 * - {@link planSync}: everything a sync does before writing (a dry run), optionally saving the plan;
 * - {@link applyPlan}: apply a plan saved by `planSync({ savePlanTo })`, if nothing changed since;
 * - {@link runSync}: one run end to end: read, map, plan, guard, apply, record, report;
 * - {@link createClient}: the typed client of the service, one function per endpoint;
 * - {@link startEmulator}: the local emulator of the whole service, on 127.0.0.1.
 *
 * The functions that read rosters, open the state store or start the emulator load their modules
 * on first call, so `import { createClient } from 'rostersync'` stays light.
 *
 * @example
 * ```ts
 * import { planSync, runSync, startEmulator } from 'rostersync';
 *
 * const emulator = await startEmulator();                 // the built-in demo organization
 * const service = { baseUrl: emulator.url, apiKey: 'demo-key-0123456789' };
 * const plan = await planSync({ pipelinePath: 'pipelines/demo.yaml', service, createGroup: true });
 * console.log(plan.report.counts.create);                  // { planned: 38 }
 * const run = await runSync({ pipelinePath: 'pipelines/demo.yaml', service, createGroup: true });
 * console.log(run.exitCode, run.written.files.html);       // 0, the admin report
 * await emulator.close();
 * ```
 */
import type { CustomFieldsListing } from './client/schemas.js';
import type { ResolvedPipeline } from './config/load.js';
import type { EmulatorOptions, RunningEmulator } from './emulator/server.js';
import type { RunOptions, RunResult } from './sync/options.js';
import type { ValidatePipelineOptions, ValidationResult } from './sync/validate.js';

// ---- pipelines
export { loadPipeline } from './config/load.js';
export type { ResolvedPipeline } from './config/load.js';
export type { PipelineFile } from './config/pipeline.js';
export type { MappingFile } from './mapping/schema.js';

// ---- runs
export type { RunOptions, RunResult } from './sync/options.js';
export type { ValidatePipelineOptions, ValidationResult } from './sync/validate.js';
export type { RunReport, RecordEntry, FieldChange, ReportedGuard as GuardResult, PlanAction, RecordOutcome } from './report/types.js';
export type { Plan, PlanItem } from './plan/types.js';
export { EXIT, UserFacingError } from './errors/user-facing-error.js';
export type { ExitCode } from './errors/user-facing-error.js';

/**
 * Runs a pipeline end to end (`rostersync sync`): read the roster, map it, plan against the
 * state's inventory, run the guards, apply through the rate-limited writer, journal every outcome
 * and write the report (JSON, Markdown, HTML, rejected.csv). Never throws for a run that started:
 * the outcome is in `report.outcome` and `exitCode` (the CLI's exit codes).
 *
 * @example
 * ```ts
 * const { exitCode, report } = await runSync({ pipelinePath: 'pipelines/reviewers.yaml', service: { baseUrl, apiKey } });
 * ```
 */
export async function runSync(options: RunOptions): Promise<RunResult> {
  return (await import('./sync/run-sync.js')).runSync(options);
}

/**
 * Everything a sync does before its first write (`rostersync plan`): a dry run through the same
 * code path, every lookup, validation and guard included. `savePlanTo` saves the plan for
 * {@link applyPlan}. The field-by-field changes are in `report.records[].changes` (a run of more
 * than 10,000 records lists the first ones and the failures there; `written.files.records`, the
 * report's records.jsonl, holds every one).
 */
export async function planSync(options: Omit<RunOptions, 'dryRun'>): Promise<RunResult> {
  return runSync({ ...options, dryRun: true });
}

/**
 * Applies a plan saved by `planSync({ savePlanTo })` (`rostersync apply`). Refused when the
 * pipeline, mapping, source, inventory, service or group changed since the plan was made.
 */
export async function applyPlan(planPath: string, options: Omit<RunOptions, 'pipelinePath' | 'refresh' | 'dryRun'>): Promise<RunResult> {
  return (await import('./sync/apply-saved.js')).applySavedPlan(planPath, options);
}

/**
 * Reads and maps a pipeline's roster without touching the service's records
 * (`rostersync validate`). `customFields` is the organization's listing: from
 * `client.listCustomFields()`, or a file saved by `rostersync fields --json`.
 */
export async function validatePipeline(pipeline: ResolvedPipeline, options: ValidatePipelineOptions & { customFields: CustomFieldsListing }): Promise<ValidationResult> {
  return (await import('./sync/validate.js')).validatePipeline(pipeline, options);
}

// ---- the service
export * from './client/index.js';

/**
 * Starts the local emulator of the service (`rostersync emulator`) on 127.0.0.1, by default on a
 * free port with the built-in demo organization (API key `demo-key-0123456789`). It can impose
 * rate limits, faults and latency; `close()` stops it.
 *
 * @example
 * ```ts
 * const emulator = await startEmulator({ rps: 5, faultRate: 0.1, seed: 7 });
 * // ... point SERVICE_BASE_URL at emulator.url ...
 * await emulator.close();
 * ```
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  return (await import('./emulator/server.js')).startEmulator(options);
}
export type { EmulatorOptions, RunningEmulator } from './emulator/server.js';
