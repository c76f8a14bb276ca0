/**
 * Figures of the value corpora (test/fixtures/values/): `last_first` on real-world names,
 * `email` on internationalised and look-alike addresses, and cells of only invisible characters,
 * each judged right, refused (or warned) with the right reason, refused for a wrong reason, or
 * silently wrong (a value sent changed, or a look-alike sent without a word). With --dist=<dir>
 * another build is judged on the same cases, for a before/after table.
 *
 *   npx tsx bench/value-cases.ts [--dist=<dir>]
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '..');
const distArg = process.argv.slice(2).find((arg) => arg.startsWith('--dist='))?.slice('--dist='.length);
const base = distArg === undefined ? resolve(ROOT, 'src') : resolve(distArg);
const ext = distArg === undefined ? 'ts' : 'js';
type Result = { ok: boolean; value?: string; message?: string; warning?: { code: string; message: string } };
const transforms = (await import(pathToFileURL(resolve(base, 'mapping', `transforms.${ext}`)).href)) as { lastFirst(v: string): Result; checkEmail(v: string): Result };
const fieldPlan = (await import(pathToFileURL(resolve(base, 'mapping', `field-plan.${ext}`)).href)) as { isEmptyCell(v: string): boolean };

const fixture = <T>(name: string): T => JSON.parse(readFileSync(resolve(ROOT, 'test', 'fixtures', 'values', name), 'utf8')) as T;
type Outcome = 'right' | 'refused-right' | 'refused-wrong' | 'silently-wrong';
const counts: Record<Outcome, number> = { right: 0, 'refused-right': 0, 'refused-wrong': 0, 'silently-wrong': 0 };
const notRight: string[] = [];
function count(what: string, outcome: Outcome): void {
  counts[outcome]++;
  if (outcome === 'refused-wrong' || outcome === 'silently-wrong') notRight.push(`  ${what}: ${outcome}`);
}

for (const { input, expected, warning } of fixture<Array<{ input: string; expected: string; warning?: boolean }>>('names-real-world.json')) {
  const result = transforms.lastFirst(input);
  const warned = result.warning !== undefined;
  if (result.value === expected) count(input, warned === (warning ?? false) ? (warned ? 'refused-right' : 'right') : 'refused-wrong');
  else count(input, warned ? 'refused-wrong' : 'silently-wrong');
}
for (const { input, value, valid, warning } of fixture<Array<{ input: string; value?: string; valid?: false; warning?: string }>>('emails-international.json')) {
  const result = transforms.checkEmail(input);
  if (valid === false) count(input, result.ok ? 'silently-wrong' : 'refused-right');
  else if (!result.ok) count(input, 'refused-wrong');
  else if (warning !== undefined) count(input, result.warning?.message.includes(warning) ? 'refused-right' : result.warning ? 'refused-wrong' : 'silently-wrong');
  else count(input, result.value !== value ? 'silently-wrong' : result.warning ? 'refused-wrong' : 'right');
}
for (const invisible of ['\u200b', '\u2060\u200b', '\ufeff', '\u3164', '\u200e', ' \u200b ']) count(JSON.stringify(invisible), fieldPlan.isEmptyCell(invisible) ? 'right' : 'silently-wrong');

const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
const out = [`Value cases, build ${distArg ?? 'src'}`, '', '| group | cases | right | refused or warned, right reason | refused, wrong reason | silently wrong |', '| --- | ---: | ---: | ---: | ---: | ---: |'];
out.push(`| values | ${total} | ${counts.right} | ${counts['refused-right']} | ${counts['refused-wrong']} | ${counts['silently-wrong']} |`);
if (notRight.length > 0) out.push('', 'Not right:', ...notRight);
process.stdout.write(`${out.join('\n')}\n`);
