#!/usr/bin/env node
// Runs a TypeScript script (benchmarks, generators) through tsx: `node bin/run-ts.js bench/run.ts`.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

register();
const [script, ...rest] = process.argv.slice(2);
if (!script) {
  console.error('usage: node bin/run-ts.js <script.ts> [args...]');
  process.exit(1);
}
process.argv = [process.argv[0], resolve(script), ...rest];
await import(pathToFileURL(resolve(script)).href);
