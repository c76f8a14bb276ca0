import pLimit from 'p-limit';
import type { CallOptions, ServiceClient } from '../client/client.js';
import { NotFoundError } from '../client/errors.js';
import { projectFields } from '../plan/canonical.js';
import type { Fields } from '../plan/types.js';

interface RemoteRead {
  client: ServiceClient;
  groupId: number;
  clientIds: string[];
  call: CallOptions;
  /** GETs in flight at once. */
  concurrency: number;
}

/**
 * Remote records (--refresh, the drift check's sample) projected on the managed fields; null for
 * a record the service does not have (404), so the plan recreates it.
 */
export function fetchRemote(input: RemoteRead & { managedFields: string[]; setFields: ReadonlySet<string> }): Promise<Map<string, Fields | null>> {
  return fetchEach(input, (record) => projectFields(record, input.managedFields, input.setFields));
}

/** Records as the service holds them, every field (`rostersync revert` judges them whole); null: absent (404). */
export function fetchHeld(input: RemoteRead): Promise<Map<string, Record<string, unknown> | null>> {
  return fetchEach(input, (record) => record as Record<string, unknown>);
}

/** One GET per client_id, `concurrency` at a time, each answer kept as `shape` makes it (as it comes: a million stay small). */
async function fetchEach<T>(input: RemoteRead, shape: (record: object) => T): Promise<Map<string, T | null>> {
  const limit = pLimit(input.concurrency);
  const remote = new Map<string, T | null>();
  await Promise.all(
    input.clientIds.map((clientId) =>
      limit(async () => {
        try {
          remote.set(clientId, shape(await input.client.getAuthor(input.groupId, clientId, input.call)));
        } catch (error) {
          if (error instanceof NotFoundError) remote.set(clientId, null);
          else throw error;
        }
      }),
    ),
  );
  return remote;
}
