/**
 * The decisions between the gather phase's reads and the plan (plan/assemble-input.ts), each on
 * plain data: what refuses, whether the fast path runs, what is kept as it is, which owned
 * records count as missing, what the drift check reads, and the plan's input.
 */
import { describe, expect, it } from 'vitest';
import { policySchema } from '../../src/config/pipeline.js';
import { ConfigError } from '../../src/errors/config-error.js';
import type { DesiredRecord } from '../../src/mapping/types.js';
import { assemblePlanInput, driftCheckPlan, fastPathAllowed, keptAsIs, lastAppliedNeeded, notUnchanged, refuseFullUpdateOfSeededFields, settleMissing, type GatheredFacts } from '../../src/plan/assemble-input.js';
import { canonicalJson, hashJson } from '../../src/plan/canonical.js';
import type { Classification } from '../../src/plan/classify.js';
import { NewRecords, type ClassifiedRecord } from '../../src/plan/new-records.js';
import type { ForeignReason } from '../../src/plan/ownership.js';
import type { Fields } from '../../src/plan/types.js';
import type { UnfinishedWrite } from '../../src/state/backend.js';

function item(clientId: string, fields: Fields): ClassifiedRecord {
  const fieldsJson = canonicalJson(fields);
  const record: DesiredRecord = { clientId, fields, provenance: { file: 'roster.csv', row: 2 } };
  return { record, fieldsJson, hash: hashJson(fieldsJson) };
}

function classification(parts: Partial<Omit<Classification, 'created'>> & { created?: string[] } = {}): Classification {
  const created = new NewRecords();
  for (const clientId of parts.created ?? []) created.add(item(clientId, { name: clientId }));
  created.finish();
  return { created, changed: parts.changed ?? [], unchanged: parts.unchanged ?? [], unchangedCount: parts.unchangedCount ?? 0, missing: parts.missing ?? [] };
}

const policy = policySchema.parse({});

describe('refusing update: full with fields the service keeps', () => {
  const compiled = { seededFields: { cf_1: 'on_create' as const }, fieldNames: { cf_1: 'Start year' } };
  it('refuses full updates of a mapping with a field written on_create, naming the field by its label', () => {
    expect(() => refuseFullUpdateOfSeededFields('/p/pipeline.yaml', 'full', compiled)).toThrow(ConfigError);
    expect(() => refuseFullUpdateOfSeededFields('/p/pipeline.yaml', 'full', compiled)).toThrow(/policy\.update.*Start year/);
  });
  it.each([
    ['partial updates', 'partial' as const, compiled],
    ['a mapping whose fields are all written always', 'full' as const, { seededFields: {}, fieldNames: {} }],
  ])('accepts %s', (_, update, mapping) => {
    expect(() => refuseFullUpdateOfSeededFields('/p/pipeline.yaml', update, mapping)).not.toThrow();
  });
});

describe('the fast path', () => {
  const alone = { sharedPrefixes: null, sharedWith: [] };
  it.each([
    ['runs by default', { fastPath: true, refresh: false as const }, alone, true],
    ['is off with --no-fast-path', { fastPath: false, refresh: false as const }, alone, false],
    ['is off with --refresh', { fastPath: true, refresh: 'planned' as const }, alone, false],
    ['is off with declared client_id prefixes', { fastPath: true, refresh: false as const }, { sharedPrefixes: ['a-'], sharedWith: [] }, false],
    ['is off on a group other pipelines share', { fastPath: true, refresh: false as const }, { sharedPrefixes: null, sharedWith: ['other'] }, false],
  ])('%s', (_, request, binding, expected) => {
    expect(fastPathAllowed(request, binding)).toBe(expected);
  });
});

