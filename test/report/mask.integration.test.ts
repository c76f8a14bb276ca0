/**
 * `plan --mask` (a CI drift check): every report file that may leave the machine (report.md,
 * report.html, report.json, the GitHub job summary, rejected.csv) carries no roster name or e-mail,
 * as the console's diff carries none. Against the emulator, through the CLI.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { cli, emulator as startEmulator, makeProject, person, type Project } from '../support/project.js';

const SECRETS = ['Zelda Quux', 'zelda.quux@example.org', 'Yorick Vane', 'yorick@example.org', 'Xenia Broken', 'xenia@example.org', 'Wanda Orphan', 'Vera Twin', 'Ulla Formula', 'Grandmaster'];
const rows = [
  person(1, { name: 'Zelda Quux', email: 'zelda.quux@example.org' }),
  person(2, { name: 'Yorick Vane', email: 'yorick@example.org' }),
  person(3, { name: 'Xenia Broken', email: 'xenia@example.org', level: 'Grandmaster' }), // rejected: unknown option
  person(4, { name: 'Vera Twin', email: 'yorick@example.org' }), // probably Yorick: listed with the evidence
  person(5, { name: '=Ulla Formula' }), // synced with a warning: a formula-like value
  person(6, { name: 'Wanda Orphan' }), // gone from the roster: an orphan named as last applied
];

let running: RunningEmulator;
let project: Project;

beforeAll(async () => {
  running = await startEmulator();
  project = await makeProject([rows[0]!, rows[5]!], { mode: 'upsert' });
  const first = await cli(running, project.dir, ['sync', project.pipeline, '--create-group']);
  expect(first.code, first.stderr).toBe(0);
  // The next plan updates Zelda (a new e-mail), creates Yorick, Vera and Ulla, rejects Xenia and leaves Wanda an orphan.
  await project.writeRoster([{ ...rows[0]!, email: 'zelda.quux@example.org; zq@example.org' }, ...rows.slice(1, 5)]);
});

afterAll(async () => {
  await running.close();
  await rm(project.dir, { recursive: true, force: true });
});

async function plan(dir: string, mask: boolean) {
  const summary = join(project.dir, `${dir}-summary.md`);
  const run = await cli(running, project.dir, ['plan', project.pipeline, '--report-dir', dir, ...(mask ? ['--mask'] : [])], { GITHUB_STEP_SUMMARY: summary });
  expect(run.code, run.stderr).toBe(2); // a row is rejected
  const read = (name: string) => readFile(join(project.dir, dir, name), 'utf8');
  return {
    'report.md': await read('report.md'),
    'report.html': await read('report.html'),
    'report.json': await read('report.json'),
    'records.jsonl': await read('records.jsonl'),
    'rejected.csv': await read('rejected.csv'),
    'job summary': await readFile(summary, 'utf8'),
    console: run.stdout + run.stderr,
  };
}

describe('plan --mask', () => {
  it('leaves no roster name or e-mail in any report file', async () => {
    const files = await plan('masked', true);
    for (const [file, text] of Object.entries(files)) {
      for (const secret of SECRETS) expect(text, `${file} shows ${secret}`).not.toContain(secret);
    }
    const report = JSON.parse(files['report.json']) as { records: { clientId: string; changes: { after?: unknown }[] }[]; rejectedRows: { name?: string; values: Record<string, unknown> }[] };
    // What a drift check is read for stays: which records change, and which rows were rejected.
    expect(report.records.map((record) => record.clientId).sort()).toEqual(['p1', 'p2', 'p4', 'p5']);
    expect(report.records.find((record) => record.clientId === 'p2')!.changes.some((change) => change.after === '(masked)')).toBe(true);
    expect(report.rejectedRows[0]).toMatchObject({ name: '(masked)', values: { ID: '(masked)', Level: '(masked)' } });
    expect(files['report.html']).toContain('(masked)');
  });

  it('without --mask the same files do carry them (the reports are for the office)', async () => {
    const files = await plan('plain', false);
    expect(files['report.json']).toContain('Yorick Vane');
    expect(files['records.jsonl']).toContain('Yorick Vane');
    // The parts --mask must cover are there to be masked: the orphan's name, the warning, the pair.
    for (const secret of ['Wanda Orphan', 'Ulla Formula', 'Vera Twin']) expect(files['report.html']).toContain(secret);
    expect(files['report.html']).toContain('Yorick Vane');
    expect(files['rejected.csv']).toContain('xenia@example.org');
  });
});
