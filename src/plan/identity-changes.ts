/**
 * The identity-change guard's finding: owned records whose roster row now describes someone else.
 * A roster from another system that reuses the same ids for different people would otherwise
 * rewrite every record as another person, leaving editor-set fields (a conflict of interest) on
 * the wrong one. Pure: last-applied and desired fields in, changes out.
 *
 * A record counts when its name changed (compared without case, accents, punctuation or word
 * order, so "Okafor, Ada" is "Ada Okafor") and none of its previous emails or ORCIDs is kept.
 * A corrected name with the same email, or a new email under the same name, is an ordinary update.
 */
import type { FieldValue } from '../mapping/types.js';
import type { Fields } from './types.js';

export interface IdentityChange {
  clientId: string;
  before: string;
  after: string;
}

/** The identity changes among changed records; a field skipped for an invalid value keeps what the record had. */
export function identityChangesOf(changed: readonly { record: { clientId: string; fields: Fields; skipped?: string[] } }[], lastApplied: ReadonlyMap<string, Fields>): IdentityChange[] {
  const changes: IdentityChange[] = [];
  for (const { record } of changed) {
    const before = lastApplied.get(record.clientId);
    const after = record.skipped ? { ...before, ...record.fields } : record.fields;
    const change = before ? identityChange(record.clientId, before, after) : undefined;
    if (change) changes.push(change);
  }
  return changes;
}

export function identityChange(clientId: string, before: Fields, after: Fields): IdentityChange | undefined {
  const beforeName = typeof before.name === 'string' ? before.name : '';
  const afterName = typeof after.name === 'string' ? after.name : '';
  if (nameKey(beforeName) === nameKey(afterName)) return undefined;
  const kept = (field: 'emails' | 'orcids', normalize: (value: string) => string) => {
    const previous = new Set(list(before[field]).map(normalize));
    return list(after[field]).some((value) => previous.has(normalize(value)));
  };
  if (kept('emails', (email) => email.trim().toLowerCase()) || kept('orcids', orcidKey)) return undefined;
  return { clientId, before: beforeName, after: afterName };
}

function list(value: FieldValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function nameKey(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .sort()
    .join(' ');
}

function orcidKey(value: string): string {
  return /(\d{4}-\d{4}-\d{4}-\d{3}[\dXx])/.exec(value)?.[1]?.toUpperCase() ?? value.trim();
}
