/**
 * One answer per question: over the committed rosters (the sample pipelines and the labelled
 * rosters of test/fixtures/init/labelled/, mapped by `init`), an overlay and an imported state,
 * `validate`, `plan`, `sync --dry-run` and `sync` give the same valid and rejected rows and the
 * same exit code (0, 2 for rejected rows, 3 over `policy.rejects`). Duplicate people are left
 * neutral: no case turns the duplicate-people policy on.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { copyTracked } from '../support/tracked-copy.js';
import { ROOT, writeFieldsFile } from '../validate/helpers.js';
import { cli, emulator } from '../support/project.js';

interface Answer {
  command: string;
  exit: number;
  valid: number;
  rejected: number;
}

let emu: RunningEmulator;
let work: string;
let fields: string;
beforeAll(async () => {
  emu = await emulator();
  work = mkdtempSync(join(tmpdir(), 'rostersync-differential-'));
  copyTracked(ROOT, ['pipelines', 'mappings', 'samples'], work);
  fields = writeFieldsFile(work);
});
afterAll(async () => {
  await emu.close();
  console.log(`differential: ${cases} cases, ${cases * 4} commands compared`);
});
let cases = 0;

/** The four commands on one pipeline, each with a fresh look at the same roster and state. */
async function fourAnswers(pipeline: string, dir = work): Promise<Answer[]> {
  const answers: Answer[] = [];
  const validate = await cli(emu, dir, ['validate', pipeline, '--json']);
  const v = JSON.parse(validate.stdout) as { counts: { valid: number; rejected: number } };
  answers.push({ command: 'validate', exit: validate.code, valid: v.counts.valid, rejected: v.counts.rejected });
  for (const argv of [['plan'], ['sync', '--dry-run'], ['sync']]) {
    const run = await cli(emu, dir, [...argv, pipeline, '--create-group', '--json']);
    const report = JSON.parse(run.stdout) as { input: { valid: number; rejected: number } };
    answers.push({ command: argv.join(' '), exit: run.code, valid: report.input.valid, rejected: report.input.rejected });
  }
  cases++;
  return answers;
}

function expectOneAnswer(answers: Answer[]): void {
  const [first, ...rest] = answers;
  for (const other of rest) expect({ ...other, command: first!.command }, `${other.command} vs ${first!.command}`).toEqual(first);
}

/** A pipeline's group made unique per case (every case syncs for real) and its owner an existing team. */
function ownPipeline(file: string, name: string, extra = ''): string {
  const text = readFileSync(file, 'utf8')
    .replace(/owner_team: .*/, 'owner_team: "Editorial Office"')
    .replace(/^(\s+name: ).*$/m, `$1"${name}"`);
  writeFileSync(file, `${text}${extra}`);
  return file;
}

describe('validate, plan, sync --dry-run and sync agree', () => {
  it.each(['reviewers', 'legacy', 'editorial-board', 'editorial-reviewers'])('sample pipeline %s', async (name) => {
    const pipeline = ownPipeline(join(work, 'pipelines', `${name}.yaml`), `diff ${name}`);
    expectOneAnswer(await fourAnswers(pipeline));
  });

  it('over policy.rejects: every command says a guard refuses (exit 3)', async () => {
    const pipeline = join(work, 'pipelines', 'legacy-ceiling.yaml');
    cpSync(join(work, 'pipelines', 'legacy.yaml'), pipeline);
    ownPipeline(pipeline, 'diff legacy ceiling', '  rejects: { max_count: 0 }\n');
    const answers = await fourAnswers(pipeline);
    expectOneAnswer(answers);
    expect(answers[0]!.exit).toBe(3);
  });

  it('with an overlay (the rejected rows written back, unchanged)', async () => {
    const pipeline = join(work, 'pipelines', 'legacy-overlay.yaml');
    cpSync(join(work, 'pipelines', 'legacy.yaml'), pipeline);
    ownPipeline(pipeline, 'diff legacy overlay');
    const rejected = join(work, 'legacy-rejected.csv');
    expect((await cli(emu, work, ['validate', pipeline, '--rejected-out', rejected])).code).toBe(2);
    writeFileSync(pipeline, readFileSync(pipeline, 'utf8').replace(/(\n {4}header_row: 2[^\n]*\n)/, `$1  overlays:\n    - { file: ${JSON.stringify(rejected)} }\n`));
    expectOneAnswer(await fourAnswers(pipeline));
  });

  it('after state import: an exported state moved into a fresh one', async () => {
    const pipeline = ownPipeline(join(work, 'pipelines', 'reviewers.yaml'), 'diff reviewers');
    const exported = join(work, 'reviewers.jsonl');
    expect((await cli(emu, work, ['state', 'export', pipeline, '--out', exported])).code).toBe(0);
    const fresh = join(work, 'fresh-state');
    expect((await cli(emu, work, ['state', 'import', pipeline, '--jsonl', exported, '--state-dir', fresh])).code).toBe(0);
    const answers: Answer[] = [];
    const validate = await cli(emu, work, ['validate', pipeline, '--json']);
    const v = JSON.parse(validate.stdout) as { counts: { valid: number; rejected: number } };
    answers.push({ command: 'validate', exit: validate.code, valid: v.counts.valid, rejected: v.counts.rejected });
    for (const argv of [['plan'], ['sync', '--dry-run'], ['sync']]) {
      const run = await cli(emu, work, [...argv, pipeline, '--state-dir', fresh, '--json']);
      const report = JSON.parse(run.stdout) as { input: { valid: number; rejected: number }; counts: Record<string, { planned: number }> };
      answers.push({ command: argv.join(' '), exit: run.code, valid: report.input.valid, rejected: report.input.rejected });
      // The imported inventory is in step: nothing to create, update or delete.
      expect(['create', 'update', 'delete'].map((action) => report.counts[action]?.planned ?? 0), argv.join(' ')).toEqual([0, 0, 0]);
    }
    cases++;
    expectOneAnswer(answers);
  });

  const labelled = readdirSync(join(ROOT, 'test/fixtures/init/labelled')).filter((f) => f.endsWith('.csv'));
  it.for(labelled)('labelled roster %s, mapped by init', async (file, ctx) => {
    const stem = file.replace(/\.csv$/, '');
    const roster = join(work, file);
    cpSync(join(ROOT, 'test/fixtures/init/labelled', file), roster);
    const pipeline = join(work, `${stem}.pipeline.yaml`);
    const init = await cli(emu, work, ['init', roster, '--fields-file', fields, '--yes', '--pipeline', pipeline, '--mapping', join(work, `${stem}.mapping.yaml`)]);
    if (init.code !== 0) ctx.skip('init left a question open (test/init/init-labelled.integration.test.ts): no mapping until a person answers it');
    ownPipeline(pipeline, `diff ${stem}`);
    expectOneAnswer(await fourAnswers(pipeline));
  });
});
