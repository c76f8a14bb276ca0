/**
 * Saved plans (`rostersync plan --out plan.json`, then `rostersync apply plan.json`).
 * Like Terraform's saved plans, the file records what it was computed against, and apply
 * refuses it when any of that changed, naming the binding. Its digest is an HMAC keyed with a
 * secret kept in the pipeline's state, so a plan edited outside rostersync cannot be re-signed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { ResolvedPipeline } from '../config/load.js';
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';
import { writeFileAtomic } from '../report/write.js';
import { materialized, planItems, planSchema, type Plan } from '../plan/types.js';
import type { RunOptions } from './options.js';
import type { PreparedRun } from './run-plan.js';

/**
 * 2: the plan holds no display text; option labels travel beside it.
 * 3: the digest is an HMAC keyed with the state's secret; the run's guard flags travel with the plan.
 * 4: a state repair carries its row key; the fast path's other row keys are not saved (apply
 *    plans again and gathers its own, src/plan/row-key-repairs.ts).
 * 5: a full POST is its own action (`replace`, counted in `counts.replace`); guards and notes carry
 *    a code and figures (`found`, `notes[].code`) where they carried sentences. A version 4 file
 *    is refused (made again), never read as this one.
 */
export const PLAN_FILE_VERSION = 5;

/** The flags the plan was made with: `apply` re-runs every guard with exactly these. */
const planOptionsSchema = z.strictObject({
  refresh: z.union([z.literal(false), z.literal('planned'), z.literal('all')]),
  allowDeletes: z.number().optional(),
  allowSourceDrop: z.boolean().optional(),
  allowEmptySource: z.boolean().optional(),
  allowIdentityChanges: z.number().optional(),
  allowRejects: z.number().optional(),
  createGroup: z.boolean().optional(),
});
export type PlanOptions = z.infer<typeof planOptionsSchema>;

export function planOptionsOf(options: Pick<RunOptions, 'refresh' | 'allowDeletes' | 'allowSourceDrop' | 'allowEmptySource' | 'allowIdentityChanges' | 'allowRejects' | 'createGroup'>): PlanOptions {
  return {
    refresh: options.refresh ?? false,
    ...(options.allowDeletes !== undefined ? { allowDeletes: options.allowDeletes } : {}),
    ...(options.allowSourceDrop ? { allowSourceDrop: true } : {}),
    ...(options.allowEmptySource ? { allowEmptySource: true } : {}),
    ...(options.allowIdentityChanges !== undefined ? { allowIdentityChanges: options.allowIdentityChanges } : {}),
    ...(options.allowRejects !== undefined ? { allowRejects: options.allowRejects } : {}),
    ...(options.createGroup ? { createGroup: true } : {}),
  };
}

const planBindingsSchema = z.strictObject({
  pipelineFile: z.string(),
  pipelineSha256: z.string(),
  mappingSha256: z.string(),
  sourceSha256: z.string(),
  stateSerial: z.number().int(),
  baseUrl: z.string(),
  groupId: z.number().int().nullable(),
});
export type PlanBindings = z.infer<typeof planBindingsSchema>;

export function planBindings(input: { pipeline: ResolvedPipeline; sourceSha256: string; stateSerial: number; baseUrl: string; groupId: number | null }): PlanBindings {
  return {
    pipelineFile: input.pipeline.file,
    pipelineSha256: input.pipeline.hash,
    mappingSha256: input.pipeline.mappingHash,
    sourceSha256: input.sourceSha256,
    stateSerial: input.stateSerial,
    baseUrl: input.baseUrl,
    groupId: input.groupId,
  };
}

const BINDING_NAMES: Record<keyof PlanBindings, string> = {
  pipelineFile: 'the pipeline file path',
  pipelineSha256: 'the pipeline file content',
  mappingSha256: 'the mapping file content',
  sourceSha256: 'the source file content',
  stateSerial: 'the state inventory (another run wrote to it)',
  baseUrl: 'the service base URL',
  groupId: 'the target group',
};

/** Names every binding that differs between a saved plan and now; empty when the plan still holds. */
export function staleBindings(saved: PlanBindings, current: PlanBindings): string[] {
  return (Object.keys(BINDING_NAMES) as (keyof PlanBindings)[])
    .filter((key) => saved[key] !== current[key])
    .map((key) => `${BINDING_NAMES[key]} changed (${String(saved[key])} → ${String(current[key])})`);
}

export const planFileSchema = z.strictObject({
  kind: z.literal('rostersync-plan'),
  version: z.literal(PLAN_FILE_VERSION),
  createdAt: z.string(),
  pipeline: z.string(),
  bindings: planBindingsSchema,
  options: planOptionsSchema,
  plan: planSchema,
  /** Option labels by option api_id, so the report of `apply` shows labels as the plan's did. */
  optionLabels: z.record(z.string(), z.string()),
  /** The input side of the report, so `apply` can report rejected rows and counts. */
  input: z.strictObject({ rowsRead: z.number(), valid: z.number(), rejected: z.number(), filtered: z.number(), duplicates: z.number() }),
  source: z.strictObject({ file: z.string(), sha256: z.string(), format: z.string(), sheet: z.string().optional() }),
  /** A plan saved by `rostersync revert --out`: the run it undoes and the per-record choices (src/sync/revert.ts). */
  revert: z.strictObject({ runId: z.string(), forceRecords: z.array(z.string()), skipRecords: z.array(z.string()) }).optional(),
  /**
   * HMAC-SHA256 of everything above, keyed with the pipeline state's plan secret: a plan edited
   * after review is refused rather than applied, and nobody without the state can re-sign it.
   */
  digest: z.string(),
});
export type PlanFile = z.infer<typeof planFileSchema>;

