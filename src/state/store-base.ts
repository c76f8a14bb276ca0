/**
 * What both state backends do the same way, written once: everything kept as a meta key (the
 * serial, the group id and name, the group-creation intent, the row-key salt), the claims and
 * the lock handed to the backend's own. Each backend supplies how a meta key is read, written
 * and deleted, and its registry.
 */
import type { GroupIntent, LockInfo, Target, TargetRegistration } from './backend.js';

/** The meta key of `rowKeySalt()`. */
export const ROW_KEY_SALT = 'row_key_salt';

/** The claims and targets of one backend (sqlite/claims.ts, postgres/claims.ts). */
export interface ClaimRegistry {
  owners(target: Target, clientIds: readonly string[]): Map<string, string>;
  claim(target: Target, clientIds: readonly string[]): Map<string, string>;
  release(target: Target, clientIds: readonly string[]): void;
  claimOwned(target: Target): Map<string, string>;
  registerTarget(target: Target, sharedPrefixes: readonly string[] | null): void;
  targetsOn(target: Target): TargetRegistration[];
}

/** The pipeline lock of one backend (sqlite/lock-row.ts, postgres/advisory-lock.ts). */
export interface PipelineLock {
  acquire(runId: string, owner?: string): LockInfo;
  heartbeat(runId: string): boolean;
  release(runId: string): void;
  read(): LockInfo | undefined;
  forceUnlock(): LockInfo | undefined;
  isStale(lock: LockInfo): boolean;
}

export abstract class StoreBase {
  abstract readonly pipeline: string;
  protected abstract readonly now: () => number;
  protected abstract readonly claims: ClaimRegistry;
  protected abstract readonly lock: PipelineLock;

  abstract getMeta(key: string): string | undefined;
  abstract setMeta(key: string, value: string): void;
  protected abstract deleteMeta(key: string): void;

  protected iso(): string {
    return new Date(this.now()).toISOString();
  }

  serial(): number {
    return Number(this.getMeta('serial') ?? '0');
  }

  groupId(): number | null {
    const value = this.getMeta('group_id');
    return value === undefined ? null : Number(value);
  }

  setGroupName(name: string): void {
    this.setMeta('group_name', name);
  }

  groupIntent(): GroupIntent | null {
    const value = this.getMeta('group_intent');
    return value ? (JSON.parse(value) as GroupIntent) : null;
  }

  recordGroupIntent(name: string): void {
    this.setMeta('group_intent', JSON.stringify({ name, at: this.iso() }));
  }

  clearGroupIntent(): void {
    this.deleteMeta('group_intent');
  }

  rowKeySalt(): string | undefined {
    return this.getMeta(ROW_KEY_SALT);
  }

  setRowKeySalt(salt: string): void {
    this.setMeta(ROW_KEY_SALT, salt);
  }

  // --- claims and targets, shared by the pipelines of one state location or database ---------

  claimOwners(target: Target, clientIds: readonly string[]): Map<string, string> {
    return this.claims.owners(target, clientIds);
  }

  claim(target: Target, clientIds: readonly string[]): Map<string, string> {
    return this.claims.claim(target, clientIds);
  }

  releaseClaims(target: Target, clientIds: readonly string[]): void {
    this.claims.release(target, clientIds);
  }

  claimOwned(target: Target): Map<string, string> {
    return this.claims.claimOwned(target);
  }

  registerTarget(target: Target, sharedPrefixes: readonly string[] | null): void {
    this.claims.registerTarget(target, sharedPrefixes);
  }

  targetsOn(target: Target): TargetRegistration[] {
    return this.claims.targetsOn(target);
  }

  // --- the lock -----------------------------------------------------------------------------

  acquireLock(runId: string, owner?: string): LockInfo {
    return this.lock.acquire(runId, owner);
  }

  heartbeat(runId: string): boolean {
    return this.lock.heartbeat(runId);
  }

  releaseLock(runId: string): void {
    this.lock.release(runId);
  }

  readLock(): LockInfo | undefined {
    return this.lock.read();
  }

  forceUnlock(): LockInfo | undefined {
    return this.lock.forceUnlock();
  }

  isStale(lock: LockInfo): boolean {
    return this.lock.isStale(lock);
  }
}
