/**
 * A state is bound to its identity: the service (base URL), the group and the pipeline.
 *
 * `checkBinding` runs before planning, in dry runs too: it refuses a run against another service
 * or group than the state's, a group creation that is not an explicit first run, and a second
 * pipeline on a group unless both declare the sharing. It only reads the state.
 * `bindState` runs in real runs once the group is known (apply/group.ts), and in `state import`
 * (sync/adopt.ts): it records the service, the group and this pipeline's registration on it, and
 * claims every owned record there.
 */
import type { ResolvedPipeline } from '../config/load.js';
import { EXIT, UserFacingError } from '../errors/user-facing-error.js';
import { identityMismatches, normalizeServiceUrl, type Target } from './identity.js';
import { sharingProblem } from './sharing.js';
import type { StateBackend as StateStore } from './backend.js';

/** State meta key: the last group a run found gone from the service (answered 404). */
export const GONE_GROUP_META = 'gone_group_id';

export interface BindingCheck {
  /** The group the run writes to; null when this run creates it (`--create-group`). */
  groupId: number | null;
  /**
   * Writes of client_ids not in the inventory must use create-if-absent: the group may hold
   * records this pipeline does not own. False only in a group this pipeline created and has
   * owned since (or is creating now).
   */
  createIfAbsent: boolean;
  /** Client_id prefixes this pipeline declared to share its group (null: it declared none). */
  sharedPrefixes: string[] | null;
  /** Other pipelines registered on the group: their claims must be looked up. */
  sharedWith: string[];
}

export function sharedPrefixesOf(pipeline: ResolvedPipeline): string[] | null {
  return pipeline.config.target.share?.client_id_prefixes ?? null;
}

export function checkBinding(store: StateStore, pipeline: ResolvedPipeline, run: { baseUrl: string; createGroup?: boolean }): BindingCheck {
  const target = pipeline.config.target;
  const configured = 'group_id' in target ? target.group_id : null;
  const bound = store.identity();
  const mismatches = identityMismatches(bound, { baseUrl: run.baseUrl, groupId: configured });
  if (mismatches.length > 0) {
    const owned = store.ownedCount();
    const boundText = `service ${bound.baseUrl ?? '(not bound yet)'}, group ${bound.groupId ?? '(none yet)'}`;
    const currentText = `service ${normalizeServiceUrl(run.baseUrl)}, group ${configured ?? bound.groupId ?? '(none yet)'}`;
    const rebind = `rostersync state rebind ${pipeline.file} --base-url ${normalizeServiceUrl(run.baseUrl)}${configured !== null ? ` --group-id ${configured}` : ''}${owned > 0 ? ' --release-owned' : ''}`;
    // The pipeline file still names a group a run found deleted, and the state was moved on
    // (`state set-group`): the file is what is out of date, never a reason to go back.
    const gone = store.getMeta(GONE_GROUP_META);
    if (configured !== null && bound.groupId !== null && gone === String(configured) && mismatches.every((m) => m.what === 'group')) {
      throw new UserFacingError(
        `pipeline "${pipeline.name}" names group ${configured} (target.group_id), which a run found deleted from the service; its state (${store.path}) now targets group ${bound.groupId}. Nothing was written.`,
        { hint: `Put \`group_id: ${bound.groupId}\` under target: in ${pipeline.file}.` },
      );
    }
    throw new UserFacingError(
      `the state of pipeline "${pipeline.name}" (${store.path}) is bound to ${boundText}, but this run targets ${currentText}: it does not reuse the state of another ${mismatches.map((m) => m.what).join(' and ')}.`,
      {
        hint: `If this pipeline really moved, rebind its state with \`${rebind}\`${owned > 0 ? ` (the ${owned} records it owns in group ${bound.groupId} stay there, untouched and no longer owned; records of the roster already in the new group are adopted, never overwritten)` : ''}. Otherwise point state_dir (or --state-dir) at the state of this target.`,
      },
    );
  }
  const groupId = configured ?? bound.groupId;
  if (groupId === null && 'group' in target && !run.createGroup && store.groupIntent() === null) {
    throw new UserFacingError(
      `pipeline "${pipeline.name}" names the group "${target.group.name}", but its state (${store.path}) knows no group id: either this is the first run, or the state was lost (deleted, the pipeline renamed, a fresh runner). Nothing was written.`,
      {
        hint: `First run: create the group explicitly with --create-group. If the group exists already, pin its id in the pipeline file (target: { group_id: <id> }) or record it with \`rostersync state set-group ${pipeline.file} <id>\`; the records already in it are then adopted, never overwritten.`,
      },
    );
  }
  const sharedPrefixes = sharedPrefixesOf(pipeline);
  let sharedWith: string[] = [];
  if (groupId !== null) {
    const registered = store.targetsOn({ baseUrl: run.baseUrl, groupId });
    const problem = sharingProblem(pipeline.name, sharedPrefixes, registered);
    if (problem) {
      throw new UserFacingError(`two pipelines on group ${groupId}: ${problem} A mirror run of one would delete the other's records.`, {
        hint: 'Give each pipeline its own group, or declare the sharing in both pipeline files with disjoint client_id prefixes, e.g. target: { group_id: 12, share: { client_id_prefixes: ["onc-"] } }.',
        exitCode: EXIT.usage,
      });
    }
    sharedWith = registered.filter((r) => r.pipeline !== pipeline.name).map((r) => r.pipeline);
  }
  const createdHere = bound.groupCreatedHere && bound.groupId !== null && bound.groupId === groupId;
  return { groupId, createIfAbsent: groupId !== null && !createdHere, sharedPrefixes, sharedWith };
}

