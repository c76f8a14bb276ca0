/**
 * A plan saved by the rostersync before the plan carried codes (file version 4: a full POST as an
 * `update` with `replace: true`, guards and notes as sentences) is refused with the fix, never
 * read as the current format.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { UserFacingError } from '../../src/errors/user-facing-error.js';
import { readPlanFile } from '../../src/sync/plan-file.js';

const version4 = {
  kind: 'rostersync-plan',
  version: 4,
  createdAt: '2026-11-20T02:00:00.000Z',
  pipeline: 'reviewers',
  bindings: { pipelineFile: '/p/reviewers.yaml', pipelineSha256: 'a', mappingSha256: 'b', sourceSha256: 'c', stateSerial: 3, baseUrl: 'http://127.0.0.1:1', groupId: 12 },
  options: { refresh: false },
  plan: {
    items: [{ clientId: 'rev-1', action: 'update', reason: 'changed', body: { name: 'Wei Li' }, replace: true, changes: [{ field: 'name', label: 'name', before: 'Li Wei', after: 'Wei Li' }] }],
    counts: { create: 0, update: 1, delete: 0, noop: 0 },
    orphans: [],
    stateRepairs: [],
    guards: [{ guard: 'inventory_missing', tripped: false, message: 'the target group is known but this pipeline owns no records in its state.' }],
    refused: false,
    estimate: { calls: 1, rps: 10, seconds: 0.1 },
    notes: ['client_id changed: p1 → p2 (same orcid); planned as a create, the old record stays as an orphan.'],
  },
  optionLabels: {},
  input: { rowsRead: 1, valid: 1, rejected: 0, filtered: 0, duplicates: 0 },
  source: { file: 'reviewers.csv', sha256: 'c', format: 'csv' },
  digest: '0'.repeat(64),
};

it('refuses a version 4 plan file, saying to make the plan again', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'rostersync-plan-file-')), 'plan.json');
  writeFileSync(path, JSON.stringify(version4));
  const refused = await readPlanFile(path).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(refused).toBeInstanceOf(UserFacingError);
  expect((refused as UserFacingError).message).toBe(`${path}: plan file version 4 is not supported (this rostersync reads version 5).`);
  expect((refused as UserFacingError).hint).toBe('Make the plan again with this version of rostersync.');
});
