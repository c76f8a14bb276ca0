/**
 * The target group id of a pipeline: `target.group_id` from the pipeline, else the id its state
 * remembers (a group this pipeline created), else null (the group is created on the first real run).
 */
import type { ResolvedPipeline } from '../config/load.js';
import { UserFacingError } from '../errors.js';
import type { StateBackend } from './backend.js';

export function resolveGroupId(pipeline: ResolvedPipeline, store: StateBackend): number | null {
  const configured = 'group_id' in pipeline.config.target ? pipeline.config.target.group_id : null;
  const remembered = store.groupId();
  if (configured !== null && remembered !== null && configured !== remembered) {
    throw new UserFacingError(`pipeline "${pipeline.name}" targets group ${configured}, but its state inventories group ${remembered}.`, {
      hint: 'A state belongs to one group. Use another state_dir for the new group, or `rostersync state set-group` if the group id really changed.',
    });
  }
  return configured ?? remembered;
}
