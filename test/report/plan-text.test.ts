/**
 * The plan's guards and notes carry codes and figures; report/plan-text.ts puts them in words.
 * Each code's sentence, word for word, as the console, report.md/html/json and the alerts print it.
 */
import { describe, expect, it } from 'vitest';
import { evaluateGuards, type GuardInput } from '../../src/plan/guards.js';
import { judgeRejects } from '../../src/plan/rejects-tolerance.js';
import { guardMessage, planNoteText, refusalMessage, rejectsVerdict, reportedGuard } from '../../src/report/plan-text.js';
import { maskText } from '../../src/report/mask.js';
import { foreignReason } from '../../src/plan/ownership.js';
import { foreignNote } from '../../src/report/run-notes.js';

const guards = { max_deletes: 50, max_delete_percent: 10, max_source_drop_percent: 50, max_identity_changes: 10, max_identity_change_percent: 5 };
const base: GuardInput = { guards, deletes: 0, ownedCount: 200, validCount: 200, previousValidCount: null, inventoryMissing: false, allow: {} };
const only = (input: Partial<GuardInput>) => {
  const results = evaluateGuards({ ...base, ...input });
  expect(results).toHaveLength(1);
  return results[0]!;
};

describe('guard sentences', () => {
  it.each([
    ['empty_source', { validCount: 0, deletes: 0 }, 'the source has no valid records while the pipeline owns 200; an empty or unreadable source never deletes anything.'],
    ['max_deletes', { deletes: 30 }, '30 deletes planned, above the limit of 20 (max_deletes 50 or 10% of 200 owned records, whichever is lower).'],
    ['source_drop', { validCount: 90, previousValidCount: 200 }, 'the source has 90 valid records, 55.0% fewer than the 200 of the last successful run (limit 50%). Is the file truncated?'],
    [
      'client_ids_changed',
      { upsertClientIdChanges: Array.from({ length: 11 }, (_, i) => ({ from: `old-${i}`, to: `new-${i}` })) },
      '11 owned records reappear under new client_ids (same ORCID or email), above the limit of 10: in upsert mode the old records stay, so the group would hold each of these people twice. Did the client_id (its prefix, say) change? For example old-0 → new-0; old-1 → new-1; old-2 → new-2; old-3 → new-3; old-4 → new-4. To rename the records, run in mode: mirror with --allow-deletes, which deletes the old ones.',
    ],
    [
      'inventory_missing',
      { inventoryMissing: true },
      'the target group is known but this pipeline owns no records in its state: deletions cannot be computed. Records of the roster that already exist in the group are adopted (create-if-absent, managed fields only); adopt others by id with `rostersync state import`.',
    ],
  ] as const)('%s', (code, input, sentence) => {
    const result = only(input);
    expect(result.found.code).toBe(code);
    expect(guardMessage(result.found)).toBe(sentence);
  });

  it('unreadable_rows, in the singular and the plural', () => {
    expect(guardMessage(only({ deletes: 1, unidentifiedRejected: 1 }).found)).toBe(
      '1 rejected row has no readable client_id, so 1 planned delete may hit people still in the roster. Fix those rows first (see rejected.csv).',
    );
    expect(guardMessage(only({ deletes: 3, unidentifiedRejected: 2 }).found)).toBe(
      '2 rejected rows have no readable client_id, so 3 planned deletes may hit people still in the roster. Fix those rows first (see rejected.csv).',
    );
  });

  it('identity_changes quotes names marked personal, so a masked report takes them out', () => {
    const identityChanges = Array.from({ length: 11 }, (_, i) => ({ clientId: `p${i}`, before: `Ada ${i}`, after: `Grace ${i}` }));
    const result = only({ identityChanges });
    const message = guardMessage(result.found);
    expect(message.replace(/[\u2068\u2069]/g, '')).toBe(
      '11 owned records would become other people (name changed, no email or ORCID kept), above the limit of 10 (max_identity_changes 10 or 5% of 200 owned records, whichever is lower). Is this roster from another system that reuses the ids? For example p0: "Ada 0" → "Grace 0"; p1: "Ada 1" → "Grace 1"; p2: "Ada 2" → "Grace 2"; p3: "Ada 3" → "Grace 3"; p4: "Ada 4" → "Grace 4".',
    );
    expect(maskText(message)).not.toMatch(/Ada|Grace/);
  });

  it('rejects, over policy.rejects', () => {
    const result = only({ rosterCounts: { rowsRead: 200, rejected: 7, filtered: 0 }, rejects: { max_count: 5, max_percent: 2 } });
    expect(guardMessage(result.found)).toBe(
      '7 rows rejected (3.5% of 200), over the tolerance of policy.rejects (at most 5 rows, 2%); nothing is written over it. Fix the rows listed in rejected.csv, or raise policy.rejects.',
    );
  });

  it('the report carries the code beside the sentence, and a refusal names each tripped guard with its flag', () => {
    const result = only({ deletes: 30 });
    expect(reportedGuard(result)).toEqual({
      guard: 'max_deletes',
      code: 'max_deletes',
      tripped: true,
      message: '30 deletes planned, above the limit of 20 (max_deletes 50 or 10% of 200 owned records, whichever is lower).',
      allowWith: '--allow-deletes 30',
    });
    expect(refusalMessage([result, only({ inventoryMissing: true })])).toBe(
      'max_deletes: 30 deletes planned, above the limit of 20 (max_deletes 50 or 10% of 200 owned records, whichever is lower). Allow with --allow-deletes 30.',
    );
  });
});

