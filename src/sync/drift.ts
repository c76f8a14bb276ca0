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
 *   before any write, with the recovery steps (docs/state-and-recovery.md, "When the group was deleted").
 *
 * Besides the random sample, a rotating window (drift-window.ts) reads back ceil(owned /
 * `policy.drift_cycle`) records a run, so every owned record is read back within that many runs.
 *
 * Cost: one GET per record read back, at the pipeline's rate: `policy.drift_sample` (5 by default)
 * plus ceil(owned / `policy.drift_cycle`) (30 runs by default: 34 calls for 1,000 owned records,
 * 1,667 for 50,000); picking both walks the inventory's ids once.
 */
import type { CallOptions, ServiceClient } from '../client/client.js';
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';
import type { RosterIds } from '../mapping/roster.js';
import { canonicalJson, hashJson, sameValue } from '../plan/canonical.js';
import type { ClassifiedRecord } from '../plan/classify.js';
import type { Fields } from '../plan/types.js';
import type { DriftWindowReport } from '../report/types.js';
import type { StateBackend } from '../state/backend.js';
import { DriftWindowPicker, readDriftWindow, windowShare, type DriftWindowState } from './drift-window.js';
import { fetchRemote } from './remote-records.js';

export interface DriftFound {
  /** Owned records read back: the window's and the sample's (a record in both is read once). */
  sampled: number;
  calls: number;
  deleted: string[];
  changed: string[];
  /** Sampled records that drifted, as the inventory holds them, to plan again against `remote`. */
  recheck: ClassifiedRecord[];
  remote: Map<string, Fields | null>;
  /** The rotating window, when `policy.drift_cycle` is set: what it read, and where it stands. */
  window?: DriftWindowReport;
  /** Where the next run's window starts: saved once this run's writes were all attempted. */
  nextWindow?: DriftWindowState;
}

export interface DriftPickInput {
  store: StateBackend;
  ownedCount: number;
  sampleSize: number;
  /** `policy.drift_cycle`: 0 turns the window off. */
  cycle: number;
  /** The roster's ids with their first row: only records still in the roster are read back. */
  rosterIds: RosterIds;
  /** Records the plan does not take as unchanged (created, changed, left alone): not read back. */
  notUnchanged: ReadonlySet<string>;
  random: () => number;
  now: () => number;
}

export interface DriftPick {
  /** The client_ids to read back: the window's, then the sample's. */
  clientIds: string[];
  window?: DriftWindowReport;
  nextWindow?: DriftWindowState;
}

/**
 * The records this run reads back, chosen in one pass over the inventory's ids: the window's
 * (drift-window.ts) and a random sample of the other unchanged ones. A dry run or a plan picks too,
 * to count the calls a real run would make in its estimate.
 */
export function pickDriftReads(input: DriftPickInput): DriftPick {
  const readable = (clientId: string) => input.rosterIds.has(clientId) && !input.notUnchanged.has(clientId);
  const state = readDriftWindow(input.store);
  const picker = input.cycle > 0 ? new DriftWindowPicker(state, windowShare(input.ownedCount, input.cycle)) : undefined;
  // One pass: every owned id goes past the window, the readable ones on to the sample.
  const readableIds = function* () {
    for (const clientId of input.store.ownedIds()) {
      picker?.add(clientId);
      if (readable(clientId)) yield clientId;
    }
  };
  const sample = reservoir(readableIds(), input.sampleSize, input.random);
  if (!picker) return { clientIds: sample };
  const nowIso = new Date(input.now()).toISOString();
  const chosen = picker.finish(nowIso);
  const windowReads = chosen.ids.filter(readable);
  const inWindow = new Set(windowReads);
  return {
    clientIds: [...windowReads, ...sample.filter((clientId) => !inWindow.has(clientId))],
    window: {
      read: windowReads.length,
      walked: chosen.ids.length,
      owned: chosen.owned,
      cycle: input.cycle,
      passWalked: chosen.next.walked,
      passStartedAt: chosen.next.passStartedAt ?? nowIso,
      lastFullPassAt: chosen.next.lastFullPassAt,
    },
    nextWindow: chosen.next,
  };
}

export interface DriftCheckInput extends DriftPickInput {
  client: ServiceClient;
  groupId: number;
  managedFields: string[];
  setFields: ReadonlySet<string>;
  sourceFile: string;
  call: CallOptions;
}

export async function checkDrift(input: DriftCheckInput): Promise<DriftFound> {
  const picked = pickDriftReads(input);
  const sample = picked.clientIds;
  const applied = input.store.lastApplied(sample);
  const remote = await fetchRemote({ client: input.client, groupId: input.groupId, managedFields: input.managedFields, setFields: input.setFields, clientIds: sample, call: input.call, concurrency: 4 });
  const found: DriftFound = {
    sampled: sample.length,
    calls: sample.length,
    deleted: [],
    changed: [],
    recheck: [],
    remote: new Map(),
    ...(picked.window ? { window: picked.window } : {}),
    ...(picked.nextWindow ? { nextWindow: picked.nextWindow } : {}),
  };
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

  constructor(
    readonly groupId: number,
    sampled: number,
  ) {
    super(
      `authors group ${groupId} looks deleted in the service: the drift check read back ${sampled === 1 ? 'the one owned record it sampled' : `${sampled} owned records`}, and the service answered 404 for ${sampled === 1 ? 'it' : 'every one'}. Nothing was written.`,
      {
        hint: `If the group was deleted, create a new one (rostersync group create), then \`rostersync state set-group <pipeline> <new id> --release-owned\`, pin the new id in the pipeline file, and sync. If the group still exists but its records were deleted, \`rostersync sync <pipeline> --refresh=all\` recreates them. See docs/state-and-recovery.md, "When the group was deleted".`,
        exitCode: EXIT.usage,
      },
    );
  }
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
