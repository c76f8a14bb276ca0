/**
 * What both state backends do the same way, written once: everything kept as a meta key (the
 * serial, the group id and name, the group-creation intent, the row-key salt). Each backend
 * supplies how a meta key is read, written and deleted.
 */
import type { GroupIntent } from './backend.js';

/** The meta key of `rowKeySalt()`. */
export const ROW_KEY_SALT = 'row_key_salt';

export abstract class StoreBase {
  abstract readonly pipeline: string;
  protected abstract readonly now: () => number;

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
}