/** The digest of a plan file's content: every key but `digest`, as JSON with sorted keys, keyed with the state's secret. */
export function planDigest(file: Omit<PlanFile, 'digest'> & { digest?: string }, secret: string): string {
  const { digest: _ignored, ...content } = file;
  const sortedKeys = (_key: string, value: unknown): unknown =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value;
  return createHmac('sha256', secret).update(JSON.stringify(content, sortedKeys)).digest('hex');
}

/** Refuses a plan whose digest is not the one this state's secret gives its content. */
export function verifyPlanDigest(path: string, file: PlanFile, secret: string): void {
  const expected = Buffer.from(planDigest(file, secret), 'hex');
  const actual = Buffer.from(/^[0-9a-f]{64}$/.test(file.digest) ? file.digest : '', 'hex');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    throw new UserFacingError(`${path}: the plan was changed after \`rostersync plan\` wrote it, or was made with another state (its signature does not match).`, {
      hint: 'Plan files are not meant to be edited by hand. Make the plan again with `rostersync plan <pipeline> --out plan.json`, with the same state directory as the apply.',
    });
  }
}

/** Saves the plan a run prepared (`plan --out`, `revert --out`), bound to what it was computed against. */
export function savePreparedPlan(
  path: string,
  run: { prepared: PreparedRun; stateSerial: number; secret: string; baseUrl: string; options: PlanOptions; now: number; revert?: PlanFile['revert'] },
): Promise<void> {
  const { prepared } = run;
  return savePlanFile(path, {
    bindings: planBindings({ pipeline: prepared.pipeline, sourceSha256: prepared.source.sha256, stateSerial: run.stateSerial, baseUrl: run.baseUrl, groupId: prepared.groupId }),
    options: run.options,
    secret: run.secret,
    prepared,
    now: run.now,
    ...(run.revert ? { revert: run.revert } : {}),
  });
}

export async function savePlanFile(
  path: string,
  content: { bindings: PlanBindings; options: PlanOptions; secret: string; prepared: Pick<PreparedRun, 'pipeline' | 'plan' | 'optionLabels' | 'roster' | 'source'>; now: number; revert?: PlanFile['revert'] },
): Promise<void> {
  const { prepared } = content;
  const body: Omit<PlanFile, 'digest'> = {
    kind: 'rostersync-plan',
    version: PLAN_FILE_VERSION,
    createdAt: new Date(content.now).toISOString(),
    pipeline: prepared.pipeline.name,
    bindings: content.bindings,
    options: content.options,
    // Every item in the file, the new records too: a saved plan is read whole to be reviewed and applied.
    plan: materialized(prepared.plan),
    optionLabels: Object.fromEntries(prepared.optionLabels ?? []),
    input: {
      rowsRead: prepared.roster.counts.rowsRead,
      valid: prepared.roster.counts.valid,
      rejected: prepared.roster.counts.rejected,
      filtered: prepared.roster.counts.filtered,
      duplicates: prepared.roster.duplicateClientIds.size,
    },
    source: prepared.source,
    ...(content.revert ? { revert: content.revert } : {}),
  };
  const file: PlanFile = { ...body, digest: planDigest(body, content.secret) };
  // Plans carry roster values (names, emails): owner-only, like reports.
  await writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`);
}

/** Reads and checks the shape of a plan file; its signature is checked with the state's secret (`verifyPlanDigest`). */
export async function readPlanFile(path: string): Promise<PlanFile> {
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new UserFacingError(`${path}: cannot read the plan file: ${(error as Error).message}`, {
      hint: 'Make a plan with `rostersync plan <pipeline> --out plan.json`.',
      exitCode: EXIT.usage,
    });
  }
  const version = (doc as { version?: unknown } | null)?.version;
  if (typeof doc === 'object' && doc !== null && version !== PLAN_FILE_VERSION) {
    throw new UserFacingError(`${path}: plan file version ${String(version)} is not supported (this rostersync reads version ${PLAN_FILE_VERSION}).`, {
      hint: 'Make the plan again with this version of rostersync.',
    });
  }
  const result = planFileSchema.safeParse(doc);
  if (!result.success) {
    const problems = result.error.issues.slice(0, 5).map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new UserFacingError(`${path}: not a valid rostersync plan (${problems.join('; ')}).`, {
      hint: 'Plan files are not meant to be edited by hand. Make the plan again with `rostersync plan <pipeline> --out plan.json`.',
    });
  }
  return result.data;
}

/** What `apply` compares: the writes themselves, not their display. */
function itemKey(item: PlanFile['plan']['items'][number]): string {
  return JSON.stringify([item.action, item.body ?? null, item.ifAbsent ?? false]);
}

/**
 * Every difference between a saved plan's writes and the plan made again now against the current
 * inventory and claims; empty when every saved action is still exactly what a run would do.
 */
export function planDifferences(saved: PlanFile['plan'], fresh: Plan): string[] {
  const now = new Map([...planItems(fresh)].map((item) => [item.clientId, item]));
  const differences: string[] = [];
  for (const item of saved.items) {
    const current = now.get(item.clientId);
    if (!current) differences.push(`${item.action} ${item.clientId} is no longer planned`);
    else if (itemKey(current) !== itemKey(item)) differences.push(`${item.action} ${item.clientId} would now be ${current.action} with other values`);
    now.delete(item.clientId);
  }
  for (const item of now.values()) differences.push(`${item.action} ${item.clientId} is planned now but not in the saved plan`);
  return differences;
}
