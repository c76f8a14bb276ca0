/**
 * action.yml cannot run here (no GitHub runner), so its wiring is checked statically: every input it
 * uses is declared, no input is pasted into a shell script (script injection: inputs reach `run:`
 * only through `env:`), the state is saved even when the run fails, and the command it runs is one
 * the CLI has.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { commandName, lazyCommands } from '../../src/cli/commands/index.js';
import { reviewArtifactName } from '../../src/review/context.js';

interface Step {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  run?: string;
  shell?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}

interface Action {
  inputs: Record<string, { required?: boolean; default?: string; description: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}

const action = parse(readFileSync(fileURLToPath(new URL('../../action.yml', import.meta.url)), 'utf8')) as Action;
const steps = action.runs.steps;

describe('action.yml', () => {
  it('is a composite action whose inputs used are all declared and described', () => {
    expect(action.runs.using).toBe('composite');
    const text = JSON.stringify(action);
    const used = new Set([...text.matchAll(/inputs\.([a-z-]+)/g)].map((m) => m[1]!));
    for (const name of used) expect(Object.keys(action.inputs), name).toContain(name);
    for (const [name, input] of Object.entries(action.inputs)) {
      expect(input.description, name).toBeTruthy();
      if (!input.required) expect(input.default, name).toBeDefined();
    }
    expect(action.inputs.pipeline?.required).toBe(true);
    expect(action.inputs['api-key']?.required).toBe(true);
  });

  it('never expands an expression inside a shell script', () => {
    for (const step of steps.filter((s) => s.run)) {
      expect(step.run, step.name).not.toMatch(/\$\{\{/);
    }
  });

  it('passes the API key only through the environment of the run step', () => {
    const run = steps.find((s) => s.id === 'run');
    expect(run?.env?.SERVICE_API_KEY).toBe('${{ inputs.api-key }}');
    expect(steps.filter((s) => JSON.stringify(s).includes('inputs.api-key'))).toEqual([run]);
  });

  it('restores the state before the run and saves it after, whatever the run did', () => {
    const restore = steps.findIndex((s) => s.uses?.startsWith('actions/cache/restore@'));
    const run = steps.findIndex((s) => s.id === 'run');
    const save = steps.findIndex((s) => s.uses?.startsWith('actions/cache/save@'));
    expect(restore).toBeGreaterThanOrEqual(0);
    expect(restore).toBeLessThan(run);
    expect(save).toBeGreaterThan(run);
    expect(steps[save]!.if).toMatch(/^always\(\)/);
    expect(steps[save]!.with?.key).toBe(steps[restore]!.with?.key);
    expect(steps[restore]!.with?.['restore-keys']).toBeTruthy();
    expect(steps[save]!.with?.key).toContain('github.run_id');
  });

  it('runs only commands the CLI has, with the state directory and a report folder', () => {
    const script = steps.find((s) => s.id === 'run')!.run!;
    const allowed = /case "\$RS_COMMAND" in ([^)]+)\)/.exec(script)?.[1]?.split('|').map((c) => c.trim()) ?? [];
    expect(allowed).toEqual(['sync', 'plan', 'review', 'apply-reviewed']);
    for (const command of allowed) expect(lazyCommands.map(commandName)).toContain(command);
    expect(script).toContain('--state-dir "$RS_STATE_DIR"');
    expect(script).toContain('--report-dir "$report_dir"');
    expect(script).toMatch(/echo "exit-code=\$code" >> "\$GITHUB_OUTPUT"/);
  });

  it('installs without the development dependencies, uploads only the summary by default, under a name unique per job and pipeline, and keeps the history with the state', () => {
    const install = steps.find((s) => s.name === 'Install rostersync')!.run!;
    expect(install).toMatch(/^npm ci --omit=dev /m);
    expect(install).not.toMatch(/^npm ci(?!.*--omit=dev)/m);
    expect(action.inputs['upload-report']?.default).toBe('summary');
    const script = steps.find((s) => s.id === 'run')!.run!;
    expect(script).toMatch(/summary\) printf 'upload<<EOF\\n%s\\n%s\\nEOF\\n' "\$report_dir\/report\.md" "\$RS_STATE_DIR\/history"/);
    expect(script).toContain('artifact=rostersync-report-$GITHUB_JOB-');
    expect(script).toContain('export ROSTERSYNC_REPORT_DIR="$RS_STATE_DIR/history"');
    const upload = steps.find((s) => s.uses?.startsWith('actions/upload-artifact'))!;
    expect(upload.with).toMatchObject({ name: '${{ steps.run.outputs.artifact }}', path: '${{ steps.run.outputs.upload }}' });
  });

  it('uploads the review folder under the name apply-reviewed looks for, and does not save the state a review restored', () => {
    const script = steps.find((s) => s.id === 'run')!.run!;
    expect(script).toContain('review) echo "review-dir=$review_dir" >> "$GITHUB_OUTPUT"; target=(--out-dir "$review_dir")');
    const upload = steps.find((s) => s.name === 'Upload the reviewed plans')!;
    const sha = 'c0ffee'.padEnd(40, '0');
    expect(upload.with?.name?.replace('${{ github.event.pull_request.head.sha }}', sha)).toBe(reviewArtifactName(sha));
    expect(upload.with?.path).toBe('${{ steps.run.outputs.review-dir }}');
    const save = steps.find((s) => s.uses?.startsWith('actions/cache/save@'))!;
    expect(save.if).toContain("inputs.command != 'review'");
    const run = steps.find((s) => s.id === 'run')!;
    expect(run.env?.GITHUB_TOKEN).toBe('${{ inputs.github-token }}');
    expect(steps.filter((s) => JSON.stringify(s).includes('inputs.github-token'))).toEqual([run]);
  });
});
