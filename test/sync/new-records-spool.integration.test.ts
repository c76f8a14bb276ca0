/**
 * A first sync large enough that its new records go through the spool's temporary file
 * (plan/new-records.ts keeps 4,000 in memory): every record is written once, the last row of a
 * duplicated client_id wins, the report and records.jsonl list each as it went, and a run stopped
 * part-way reports exactly the records it wrote.
 */
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import type { RecordEntry } from '../../src/report/types.js';
import { runSync, type RunOptions } from '../../src/sync/run-sync.js';
import { API_KEY, emulator, groupRecords, makeProject, people, person } from '../support/project.js';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
});

const ROWS = 4600;

async function project() {
  // p10 again at the end, under another name: `last` keeps that row.
  const made = await makeProject([...people(ROWS), person(10, { name: 'Person 10, second row' })], { maxRps: 100_000, concurrency: 8, driftSample: 0 });
  await appendFile(join(made.dir, 'mapping.yaml'), 'duplicate_client_ids: last\n');
  const run = (extra: Partial<RunOptions> = {}) =>
    runSync({ pipelinePath: made.pipeline, service: { baseUrl: emu.url, apiKey: API_KEY }, stateDir: join(made.dir, 'state'), reportDir: join(made.dir, 'reports'), createGroup: true, ...extra });
  return { ...made, run };
}

async function recordsOf(reportDir: string): Promise<RecordEntry[]> {
  const text = await readFile(join(reportDir, 'records.jsonl'), 'utf8');
  return text.trim().split('\n').map((line) => JSON.parse(line) as RecordEntry);
}

describe('a first sync whose new records are spooled to disk', () => {
  it('writes each once, keeps the last row of a duplicated id, and lists every record', async () => {
    const { run } = await project();
    const result = await run();
    expect(result.exitCode, result.report.message).toBe(0);
    expect(result.report.counts.create).toEqual({ done: ROWS });
    // The group, then one full POST a record.
    expect(emu.stats.snapshot().writes.total).toBe(ROWS + 1);
    const held = groupRecords(emu);
    expect(Object.keys(held)).toHaveLength(ROWS);
    expect(held['p10']!.name).toBe('Person 10, second row');
    expect(held[`p${ROWS}`]!.name).toBe(`Person ${ROWS}`);

    const records = await recordsOf(result.written.dir);
    expect(records).toHaveLength(ROWS);
    // In the order of the rows that count, each once: p10 at its last row.
    expect(records.map((entry) => entry.clientId)).toEqual([...people(ROWS).map((row) => row.id).filter((id) => id !== 'p10'), 'p10']);
    expect(records.every((entry) => entry.outcome === 'done' && entry.action === 'create' && entry.reason === 'new')).toBe(true);
    expect(records.find((entry) => entry.clientId === 'p10')).toMatchObject({ provenance: { row: ROWS + 2 } });
    expect(result.report.estimate).toMatchObject({ calls: ROWS, made: ROWS });

    // The inventory holds them all: nothing is left to do.
    const again = await run({ dryRun: true });
    expect(again.report.counts).toMatchObject({ create: {}, noop: { planned: ROWS } });
  });

  it('stopped part-way, reports as done exactly the records it wrote, and the next run writes the rest', async () => {
    const { run } = await project();
    const stop = new AbortController();
    const stopped = await run({ signal: stop.signal, onProgress: (done) => (done === 4300 ? stop.abort() : undefined) });
    expect(stopped.report.outcome).toBe('interrupted');
    const records = await recordsOf(stopped.written.dir);
    expect(records).toHaveLength(ROWS);
    const held = new Set(Object.keys(groupRecords(emu)));
    const done = records.filter((entry) => entry.outcome === 'done').map((entry) => entry.clientId);
    // Past the pages in memory (4,000), so the records done are told apart from the skipped by their place.
    expect(done.length).toBeGreaterThanOrEqual(4300);
    expect(done.length).toBeLessThan(ROWS);
    expect(new Set(done)).toEqual(held);
    expect(records.filter((entry) => entry.outcome === 'skipped')).toHaveLength(ROWS - done.length);
    expect(stopped.report.counts.create).toEqual({ done: done.length, skipped: ROWS - done.length });

    const rest = await run();
    expect(rest.exitCode, rest.report.message).toBe(0);
    expect(rest.report.counts.create).toEqual({ done: ROWS - done.length });
    expect(Object.keys(groupRecords(emu))).toHaveLength(ROWS);
  });
});
