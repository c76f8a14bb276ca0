/**
 * The stored keys' salt (rowKeySalt): a plan whose salt differs loads no row key (none
 * could match), maps every row, and its apply stores every key again with the new salt, so the
 * next plan takes the fast path. Only speed depends on it: the plans are the same either way.
 */
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { openState } from '../../src/state/open.js';
import { loadPipeline } from '../../src/config/load.js';
import { gatherPlanInput } from '../../src/sync/gather.js';
import { runRequestOf } from '../../src/sync/run-request.js';
import { runSync, type RunOptions } from '../../src/sync/run-sync.js';
import { testClient } from '../support/client.js';
import { API_KEY, emulator, makeProject, people, writes, type Project } from '../support/project.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await emulator();
});
afterAll(async () => {
  await emu.close();
});

describe('the fast path after a mapping change', () => {
  it('loads no key of another salt, maps every row once, and is fast again after that sync', async () => {
    const project = await makeProject(people(40));
    const run = (extra: Partial<RunOptions> = {}) =>
      runSync({ pipelinePath: project.pipeline, service: { baseUrl: emu.url, apiKey: API_KEY }, stateDir: join(project.dir, 'state'), reportDir: join(project.dir, 'reports'), createGroup: true, ...extra });
    {
      // A first sync stores 40 keys and their salt.
      expect((await run()).exitCode).toBe(0);
      const state = openState(loadPipeline(project.pipeline), { stateDir: join(project.dir, 'state') });
      const firstSalt = state.rowKeySalt();
      state.close();
      expect(firstSalt).toEqual(expect.any(String));

      // Nothing changed: every row takes the fast path.
      const nightly = await run({ dryRun: true });
      expect(nightly.report.counts.noop.planned).toBe(40);
      expect(await rowsKnown(project)).toBe(40);

      // The mapping file changes (a comment): a new salt. No key is loaded, every row is mapped,
      // the plan is the same (40 unchanged), and no call is made.
      await appendFile(join(project.dir, 'mapping.yaml'), '\n# reviewed\n');
      expect(await rowsKnown(project)).toBe(0);
      const before = writes(emu).total;
      const changed = await run();
      expect(changed.exitCode).toBe(0);
      expect(changed.report.counts).toEqual({ create: {}, update: {}, delete: {}, noop: { done: 40 } });
      expect(writes(emu).total).toBe(before);
      const after = openState(loadPipeline(project.pipeline), { stateDir: join(project.dir, 'state') });
      expect(after.rowKeySalt()).not.toBe(firstSalt);
      after.close();

      // That sync stored the keys again with the new salt: the next plan is fast again.
      const again = await run({ dryRun: true });
      expect(again.report.counts.noop.planned).toBe(40);
      expect(await rowsKnown(project)).toBe(40);
    }
  });

  it('a dry run records no salt', async () => {
    const project = await makeProject(people(5));
    await runSync({ pipelinePath: project.pipeline, service: { baseUrl: emu.url, apiKey: API_KEY }, stateDir: join(project.dir, 'state'), reportDir: join(project.dir, 'reports'), createGroup: true, dryRun: true });
    const state = openState(loadPipeline(project.pipeline), { stateDir: join(project.dir, 'state') });
    expect(state.rowKeySalt()).toBeUndefined();
    state.close();
  });
});

/** How many roster rows the plan's gathering recognised by their stored key (the fast path), without mapping them. */
async function rowsKnown(project: Project): Promise<number> {
  const pipeline = loadPipeline(project.pipeline);
  const stateDir = join(project.dir, 'state');
  const store = openState(pipeline, { stateDir });
  try {
    const request = runRequestOf({ pipelinePath: project.pipeline, service: { baseUrl: emu.url, apiKey: API_KEY }, stateDir, dryRun: true }).plan;
    const gathered = await gatherPlanInput({ pipeline, store, client: testClient(emu), request });
    return gathered.roster.knownRows;
  } finally {
    store.close();
  }
}
