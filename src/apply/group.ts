/**
 * The target group: configured, remembered, or created now. Part of apply because creating a
 * group is a write to the service, and apply is the only module that writes.
 *
 * Creation is not idempotent: the intent is recorded before the
 * call and the id right after, and an ambiguous failure stops the run instead of risking a
 * second group.
 */
import type { CallOptions, ServiceClient } from '../client/client.js';
import { AmbiguousGroupCreationError } from '../client/errors.js';
import type { ResolvedPipeline } from '../config/load.js';
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';
import type { StateBackend } from '../state/backend.js';
import { bindState } from '../state/binding.js';

/** The one call group creation needs; the service client implements it. */
export type GroupCreator = Pick<ServiceClient, 'createGroup'>;

export interface EnsureGroupInput {
  /** The group id the plan was made for; null when the group does not exist yet. */
  groupId: number | null;
  pipeline: ResolvedPipeline;
  /** The service the run writes to: the state is bound to it with the group. */
  baseUrl: string;
  /** `--create-group`: an explicit first run may create the group the pipeline names. */
  createGroup?: boolean;
  store: StateBackend;
  creator: GroupCreator;
  signal?: AbortSignal;
}

/**
 * Returns the group id, and notes for the report (the group created now and how to pin it; owned
 * records another pipeline claims). Binds the state to the service and the group.
 */
export async function ensureGroup(input: EnsureGroupInput): Promise<{ groupId: number; notes: string[] }> {
  const created = await createdOrKnown(input);
  const conflicts = bindState(input.store, input.pipeline, { baseUrl: input.baseUrl, groupId: created.groupId });
  const notes = created.note ? [created.note] : [];
  if (conflicts.size > 0) {
    notes.push(`${conflicts.size} owned records are also claimed by another pipeline sharing this state (${[...conflicts].slice(0, 10).map(([id, owner]) => `${id} by "${owner}"`).join(', ')}): this pipeline never writes or deletes them while that claim stands.`);
  }
  return { groupId: created.groupId, notes };
}

async function createdOrKnown(input: EnsureGroupInput): Promise<{ groupId: number; note?: string }> {
  const { store } = input;
  const target = input.pipeline.config.target;
  const pipelineFile = input.pipeline.file;
  if (input.groupId !== null) {
    // A state made before group names were kept learns it while the pipeline still names the group.
    if ('group' in target && store.identity().groupName === null) store.setGroupName(target.group.name);
    return { groupId: input.groupId };
  }
  if (!('group' in target)) throw new Error('unreachable: a target without group_id must name a group');
  const setGroupHint = `Look for the group "${target.group.name}" in the service's UI. If it exists, record its id with \`rostersync state set-group ${pipelineFile} <id>\`; if it does not, clear the intent with \`rostersync state set-group ${pipelineFile} --clear\` and run again.`;
  const intent = store.groupIntent();
  if (intent) {
    throw new UserFacingError(`an earlier run started creating group "${intent.name}" at ${intent.at} and never learned whether it was created.`, { hint: setGroupHint });
  }
  if (!input.createGroup) {
    // Checked before planning too (state/binding.ts); here as the last line of defence.
    throw new UserFacingError(`pipeline "${input.pipeline.name}" names the group "${target.group.name}" but its state knows no group id; it is created only on an explicit first run.`, {
      hint: 'Run with --create-group on the first run, or pin the id of the existing group (target: { group_id: <id> }).',
    });
  }
  store.recordGroupIntent(target.group.name);
  try {
    const callOptions: CallOptions = input.signal ? { signal: input.signal } : {};
    const created = await input.creator.createGroup(
      { group_name: target.group.name, owner_team: target.group.owner_team, editor_teams: target.group.editor_teams, viewer_teams: target.group.viewer_teams },
      callOptions,
    );
    store.setGroupId(created.authors_group_id, { createdHere: true, name: target.group.name });
    return {
      groupId: created.authors_group_id,
      note: `created authors group "${target.group.name}" with id ${created.authors_group_id}. Pin it in ${pipelineFile} (target: { group_id: ${created.authors_group_id} }) so that a lost state can never create a second group.`,
    };
  } catch (error) {
    if (error instanceof AmbiguousGroupCreationError) {
      throw new UserFacingError(error.message, { hint: setGroupHint, exitCode: EXIT.unavailable, cause: error });
    }
    // A clear refusal (unknown team, plan feature missing): no group exists, forget the intent.
    store.clearGroupIntent();
    throw error;
  }
}
