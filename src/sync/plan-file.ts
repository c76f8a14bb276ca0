/**
 * Saved plans (`rostersync plan --out plan.json`, then `rostersync apply plan.json`).
 * Like Terraform's saved plans, the file records what it was computed against, and apply
 * refuses it when any of that changed, naming the binding.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { ResolvedPipeline } from '../config/load.js';
import { EXIT, UserFacingError } from '../errors.js';
import { writeFileAtomic } from '../report/write.js';
import { planSchema } from '../plan/types.js';
import type { PreparedRun } from './run-plan.js';

/** 2: the plan holds no display text; option labels travel beside it. */
export const PLAN_FILE_VERSION = 2;

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
  plan: planSchema,
  /** Option labels by option api_id, so the report of `apply` shows labels as the plan's did. */
  optionLabels: z.record(z.string(), z.string()),
  /** The input side of the report, so `apply` can report rejected rows and counts. */
  input: z.strictObject({ rowsRead: z.number(), valid: z.number(), rejected: z.number(), filtered: z.number(), duplicates: z.number() }),
  source: z.strictObject({ file: z.string(), sha256: z.string(), format: z.string(), sheet: z.string().optional() }),
  /** sha256 of everything above, so a plan edited after review is refused rather than applied. */
  digest: z.string(),
});
export type PlanFile = z.infer<typeof planFileSchema>;

/** The digest of a plan file's content: every key but `digest`, as JSON with sorted keys. */
export function planDigest(file: Omit<PlanFile, 'digest'> & { digest?: string }): string {
  const { digest: _ignored, ...content } = file;
  const sortedKeys = (_key: string, value: unknown): unknown =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value;
  return createHash('sha256').update(JSON.stringify(content, sortedKeys)).digest('hex');
}

export async function savePlanFile(path: string, content: { bindings: PlanBindings; prepared: Pick<PreparedRun, 'pipeline' | 'plan' | 'optionLabels' | 'roster' | 'source'>; now: number }): Promise<void> {
  const { prepared } = content;
  const body: Omit<PlanFile, 'digest'> = {
    kind: 'rostersync-plan',
    version: PLAN_FILE_VERSION,
    createdAt: new Date(content.now).toISOString(),
    pipeline: prepared.pipeline.name,
    bindings: content.bindings,
    plan: prepared.plan,
    optionLabels: Object.fromEntries(prepared.optionLabels ?? []),
    input: {
      rowsRead: prepared.roster.counts.rowsRead,
      valid: prepared.roster.counts.valid,
      rejected: prepared.roster.counts.rejected,
      filtered: prepared.roster.counts.filtered,
      duplicates: prepared.roster.duplicateClientIds.size,
    },
    source: prepared.source,
  };
  const file: PlanFile = { ...body, digest: planDigest(body) };
  // Plans carry roster values (names, emails): owner-only, like reports.
  await writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`);
}

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
  if (planDigest(result.data) !== result.data.digest) {
    throw new UserFacingError(`${path}: the plan was changed after \`rostersync plan\` wrote it (its digest does not match its content).`, {
      hint: 'Plan files are not meant to be edited by hand. Make the plan again with `rostersync plan <pipeline> --out plan.json`.',
    });
  }
  return result.data;
}
