/** The custom-fields listing a run maps and labels with, read the same way by `sync`, `plan`, `apply` and `revert`. */
import type { ServiceClient } from '../client/client.js';
import type { CustomFieldsListing } from '../client/schemas.js';
import { loadFieldsFile } from '../config/fields-file.js';
import { resolve } from 'node:path';
import type { PlanRequest } from './run-request.js';

/** The custom-fields listing: the saved one (`--fields-file`), else the service's. */
export async function readFieldListing(client: ServiceClient, request: Pick<PlanRequest, 'fieldsFile' | 'cwd' | 'signal'>): Promise<CustomFieldsListing> {
  return request.fieldsFile ? loadFieldsFile(resolve(request.cwd, request.fieldsFile)) : await client.listCustomFields(request.signal ? { signal: request.signal } : {});
}
