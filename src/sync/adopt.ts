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
import type { StateBackend } from '../state/backend.js';
import { UserFacingError } from '../errors/user-facing-error.js';

export interface AdoptResult {
  adopted: string[];
  notFound: string[];
  /** client_ids another pipeline sharing the state owns: never adopted (one owner per record). */
  claimedElsewhere: Map<string, string>;
}

export async function adoptRecords(input: { pipeline: ResolvedPipeline; store: StateBackend; client: ServiceClient; baseUrl: string; clientIds: string[]; runId: string }): Promise<AdoptResult> {
  const { pipeline, store, client } = input;
  // A state bound to another service or group is not adopted into (state/binding.ts).
  const { groupId } = checkBinding(store, pipeline, { baseUrl: input.baseUrl });
  if (groupId === null) {
    throw new UserFacingError(`pipeline "${pipeline.name}" has no group yet: there is nothing to import from.`, {
      hint: 'Set target.group_id in the pipeline, or record the id with `rostersync state set-group`.',
    });
  }
  const compiled = compileMapping(pipeline.mapping, await client.listCustomFields(), { mappingFile: pipeline.mappingFile });
  const result: AdoptResult = { adopted: [], notFound: [], claimedElsewhere: new Map() };
  const target = { baseUrl: input.baseUrl, groupId };
  const owners = store.claimOwners(target, input.clientIds);
  // Everything is fetched first and written in one transaction: a failure half-way (the service
  // gone, the process stopped) leaves the state as it was, never half an import.
  const found: { clientId: string; fieldsJson: string }[] = [];
  for (const clientId of input.clientIds) {
    const owner = owners.get(clientId);
    if (owner !== undefined && owner !== pipeline.name) {
      result.claimedElsewhere.set(clientId, owner);
      continue;
    }
    try {
      const remote = await client.getAuthor(groupId, clientId);
      found.push({ clientId, fieldsJson: canonicalJson(projectFields(remote, compiled.managedFields, compiled.setFields)) });
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      result.notFound.push(clientId);
    }
  }
  store.transaction(() => {
    bindState(store, pipeline, target);
    // Claimed again inside the transaction: another pipeline may have claimed some meanwhile.
    const taken = store.claim(target, found.map((record) => record.clientId));
    for (const [clientId, owner] of taken) result.claimedElsewhere.set(clientId, owner);
    for (const { clientId, fieldsJson } of found) {
      if (taken.has(clientId)) continue;
      store.adopt({ clientId, fieldsJson, hash: hashJson(fieldsJson), runId: input.runId });
      result.adopted.push(clientId);
    }
  });
  return result;
}
