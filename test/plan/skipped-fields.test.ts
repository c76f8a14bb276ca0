/**
 * A field the mapping skipped for an invalid value (`on_invalid: skip_value`) is absent from the
 * desired record: the plan neither sends nor clears it, and what the inventory records after the
 * write is what the service keeps (the last applied or remote value), or nothing when unknown.
 */
import { expect, it } from 'vitest';
import { buildPlan } from '../../src/plan/build.js';
import { canonicalJson, hashJson } from '../../src/plan/canonical.js';
import { RosterClassifier } from '../../src/plan/classify.js';
import type { DesiredRecord } from '../../src/mapping/types.js';
import { materialized, type Fields } from '../../src/plan/types.js';

const GUARDS = { max_deletes: 50, max_delete_percent: 10, max_source_drop_percent: 50, max_identity_changes: 10, max_identity_change_percent: 5 };
const LABELS = new Map([['name', 'name'], ['emails', 'emails'], ['orcids', 'orcids']]);
const OLD: Fields = { name: 'Ada', emails: ['ada@example.org'], orcids: ['0000-0002-1825-0097'] };

function planOf(desired: DesiredRecord, owned: Fields | undefined, options: { update?: 'partial' | 'full'; remote?: Fields } = {}) {
  const classifier = new RosterClassifier({ keepUnchanged: options.remote !== undefined });
  classifier.add(desired, owned ? hashJson(canonicalJson(owned)) : undefined);
  return materialized(buildPlan({
    classification: classifier.finish(new Map([[desired.clientId, 2]]), { count: owned ? 1 : 0, ids: () => (owned ? [desired.clientId] : []) }),
    lastApplied: new Map(owned ? [[desired.clientId, owned]] : []),
    ...(options.remote ? { remote: new Map([[desired.clientId, options.remote]]) } : {}),
    previouslyFailed: new Map(),
    policy: { mode: 'mirror', update: options.update ?? 'partial', max_rps: 10, guards: GUARDS },
    fieldLabels: LABELS,
    guardInput: { ownedCount: owned ? 1 : 0, validCount: 1, previousValidCount: null, inventoryMissing: false, allow: {} },
  }));
}

const skippedOrcid = (fields: Fields): DesiredRecord => ({ clientId: 'a', fields, skipped: ['orcids'], provenance: { file: 'roster.csv', row: 2 } });

it('an update sends the changed fields only and records the ORCID the service keeps', () => {
  const plan = planOf(skippedOrcid({ name: 'Ada King', emails: ['ada@example.org'] }), OLD);
  const [item] = plan.items;
  expect(item).toMatchObject({ action: 'update', body: { name: 'Ada King' } });
  expect(item!.changes.map((c) => c.field)).toEqual(['name']);
  expect(JSON.parse(item!.desired!.fieldsJson)).toEqual({ name: 'Ada King', emails: ['ada@example.org'], orcids: ['0000-0002-1825-0097'] });
});

it('with nothing else changed there is nothing to write and nothing to repair', () => {
  const plan = planOf(skippedOrcid({ name: 'Ada', emails: ['ada@example.org'] }), OLD);
  expect(plan.items).toEqual([]);
  expect(plan.stateRepairs).toEqual([]);
  expect(plan.counts.noop).toBe(1);
});

it('with --refresh the value kept is the remote one', () => {
  const remote = { ...OLD, orcids: ['0000-0001-5109-3700'] };
  const plan = planOf(skippedOrcid({ name: 'Ada King', emails: ['ada@example.org'] }), OLD, { remote });
  expect(JSON.parse(plan.items[0]!.desired!.fieldsJson).orcids).toEqual(['0000-0001-5109-3700']);
});

it('a create leaves the field out of the body, and the inventory claims no value for it', () => {
  const plan = planOf(skippedOrcid({ name: 'Ada', emails: ['ada@example.org'] }), undefined);
  const [item] = plan.items;
  expect(item).toMatchObject({ action: 'create', body: { name: 'Ada', emails: ['ada@example.org'] } });
  expect(item!.body).not.toHaveProperty('orcids');
  expect(JSON.parse(item!.desired!.fieldsJson)).not.toHaveProperty('orcids');
});

it('under update: full the replacing body carries the value the service keeps', () => {
  const plan = planOf(skippedOrcid({ name: 'Ada King', emails: ['ada@example.org'] }), OLD, { update: 'full' });
  expect(plan.items[0]).toMatchObject({ action: 'replace', body: { name: 'Ada King', emails: ['ada@example.org'], orcids: ['0000-0002-1825-0097'] } });
});
