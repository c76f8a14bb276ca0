/**
 * Unfinished writes that count as missing records (pure). A create or update the service may
 * have performed without this pipeline learning of it (a kill after the call, an outage, a fault
 * after the handler ran) is not in the inventory. If its row has since left the roster, the
 * record may still exist: count it as gone from the roster like an owned one, so mirror mode
 * deletes it (a 404 means it never existed) and upsert mode lists it as an orphan. A definite
 * refusal (4xx) wrote nothing: such an id is left alone, as the group may hold a record of that
 * id that this pipeline never owned.
 */
import { mayHaveWritten, type UnfinishedWrite } from '../state/backend.js';

export function unfinishedAsMissing(
  unfinished: ReadonlyMap<string, UnfinishedWrite>,
  record: { inRoster: (clientId: string) => boolean; keptAsIs: (clientId: string) => boolean; owned: (clientId: string) => boolean },
): string[] {
  const missing: string[] = [];
  for (const [clientId, write] of unfinished) {
    if (write.action === 'delete' || !mayHaveWritten(write)) continue;
    if (!record.inRoster(clientId) && !record.keptAsIs(clientId) && !record.owned(clientId)) missing.push(clientId);
  }
  return missing;
}
