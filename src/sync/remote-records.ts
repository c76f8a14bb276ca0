import pLimit from 'p-limit';
import type { CallOptions, ServiceClient } from '../client/client.js';
import { NotFoundError } from '../client/errors.js';
import { projectFields } from '../plan/canonical.js';
import type { Fields } from '../plan/types.js';

/**
 * Remote records (--refresh, the drift check's sample) projected on the managed fields; null for
 * a record the service does not have (404), so the plan recreates it.
 */
export async function fetchRemote(input: {
  client: ServiceClient;
  groupId: number;
  managedFields: string[];
  setFields: ReadonlySet<string>;
  clientIds: string[];
  call: CallOptions;
  /** GETs in flight at once. */
  concurrency: number;
}): Promise<Map<string, Fields | null>> {
  const limit = pLimit(input.concurrency);
  const remote = new Map<string, Fields | null>();
  await Promise.all(
    input.clientIds.map((clientId) =>
      limit(async () => {
        try {
          remote.set(clientId, projectFields(await input.client.getAuthor(input.groupId, clientId, input.call), input.managedFields, input.setFields));
        } catch (error) {
          if (error instanceof NotFoundError) remote.set(clientId, null);
          else throw error;
        }
      }),
    ),
  );
  return remote;
}
