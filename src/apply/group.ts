/**
 * The target group: configured, remembered, or created now. Part of apply because creating a
 * group is a write to the service, and apply is the only module that writes.
 *
 * Creation is not idempotent (shared/design.md decision 3): the intent is recorded before the
 * call and the id right after, and an ambiguous failure stops the run instead of risking a
 * second group.
 */
import type { CallOptions, ServiceClient } from '../client/client.js';
import { AmbiguousGroupCreationError } from '../client/errors.js';
import type { TargetConfig } from '../config/pipeline.js';
import { EXIT, UserFacingError } from '../errors.js';
import type { StateBackend } from '../state/backend.js';

/** The one call group creation needs; the service client implements it. */
export type GroupCreator = Pick<ServiceClient, 'createGroup'>;

export interface EnsureGroupInput {
  /** The group id the plan was made for; null when the group does not exist yet. */
  groupId: number | null;
  target: TargetConfig;
  /** The pipeline file, quoted in the hint of `rostersync state set-group`. */
  pipelineFile: string;
  store: StateBackend;
  creator: GroupCreator;
  signal?: AbortSignal;
}

/** Returns the group id, and a note for the report when the group was created now. */
export async function ensureGroup(input: EnsureGroupInput): Promise<{ groupId: number; note?: string }> {
  const { store, target } = input;
  if (input.groupId !== null) {
    if (store.groupId() === null) store.setGroupId(input.groupId);
    return { groupId: input.groupId };
  }
  if (!('group' in target)) throw new Error('unreachable: a target without group_id must name a group');
  const setGroupHint = `Look for the group "${target.group.name}" in the service's UI. If it exists, record its id with \`rostersync state set-group ${input.pipelineFile} <id>\`; if it does not, clear the intent with \`rostersync state set-group ${input.pipelineFile} --clear\` and run again.`;
  const intent = store.groupIntent();
  if (intent) {
    throw new UserFacingError(`an earlier run started creating group "${intent.name}" at ${intent.at} and never learned whether it was created.`, { hint: setGroupHint });
  }
  store.recordGroupIntent(target.group.name);
  try {
    const callOptions: CallOptions = input.signal ? { signal: input.signal } : {};
    const created = await input.creator.createGroup(
      { group_name: target.group.name, owner_team: target.group.owner_team, editor_teams: target.group.editor_teams, viewer_teams: target.group.viewer_teams },
      callOptions,
    );
    store.setGroupId(created.authors_group_id);
    return { groupId: created.authors_group_id, note: `created authors group "${target.group.name}" with id ${created.authors_group_id}.` };
  } catch (error) {
    if (error instanceof AmbiguousGroupCreationError) {
      throw new UserFacingError(error.message, { hint: setGroupHint, exitCode: EXIT.unavailable, cause: error });
    }
    // A clear refusal (unknown team, plan feature missing): no group exists, forget the intent.
    store.clearGroupIntent();
    throw error;
  }
}