describe('the roster records kept as they are', () => {
  const roster = { rejectedClientIds: new Set(['bad']), duplicateClientIds: new Set(['twice']) };
  it('are the rejected rows, the duplicated ids under `reject`, and the records another pipeline owns', () => {
    expect([...keptAsIs(roster, 'reject', new Map<string, ForeignReason>([['theirs', { code: 'claimed', owner: 'b' }]]))].sort()).toEqual(['bad', 'theirs', 'twice']);
  });
  it('leave duplicated ids to be written under `first` and `last`', () => {
    expect([...keptAsIs(roster, 'last', new Map())]).toEqual(['bad']);
    expect([...keptAsIs(roster, 'first', new Map())]).toEqual(['bad']);
  });
});

describe('the owned records counted as missing', () => {
  const base = { pendingRenames: new Map(), pipeline: 'a', foreign: new Map<string, ForeignReason>(), unfinished: new Map<string, UnfinishedWrite>(), inRoster: () => false, keptAsIs: new Set<string>(), owned: () => false };

  it('keeps an owned record whose new client_id is held back as the same person', () => {
    const settled = settleMissing({ ...base, classification: classification({ missing: ['old-id', 'gone'] }), pendingRenames: new Map([['old-id', {}]]) });
    expect(settled.classification.missing).toEqual(['gone']);
  });

  it('leaves a record another pipeline claimed since to it, and says so in a new `foreign`, changing neither input', () => {
    const foreign = new Map<string, ForeignReason>([['x', { code: 'outside_prefixes', prefixes: ['a-'] }]]);
    const input = classification({ missing: ['mine', 'theirs', 'unclaimed'] });
    const settled = settleMissing({ ...base, classification: input, foreign, claims: new Map([['mine', 'a'], ['theirs', 'b']]) });
    expect(settled.classification.missing).toEqual(['mine', 'unclaimed']);
    expect([...settled.foreign]).toEqual([...foreign, ['theirs', { code: 'claimed', owner: 'b' }]]);
    expect(foreign.size).toBe(1);
    expect(input.missing).toEqual(['mine', 'theirs', 'unclaimed']);
  });

  it('adds the unfinished writes that may have happened to records no longer in the roster', () => {
    const unfinished = new Map<string, UnfinishedWrite>([
      ['sent-create', { action: 'create', state: 'sent', status: null }],
      ['refused-create', { action: 'create', state: 'failed', status: 422 }],
      ['timed-out-update', { action: 'update', state: 'failed', status: 503 }],
      ['unfinished-delete', { action: 'delete', state: 'sent', status: null }],
      ['still-in-roster', { action: 'create', state: 'sent', status: null }],
      ['kept-as-is', { action: 'create', state: 'sent', status: null }],
      ['owned', { action: 'update', state: 'sent', status: null }],
    ]);
    const settled = settleMissing({
      ...base,
      classification: classification({ missing: ['gone'] }),
      unfinished,
      inRoster: (id) => id === 'still-in-roster',
      keptAsIs: new Set(['kept-as-is']),
      owned: (id) => id === 'owned',
    });
    expect(settled.classification.missing).toEqual(['gone', 'sent-create', 'timed-out-update']);
  });
});

describe('the drift check of a run', () => {
  const known = { refresh: false as const, groupKnown: true, policy: { drift_sample: 5, drift_cycle: 0 }, ownedCount: 10 };
  it.each([
    ['a real sync reads the window and the sample', { ...known, driftCheck: 'read' as const, groupProbe: false }, { count: false, read: 'window-and-sample' }],
    ['a dry run counts, and reads the sample', { ...known, driftCheck: 'count' as const, groupProbe: true }, { count: true, read: 'sample' }],
    ['a dry run without a sample only counts', { ...known, policy: { drift_sample: 0, drift_cycle: 7 }, driftCheck: 'count' as const, groupProbe: true }, { count: true, read: undefined }],
    ['`plan --out` reads the sample, counts nothing', { ...known, driftCheck: undefined, groupProbe: true }, { count: false, read: 'sample' }],
    ['`apply plan.json` has none', { ...known, driftCheck: undefined, groupProbe: false }, undefined],
    ['--refresh has none', { ...known, refresh: 'all' as const, driftCheck: 'read' as const, groupProbe: false }, undefined],
    ['a run without a known group has none', { ...known, groupKnown: false, driftCheck: 'read' as const, groupProbe: false }, undefined],
    ['a run that owns nothing has none', { ...known, ownedCount: 0, driftCheck: 'read' as const, groupProbe: false }, undefined],
    ['a policy without sample or window has none', { ...known, policy: { drift_sample: 0, drift_cycle: 0 }, driftCheck: 'read' as const, groupProbe: false }, undefined],
  ])('%s', (_, input, expected) => {
    expect(driftCheckPlan(input)).toEqual(expected);
  });

  it('reads back none of the records created, changed, kept as they are or unfinished', () => {
    const found = notUnchanged(classification({ created: ['new'], changed: [item('changed', { name: 'c' })] }), new Set(['kept']), new Map([['unfinished', {}]]));
    expect([...found].sort()).toEqual(['changed', 'kept', 'new', 'unfinished']);
  });
});

