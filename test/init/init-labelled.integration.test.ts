/**
 * `rostersync init --yes` on the labelled rosters (test/fixtures/init/labelled/, written by its
 * make-labelled.ts): every column is right, asked (a question init refuses to answer alone), or
 * missed (left out though a person maps it); none is taken wrong. A wrong column taken silently
 * is the one outcome that reaches the service unnoticed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { columnView } from '../support/init-columns.js';
import { ROOT, runCli, tempDir, writeFieldsFile } from '../validate/helpers.js';

const LABELLED = join(ROOT, 'test/fixtures/init/labelled');
const CASES = JSON.parse(readFileSync(join(LABELLED, 'cases.json'), 'utf8')) as Record<string, { shape: string; expected: Record<string, string> }>;

type Outcome = 'right' | 'asked' | 'missed' | 'wrong-taken';
const tally: Record<Outcome, number> = { right: 0, asked: 0, missed: 0, 'wrong-taken': 0 };
const wrong: string[] = [];
const missed: string[] = [];

let dir: string;
let fieldsFile: string;
beforeAll(() => {
  dir = tempDir('rostersync-init-labelled-');
  fieldsFile = writeFieldsFile(dir);
});
afterAll(() => {
  // The figure for docs/mapping.md ("How init decides"); printed so a rerun shows it.
  console.log(`init on ${Object.keys(CASES).length} labelled rosters: ${JSON.stringify(tally)}; missed: ${missed.join(', ') || 'none'}`);
});

/** The columns init asked about: each "ASK" line of its summary, the guess and its rivals. */
function askedColumns(stdout: string): Set<string> {
  const asked = new Set<string>();
  for (const line of stdout.split('\n')) {
    const m = /^ {2}ASK {4}(.+?) → .+?(?: \(or (.+)\))?$/.exec(line);
    if (!m) continue;
    for (const c of m[1]!.split(' + ')) asked.add(c);
    for (const alt of m[2]?.split(', or ') ?? []) for (const c of alt.replace(/^"|"$/g, '').split(' + ')) asked.add(c);
  }
  return asked;
}

describe('init --yes on the labelled rosters', () => {
  it.each(Object.keys(CASES))('%s: no column taken wrong', async (name) => {
    const { expected } = CASES[name]!;
    const mapping = join(dir, `${name}.mapping.yaml`);
    const run = await runCli(['init', join(LABELLED, `${name}.csv`), '--fields-file', fieldsFile, '--yes', '--pipeline', join(dir, `${name}.pipeline.yaml`), '--mapping', mapping]);
    const asked = askedColumns(run.stdout);
    // A question is never answered alone: --yes then exits 1 and names it.
    const noId = run.stderr.includes('no column looks like an id or holds emails');
    expect(run.code, run.stderr).toBe(asked.size > 0 || noId ? 1 : 0);
    if (asked.size > 0) expect(run.stderr).toContain('init did not choose');
    const view = columnView(mapping, Object.keys(expected));
    for (const [column, want] of Object.entries(expected)) {
      const got = view[column]!.split(';')[0]!;
      const outcome: Outcome = got !== 'left out' ? (got === want ? 'right' : 'wrong-taken') : asked.has(column) ? 'asked' : want === 'left out' ? 'right' : 'missed';
      tally[outcome]++;
      if (outcome === 'missed') missed.push(`${name}: "${column}"`);
      if (outcome === 'wrong-taken') wrong.push(`${name}: "${column}" → ${got}, a person maps it to ${want}`);
    }
    expect(wrong.filter((w) => w.startsWith(`${name}:`))).toEqual([]);
  });
});
