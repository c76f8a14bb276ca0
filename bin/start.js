// The process around the CLI, shared by the published bin (compiled dist/) and the development
// bin (TypeScript sources through tsx): the --version fast path, signals and the exit code.
import { readFileSync } from 'node:fs';

/**
 * @param {() => Promise<{ main: (argv: string[], io: unknown) => Promise<number>, processIo: (signal?: AbortSignal) => unknown, drainProcessOutputs: () => Promise<void> }>} loadCli
 */
export async function start(loadCli) {
  const argv = process.argv.slice(2);
  // `rostersync --version` is what scripts and health checks call most; it answers from
  // package.json without loading the parser and the commands (bench/startup.ts measures it).
  if (argv.length === 1 && argv[0] === '--version') {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    process.stdout.write(`${pkg.version}\n`);
    return;
  }

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
  const { main, processIo, drainProcessOutputs } = await loadCli();
  process.exitCode = await main(argv, processIo(stop.signal));
  // Exiting before stdout and stderr drained would cut what a pipe has not taken yet (64 KiB).
  await drainProcessOutputs();
  // Pending timers (heartbeats, idle sockets) must not keep a finished command alive.
  setImmediate(() => process.exit(process.exitCode));
}
