/** Pure pieces of ownership: identity changes of owned records, and group sharing between pipelines. */
import { describe, expect, it } from 'vitest';
import { identityChange } from '../../src/plan/identity-changes.js';
import { identityMismatches, normalizeServiceUrl } from '../../src/state/identity.js';
import { prefixesOverlap, sharingProblem, withinPrefixes } from '../../src/state/sharing.js';

const person = (name: string, emails: string[] | null, orcids: string[] | null = null) => ({ name, emails, orcids, affiliations: null });

describe('identity changes', () => {
  it('counts another person under the same id, not a corrected name or a new email', () => {
    const ada = person('Ada Okafor', ['ada@x.org'], ['0000-0002-1825-0097']);
    expect(identityChange('a', ada, person('Ben Tanaka', ['ben@y.org']))).toEqual({ clientId: 'a', before: 'Ada Okafor', after: 'Ben Tanaka' });
    expect(identityChange('a', ada, person('Okafor, Ada', ['other@x.org']))).toBeUndefined();
    expect(identityChange('a', ada, person('Adá  OKAFOR', null))).toBeUndefined();
    expect(identityChange('a', ada, person('Ada Okafor-Smith', ['ADA@x.org']))).toBeUndefined();
    expect(identityChange('a', ada, person('Ada Smith', null, ['https://orcid.org/0000-0002-1825-0097']))).toBeUndefined();
    expect(identityChange('a', ada, person('Ada Smith', null))).toMatchObject({ after: 'Ada Smith' });
  });
});

describe('sharing a group', () => {
  it('refuses two pipelines unless both declare disjoint prefixes', () => {
    expect(prefixesOverlap(['onc-'], ['card-'])).toBe(false);
    expect(prefixesOverlap(['onc-'], ['onc-2'])).toBe(true);
    expect(sharingProblem('a', null, [{ pipeline: 'a', sharedPrefixes: null }])).toBeUndefined();
    expect(sharingProblem('a', null, [{ pipeline: 'b', sharedPrefixes: null }])).toMatch(/"b" already writes .* "a" and "b" declare no sharing/);
    expect(sharingProblem('a', ['x-'], [{ pipeline: 'b', sharedPrefixes: null }])).toMatch(/"b" declares no sharing/);
    expect(sharingProblem('a', ['x-'], [{ pipeline: 'b', sharedPrefixes: ['x-1'] }])).toMatch(/overlap/);
    expect(sharingProblem('a', ['x-'], [{ pipeline: 'b', sharedPrefixes: ['y-'] }])).toBeUndefined();
    expect(withinPrefixes('x-1', ['x-'])).toBe(true);
    expect(withinPrefixes('y-1', ['x-'])).toBe(false);
    expect(withinPrefixes('y-1', null)).toBe(true);
  });
});

describe('identity binding', () => {
  it('spells a service one way and names each difference', () => {
    expect(normalizeServiceUrl('HTTPS://Svc.Example.org:443/api/')).toBe('https://svc.example.org/api');
    const bound = { pipeline: 'p', baseUrl: 'https://staging.example.org', groupId: 5, groupCreatedHere: true, groupName: null };
    expect(identityMismatches(bound, { baseUrl: 'https://staging.example.org/', groupId: 5 })).toEqual([]);
    expect(identityMismatches(bound, { baseUrl: 'https://prod.example.org', groupId: 6 })).toEqual([
      { what: 'service', bound: 'https://staging.example.org', current: 'https://prod.example.org' },
      { what: 'group', bound: '5', current: '6' },
    ]);
    expect(identityMismatches({ ...bound, baseUrl: null }, { baseUrl: 'https://x.org', groupId: null })).toEqual([]);
  });
});
