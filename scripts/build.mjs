#!/usr/bin/env node
/**
 * `npm run build` (also run by `prepare`, so `npm ci` and `npm pack` produce dist/):
 * a clean dist/ compiled from src/ by tsconfig.build.json, plus the non-TypeScript files the code
 * reads beside itself (the emulator's default fixture). Cleaning first matters: a module moved or
 * deleted in src/ must not live on in dist/ and in the published package.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const dist = join(root, 'dist');

// Said first: on a fresh clone (`npm ci`, or `npx rostersync` installing it) tsc takes a minute
// or two, which must not look like a hang.
process.stderr.write('build: compiling src/ into dist/ with tsc (a minute or two on a fresh clone)...\n');
rmSync(dist, { recursive: true, force: true });

// ROSTERSYNC_TSC: a compiler installed elsewhere, so an install without dev dependencies (the
// GitHub Action) can still build.
const tsc = process.env.ROSTERSYNC_TSC ?? createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
// `--lenient` (the `prepare` hook): type errors are reported but do not fail an `npm install`;
// tsc still emits, and `npm test` / `npm run build` are the gates that fail on them.
const lenient = process.argv.includes('--lenient');
if (compiled.status !== 0 && !(lenient && existsSync(join(dist, 'cli', 'main.js')))) {
  process.stderr.write('build: tsc failed (see above)\n');
  process.exit(compiled.status ?? 1);
}
if (compiled.status !== 0) process.stderr.write('build: type errors above (dist/ was still emitted; `npm run build` fails on them)\n');

let assets = 0;
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || entry.name.endsWith('.ts')) continue;
  const from = join(entry.parentPath, entry.name);
  cpSync(from, join(dist, relative(src, from)));
  assets += 1;
}
process.stdout.write(`build: dist/ compiled from src/ (+${assets} asset file${assets === 1 ? '' : 's'})\n`);
