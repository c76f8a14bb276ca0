/**
 * What a state is bound to: the service (base URL), the group and the pipeline. A state used
 * against another identity would patch or delete records of another group or service, so a run
 * compares the identity it is about to use with the one its state is bound to.
 */

export interface StateIdentity {
  pipeline: string;
  /** Normalized base URL of the service; null until the first run binds it. */
  baseUrl: string | null;
  groupId: number | null;
  /**
   * The group was created by this pipeline and the state has owned it since creation: every
   * record in it was written by this pipeline, so no create-if-absent check is needed there.
   */
  groupCreatedHere: boolean;
  /**
   * The group's name as it was created (or as the pipeline last named it). The service cannot
   * list groups, so once the pipeline pins `group_id` this is the only place the name is known.
   */
  groupName: string | null;
}

/** The service and group a run writes to; claims and target registrations are keyed by it. */
export interface Target {
  baseUrl: string;
  groupId: number;
}

/**
 * One spelling per service: scheme and host lower-cased (URL does it), default port dropped,
 * no trailing slash, no query or fragment. `https://Svc.example.org/` and `https://svc.example.org`
 * are the same service; `/staging` and `/prod` paths are not.
 */
export function normalizeServiceUrl(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return baseUrl.trim().replace(/\/+$/, '');
  }
}

/** A difference between the bound identity and the one a run is about to use. */
export interface IdentityMismatch {
  what: 'service' | 'group';
  bound: string;
  current: string;
}

/**
 * The differences between what the state is bound to and what a run would use. An unbound part
 * (null) is not a difference: the first run binds it.
 */
export function identityMismatches(bound: StateIdentity, current: { baseUrl: string; groupId: number | null }): IdentityMismatch[] {
  const result: IdentityMismatch[] = [];
  const baseUrl = normalizeServiceUrl(current.baseUrl);
  if (bound.baseUrl !== null && bound.baseUrl !== baseUrl) result.push({ what: 'service', bound: bound.baseUrl, current: baseUrl });
  if (bound.groupId !== null && current.groupId !== null && bound.groupId !== current.groupId) {
    result.push({ what: 'group', bound: String(bound.groupId), current: String(current.groupId) });
  }
  return result;
}
