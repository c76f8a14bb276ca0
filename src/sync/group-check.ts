/**
 * Does the run's group exist? Asked in every run, `plan` and `--dry-run` included, so they give
 * the real run's answer. The contract has no call that reads a group (docs/service-contract.md):
 * a record is read back (call 1), and a 200 proves the group. When the pipeline owns records there,
 * the drift check reads them (sync/drift.ts: all 404 means the group is gone). When it owns none,
 * a few of the roster's client_ids are read: all 404 proves nothing (a new group is empty, and an
 * unknown group answers 404 too), so the run says it could not confirm the group, with the
 * service's own words, and the first write settles it.
 */
import type { CallOptions, ServiceClient } from '../client/client.js';
import { NotFoundError } from '../client/errors.js';

/** Roster records read to look for the group: enough to find one already there, few enough to be cheap. */
export const GROUP_PROBE_SIZE = 3;

export async function groupCheckNote(input: { client: ServiceClient; groupId: number; clientIds: Iterable<string>; call: CallOptions; pipelineFile: string }): Promise<string | undefined> {
  const sample: string[] = [];
  for (const clientId of input.clientIds) {
    sample.push(clientId);
    if (sample.length >= GROUP_PROBE_SIZE) break;
  }
  if (sample.length === 0) return undefined;
  let answer = '';
  for (const clientId of sample) {
    try {
      await input.client.getAuthor(input.groupId, clientId, input.call);
      return undefined;
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      answer = error.message;
    }
  }
  return (
    `group ${input.groupId} could not be confirmed: this pipeline owns no record in it yet, and the service answered 404 for the ${sample.length === 1 ? 'roster record' : `${sample.length} roster records`} read back (${answer}). ` +
    `If the group is new and empty, that is expected; if not, check target.group_id in ${input.pipelineFile}: a group the service does not know fails the first write, and nothing is written.`
  );
}
