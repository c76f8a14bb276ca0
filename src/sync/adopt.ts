/**
 * `rostersync state import`: adopts records that already exist in the group, so the pipeline
 * owns them (and may later update or, in mirror mode, delete them). Each client_id is fetched
 * with GET; the remote values of the managed fields become the last-applied state, so the next
 * plan sends exactly the differences between the roster and the service.
 */
import type { ServiceClient } from '../client/client.js';
import { NotFoundError } from '../client/errors.js';
import { compileMapping } from '../mapping/compile.js';
import type { ResolvedPipeline } from '../config/load.js';
import { canonicalJson, hashJson, projectFields } from '../plan/canonical.js';
import { bindState, checkBinding } from '../state/binding.js';
import { resolveGroupId } from '../state/group-id.js';
import type { StateBackend } from '../state/backend.js';
import { UserFacingError } from '../errors.js';

export interface AdoptResult {
  adopted: string[];
  notFound: string[];
  /** client_ids another pipeline sharing the state owns: never adopted (one owner per record). */
  claimedElsewhere: Map<string, string>;
}

export async function adoptRecords(input: { pipeline: ResolvedPipeline; store: StateBackend; client: ServiceClient; baseUrl: string; clientIds: string[]; runId: string }): Promise<AdoptResult> {
  const { pipeline, store, client } = input;
  const groupId = resolveGroupId(pipeline, store);
  if (groupId === null) {
    throw new UserFacingError(`pipeline "${pipeline.name}" has no group yet: there is nothing to import from.`, {
      hint: 'Set target.group_id in the pipeline, or record the id with `rostersync state set-group`.',
    });
  }
  const compiled = compileMapping(pipeline.mapping, await client.listCustomFields(), { mappingFile: pipeline.mappingFile });
  const result: AdoptResult = { adopted: [], notFound: [], claimedElsewhere: new Map() };
  // A state bound to another service or group is not adopted into (state/binding.ts).
  checkBinding(store, pipeline, { baseUrl: input.baseUrl });
  bindState(store, pipeline, { baseUrl: input.baseUrl, groupId });
  result.claimedElsewhere = store.claim({ baseUrl: input.baseUrl, groupId }, input.clientIds);
  for (const clientId of input.clientIds) {
    if (result.claimedElsewhere.has(clientId)) continue;
    let remote: object;
    try {
      remote = await client.getAuthor(groupId, clientId);
    } catch (error) {
      if (error instanceof NotFoundError) {
        store.releaseClaims({ baseUrl: input.baseUrl, groupId }, [clientId]);
        result.notFound.push(clientId);
        continue;
      }
      throw error;
    }
    const fieldsJson = canonicalJson(projectFields(remote, compiled.managedFields, compiled.setFields));
    store.adopt({ clientId, fieldsJson, hash: hashJson(fieldsJson), runId: input.runId });
    result.adopted.push(clientId);
  }
  return result;
}
