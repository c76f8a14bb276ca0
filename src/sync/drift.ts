/**
 * The drift check of every real run: a small random sample of owned records the plan takes as
 * unchanged is read back from the service and compared with the inventory. Normal runs never read
 * unchanged records, so without it a record deleted or edited in the service's UI, or a whole group
 * deleted, would stay unnoticed until a `--refresh=all`.
 *
 * - A sampled record deleted or changed in the service is planned again against its remote copy,
 *   exactly as `--refresh` plans it (plan/build.ts: `remote_deleted` recreates it, `drift` updates it).
 * - Every sampled record gone (404) means the group itself is most likely gone (the service answers
 *   404 for an unknown group as for an unknown record, docs/service-contract.md): the run stops
 *   before any write, with the recovery steps (README, "When the group was deleted").
 *
 * Cost: `policy.drift_sample` GET calls per run (5 by default), at the pipeline's rate; picking the
 * sample walks the inventory's ids once.
 */
import type { CallOptions, ServiceClient } from '../client/client.js';
import { EXIT, UserFacingError } from '../errors.js';
import type { RosterIds } from '../mapping/roster.js';
import { canonicalJson, hashJson, sameValue } from '../plan/canonical.js';
import type { ClassifiedRecord } from '../plan/classify.js';
import type { Fields } from '../plan/types.js';
import type { StateBackend } from '../state/backend.js';
import { fetchRemote } from './remote-records.js';

export interface DriftFound {
  sampled: number;
  calls: number;
  deleted: string[];
  changed: string[];
  /** Sampled records that drifted, as the inventory holds them, to plan again against `remote`. */
  recheck: ClassifiedRecord[];
  remote: Map<string, Fields | null>;
}

export interface DriftCheckInput {
  client: ServiceClient;
  store: StateBackend;
  groupId: number;
  sampleSize: number;
  /** The roster's ids with their first row: only records still in the roster are sampled. */
  rosterIds: RosterIds;
  /** Records the plan does not take as unchanged (created, changed, left alone): not sampled. */
  notUnchanged: ReadonlySet<string>;
  managedFields: string[];
  setFields: ReadonlySet<string>;
  sourceFile: string;
  random: () => number;
  call: CallOptions;
}

export async function checkDrift(input: DriftCheckInput): Promise<DriftFound> {
  const sample = reservoir(
    filter(input.store.ownedIds(), (clientId) => input.rosterIds.has(clientId) && !input.notUnchanged.has(clientId)),
    input.sampleSize,
    input.random,
  );
  const applied = input.store.lastApplied(sample);
  const remote = await fetchRemote({ client: input.client, groupId: input.groupId, managedFields: input.managedFields, setFields: input.setFields, clientIds: sample, call: input.call, concurrency: 4 });
  const found: DriftFound = { sampled: sample.length, calls: sample.length, deleted: [], changed: [], recheck: [], remote: new Map() };
  for (const clientId of sample) {
    const fields = applied.get(clientId);
    const there = remote.get(clientId);
    if (fields === undefined) continue;
    const json = canonicalJson(fields);
    if (there === null) found.deleted.push(clientId);
    // As the plan compares (plan/build.ts): a field differs unless sameValue says it does not.
    else if (there !== undefined && Object.keys(fields).some((field) => !sameValue(fields[field], there[field]))) found.changed.push(clientId);
    else continue;
    found.remote.set(clientId, there ?? null);
    // Unchanged means the roster maps to what the inventory holds: the inventory's fields are the desired record.
    found.recheck.push({ record: { clientId, fields, provenance: { file: input.sourceFile, row: input.rosterIds.get(clientId) ?? 0 } }, fieldsJson: json, hash: hashJson(json) });
  }
  if (found.sampled > 0 && found.deleted.length === found.sampled) throw new GroupGoneError(input.groupId, found.sampled);
  return found;
}

/** Every record read back was gone: the group was most likely deleted in the service. Nothing was written. */
export class GroupGoneError extends UserFacingError {
  override name = 'GroupGoneError';

  constructor(groupId: number, sampled: number) {
    super(
      `authors group ${groupId} looks deleted in the service: the drift check read back ${sampled === 1 ? 'the one owned record it sampled' : `${sampled} owned records`}, and the service answered 404 for ${sampled === 1 ? 'it' : 'every one'}. Nothing was written.`,
      {
        hint: `If the group was deleted, create a new one (rostersync group create), then \`rostersync state set-group <pipeline> <new id> --release-owned\`, pin the new id in the pipeline file, and sync. If the group still exists but its records were deleted, \`rostersync sync <pipeline> --refresh=all\` recreates them. See the README, "When the group was deleted".`,
        exitCode: EXIT.usage,
      },
    );
  }
}

function* filter<T>(items: Iterable<T>, keep: (item: T) => boolean): Iterable<T> {
  for (const item of items) if (keep(item)) yield item;
}

/** Algorithm R: a uniform sample of `size` items in one pass, whatever the count. */
function reservoir<T>(items: Iterable<T>, size: number, random: () => number): T[] {
  const kept: T[] = [];
  let seen = 0;
  for (const item of items) {
    seen += 1;
    if (kept.length < size) kept.push(item);
    else {
      const slot = Math.floor(random() * seen);
      if (slot < size) kept[slot] = item;
    }
  }
  return kept;
}