describe("the plan's input", () => {
  const facts = (extra: Partial<GatheredFacts> = {}): GatheredFacts => ({
    classification: classification({ changed: [item('renamed', { name: 'Someone Else', emails: ['x@example.org'] })], unchanged: [] }),
    lastApplied: new Map([['renamed', { name: 'Ada Lovelace', emails: ['ada@example.org'] }]]),
    driftReads: 0,
    unfinished: new Map([['failed', { action: 'update', state: 'failed', status: 500 }]]),
    createIfAbsent: false,
    policy: { ...policy, max_rps: 5 },
    compiled: { fieldNames: { cf_1: 'Start year' }, seededFields: {} },
    roster: { counts: { rowsRead: 3, valid: 3, rejected: 0, filtered: 0, duplicatesIgnored: 0 }, unidentifiedRejected: 0 },
    ownedCount: 2,
    previousValidCount: 3,
    groupKnown: true,
    allow: {},
    ...extra,
  });

  it('asks the last-applied fields of the changed, missing and kept unchanged records', () => {
    expect(lastAppliedNeeded(classification({ changed: [item('c', {})], missing: ['m'], unchanged: [item('u', {})] }))).toEqual(['c', 'm', 'u']);
  });

  it('takes --max-rps over the policy, and the policy without it', () => {
    expect(assemblePlanInput(facts({ maxRps: 2 })).policy.max_rps).toBe(2);
    expect(assemblePlanInput(facts()).policy.max_rps).toBe(5);
  });

  it('gives the guards the identity changes and the counts, and the failed writes to retry', () => {
    const input = assemblePlanInput(facts());
    expect(input.guardInput.identityChanges?.map((change) => change.clientId)).toEqual(['renamed']);
    expect(input.guardInput).toMatchObject({ ownedCount: 2, validCount: 3, previousValidCount: 3, inventoryMissing: false });
    expect([...input.previouslyFailed]).toEqual([['failed', 'update']]);
    expect(input.fieldLabels.get('cf_1')).toBe('Start year');
    expect(input).not.toHaveProperty('driftReads');
    expect(input).not.toHaveProperty('seededFields');
  });

  it('plans drifted records again against their remote copy, without changing what gather read', () => {
    const drifted = item('drifted', { name: 'As we wrote it' });
    const remote = new Map<string, Fields | null>([['drifted', { name: 'Edited in the service' }]]);
    const read = facts({ driftReads: 4 });
    const input = assemblePlanInput({ ...read, drifted: { recheck: [drifted], remote } });
    expect(input.classification.unchanged).toEqual([drifted]);
    expect(input.lastApplied.get('drifted')).toEqual({ name: 'As we wrote it' });
    expect(input.remote).toBe(remote);
    expect(input.driftReads).toBe(4);
    expect(read.classification.unchanged).toEqual([]);
    expect(read.lastApplied.has('drifted')).toBe(false);
  });

  it('keeps the --refresh read when the drift check found nothing', () => {
    const remote = new Map<string, Fields | null>([['renamed', null]]);
    expect(assemblePlanInput(facts({ remote, drifted: { recheck: [], remote: new Map() } })).remote).toBe(remote);
  });
});
