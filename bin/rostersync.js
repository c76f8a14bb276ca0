#!/usr/bin/env node
// The installed command: runs the compiled CLI in dist/ (`npm run build`; `npm ci` and `npm pack`
// build it through `prepare`). For the TypeScript sources, use bin/rostersync-dev.js.
import { existsSync } from 'node:fs';
import { staleBuildNote } from './stale-build.js';
import { start } from './start.js';

await start(async () => {
  if (!existsSync(new URL('../dist/cli/main.js', import.meta.url))) {
    process.stderr.write('error: rostersync is not built (dist/ is missing)\nhint: run `npm run build` in the rostersync checkout, or use bin/rostersync-dev.js to run the TypeScript sources.\n');
    process.exit(1);
  }
  const stale = staleBuildNote(new URL('..', import.meta.url));
  if (stale) process.stderr.write(stale);
  const [{ main }, { processIo, drainProcessOutputs }] = await Promise.all([import('../dist/cli/main.js'), import('../dist/cli/io.js')]);
  return { main, processIo, drainProcessOutputs };
});