/**
 * Binds the state to the run's target (real runs, once the group id is known). Returns the owned
 * records another pipeline claims on that target (a state shared by mistake): the caller reports them.
 */
export function bindState(store: StateStore, pipeline: ResolvedPipeline, target: Target): Map<string, string> {
  const bound = store.identity();
  if (bound.baseUrl === null) store.bindService(target.baseUrl);
  if (bound.groupId === null) store.setGroupId(target.groupId);
  store.registerTarget(target, sharedPrefixesOf(pipeline));
  // Claim the inventory once per target (a state made before claims existed, or just bound).
  const key = `${normalizeServiceUrl(target.baseUrl)} ${target.groupId}`;
  if (store.getMeta('claimed_target') === key) return new Map();
  const conflicts = store.claimOwned(target);
  store.setMeta('claimed_target', key);
  return conflicts;
}

/**
 * Moves a state to another service and/or group (`state rebind`, `state set-group`). The records
 * it owns stay where they are, untouched and no longer owned, so moving a state that owns records
 * needs `releaseOwned`: a typo in a group id must not move an inventory into another team's group.
 * Returns the sentence that reports what was done.
 */
export function retargetState(store: StateStore, to: { baseUrl?: string; groupId?: number }, options: { releaseOwned?: boolean } = {}): string {
  const bound = store.identity();
  const baseUrl = to.baseUrl !== undefined ? normalizeServiceUrl(to.baseUrl) : bound.baseUrl;
  const groupId = to.groupId ?? bound.groupId;
  const from = `service ${bound.baseUrl ?? '(not bound)'}, group ${bound.groupId ?? '(none)'}`;
  const toText = `service ${baseUrl ?? '(not bound)'}, group ${groupId ?? '(none)'}`;
  if (baseUrl === bound.baseUrl && groupId === bound.groupId) return `pipeline "${store.pipeline}" already targets ${toText}; nothing changed.`;
  const moving = (bound.baseUrl !== null && baseUrl !== bound.baseUrl) || (bound.groupId !== null && groupId !== bound.groupId);
  if (!moving) {
    // Binding what was not bound yet (a group id after an ambiguous creation, a first service).
    if (to.baseUrl !== undefined && bound.baseUrl === null) store.bindService(to.baseUrl);
    if (groupId !== null && bound.groupId === null) store.setGroupId(groupId);
    return `pipeline "${store.pipeline}" now targets ${toText}.`;
  }
  const owned = store.ownedCount();
  if (owned > 0 && !options.releaseOwned) {
    throw new UserFacingError(
      `the state of pipeline "${store.pipeline}" owns ${owned} records in ${from}; moving it to ${toText} would let them go. Nothing was changed.`,
      {
        hint: `If this is really the pipeline's new target, run again with --release-owned: those ${owned} records stay in group ${bound.groupId}, untouched and no longer owned (never updated or deleted by this pipeline), and records of the roster already in group ${groupId} are adopted on the next run, never overwritten. If the group id is a typo, check it in the service's UI.`,
      },
    );
  }
  const { released } = store.retarget({ baseUrl, groupId });
  return `pipeline "${store.pipeline}" moved from ${from} to ${toText}; ${released} owned record${released === 1 ? '' : 's'} released (left in group ${bound.groupId ?? '(none)'} untouched, no longer owned). The next run adopts records of the roster that already exist in group ${groupId ?? '(none)'}.`;
}