describe('rejected rows against policy.rejects', () => {
  it.each([
    [{ max_count: 5, max_percent: 2 }, 3, { tolerated: true, text: '3 rows rejected (1.5% of 200), within the tolerance of policy.rejects (at most 5 rows, 2%), not synced' }],
    [{ max_count: 1 }, 2, { tolerated: false, text: '2 rows rejected (1% of 200), over the tolerance of policy.rejects (at most 1 row), not synced' }],
    [undefined, 1, { tolerated: false, text: '1 row rejected and not synced' }],
  ] as const)('%o with %i rejected', (policy, rejected, verdict) => {
    expect(rejectsVerdict(judgeRejects({ rowsRead: 200, rejected, filtered: 0 }, policy))).toEqual(verdict);
  });
});

describe('plan notes', () => {
  it('client_id_changed: a delete plus a create, or a create beside an orphan', () => {
    expect(planNoteText({ code: 'client_id_changed', from: 'p1', to: 'legacy-1', sameBy: 'orcid', deleted: true })).toBe('client_id changed: p1 → legacy-1 (same orcid); planned as a delete plus a create.');
    expect(planNoteText({ code: 'client_id_changed', from: 'p1', to: 'legacy-1', sameBy: 'email', deleted: false })).toBe(
      'client_id changed: p1 → legacy-1 (same email); planned as a create, the old record stays as an orphan.',
    );
  });
});

describe('records left alone as another pipeline\'s', () => {
  it('names each with why: claimed by another pipeline, or outside the client_id prefixes', () => {
    const foreign = new Map([foreignReason('a-1', 'other', 'this', null), foreignReason('b-2', undefined, 'this', ['A-', 'C-'])].map((why, i) => [['a-1', 'b-2'][i]!, why!]));
    expect(foreignNote(foreign)).toBe(`2 client_ids left alone, as another pipeline owns them: a-1 (claimed by pipeline "other"), b-2 (outside this pipeline's client_id prefixes (A-, C-)).`);
    expect(foreignReason('a-1', 'other', 'this', null)).toEqual({ code: 'claimed', owner: 'other' });
    expect(foreignReason('b-2', undefined, 'this', ['A-'])).toEqual({ code: 'outside_prefixes', prefixes: ['A-'] });
    expect(foreignReason('A-3', 'this', 'this', ['A-'])).toBeUndefined();
  });
});
