#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so a fresh `npm ci` needs no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const { processIo } = await import('../src/cli/io.ts');

// The first SIGINT/SIGTERM asks the running command to stop gracefully (no new calls, in-flight
// calls finish, journal and report written, exit 130); a second one exits at once.
const stop = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (stop.signal.aborted) process.exit(130);
    process.stderr.write(`\n${signal}: finishing calls in flight, then stopping (send it again to exit now)\n`);
    stop.abort();
  });
}
process.exitCode = await main(process.argv.slice(2), processIo(stop.signal));
// Pending timers (heartbeats, idle sockets) must not keep a finished command alive.
setImmediate(() => process.exit(process.exitCode));
