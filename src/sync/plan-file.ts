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
import type { Plan } from '../plan/types.js';
import type { RunReport } from '../report/types.js';
import type { RosterSummary } from '../mapping/roster.js';

export const PLAN_FILE_VERSION = 1;

export interface PlanBindings {
  pipelineFile: string;
  pipelineSha256: string;
  mappingSha256: string;
  sourceSha256: string;
  stateSerial: number;
  baseUrl: string;
  groupId: number | null;
}

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

const fieldValue = z.union([z.string(), z.number(), z.array(z.string()), z.null()]);
const provenance = z.strictObject({ file: z.string(), sheet: z.string().optional(), row: z.number().int() });
const fieldChange = z.strictObject({
  field: z.string(),
  label: z.string(),
  before: fieldValue.optional(),
  after: fieldValue.optional(),
  remote: fieldValue.optional(),
});
const planItem = z.strictObject({
  clientId: z.string().min(1),
  action: z.enum(['create', 'update', 'delete']),
  reason: z.enum(['new', 'changed', 'retry_failed', 'drift', 'remote_deleted', 'gone_from_roster', 'client_id_changed']),
  body: z.record(z.string(), fieldValue).optional(),
  replace: z.boolean().optional(),
  desired: z.strictObject({ fieldsJson: z.string(), hash: z.string() }).optional(),
  changes: z.array(fieldChange),
  provenance: provenance.optional(),
  pairedWith: z.string().optional(),
});
const guard = z.strictObject({
  guard: z.enum(['max_deletes', 'source_drop', 'empty_source', 'unreadable_rows', 'inventory_missing']),
  tripped: z.boolean(),
  message: z.string(),
  allowWith: z.string().optional(),
});

export const planFileSchema = z.strictObject({
  kind: z.literal('rostersync-plan'),
  version: z.literal(PLAN_FILE_VERSION),
  createdAt: z.string(),
  pipeline: z.string(),
  bindings: z.strictObject({
    pipelineFile: z.string(),
    pipelineSha256: z.string(),
    mappingSha256: z.string(),
    sourceSha256: z.string(),
    stateSerial: z.number().int(),
    baseUrl: z.string(),
    groupId: z.number().int().nullable(),
  }),
  plan: z.strictObject({
    items: z.array(planItem),
    counts: z.strictObject({ create: z.number().int(), update: z.number().int(), delete: z.number().int(), noop: z.number().int() }),
    orphans: z.array(z.string()),
    stateRepairs: z.array(z.strictObject({ clientId: z.string(), fieldsJson: z.string(), hash: z.string() })),
    guards: z.array(guard),
    refused: z.boolean(),
    estimate: z.strictObject({ calls: z.number(), rps: z.number(), seconds: z.number(), text: z.string() }),
    notes: z.array(z.string()),
  }),
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

export async function savePlanFile(path: string, content: { pipeline: string; bindings: PlanBindings; plan: Plan; roster: RosterSummary; source: RunReport['source']; now: number }): Promise<void> {
  const body: Omit<PlanFile, 'digest'> = {
    kind: 'rostersync-plan',
    version: PLAN_FILE_VERSION,
    createdAt: new Date(content.now).toISOString(),
    pipeline: content.pipeline,
    bindings: content.bindings,
    plan: content.plan as PlanFile['plan'],
    input: {
      rowsRead: content.roster.counts.rowsRead,
      valid: content.roster.counts.valid,
      rejected: content.roster.counts.rejected,
      filtered: content.roster.counts.filtered,
      duplicates: content.roster.duplicateClientIds.size,
    },
    source: content.source,
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
