#!/usr/bin/env node
// Development entry: the same CLI straight from the TypeScript sources through tsx, so tests and
// contributors never run a stale dist/. Not published (see `files` in package.json).
import { register } from 'tsx/esm/api';
import { start } from './start.js';

register();
await start(async () => {
  const [{ main }, { processIo, drainProcessOutputs }] = await Promise.all([import('../src/cli/main.ts'), import('../src/cli/io.ts')]);
  return { main, processIo, drainProcessOutputs };
});
