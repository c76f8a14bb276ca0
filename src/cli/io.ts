/** The process surroundings a command needs, injectable so tests run commands in-process. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Signal that asks a long-running command to stop gracefully (SIGINT/SIGTERM in the real CLI). */
  signal?: AbortSignal;
}

export function processIo(signal?: AbortSignal): CliIo {
  quietWhenClosed(process.stdout);
  quietWhenClosed(process.stderr);
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(), ...(signal ? { signal } : {}) };
}

const guarded = new WeakSet<NodeJS.WritableStream>();

/**
 * A reader that went away (`rostersync plan | head -1`) ends the printing, not the command: the
 * stream's EPIPE would otherwise be an uncaught error with a stack trace, and a sync would stop
 * before its journal and report. Node then drops every later write to the destroyed stream, so
 * the command finishes its work and exits with its own code.
 */
function quietWhenClosed(stream: NodeJS.WritableStream): void {
  if (guarded.has(stream)) return;
  guarded.add(stream);
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
    throw error;
  });
}

/**
 * Resolves once everything written to the stream so far has been handed to the system (or the
 * stream can take no more). A pipe takes 64 KiB at a time: exiting before it drained cut every
 * larger output there, `plan --json | jq` and `state export | gzip` included. The callback of an
 * empty write runs after every earlier write, as writes complete in order.
 */
export function drained(stream: NodeJS.WritableStream): Promise<void> {
  const writable = stream as NodeJS.WritableStream & { destroyed?: boolean; writableEnded?: boolean };
  if (writable.destroyed === true || writable.writableEnded === true) return Promise.resolve();
  return new Promise((resolve) => {
    writable.write('', () => resolve());
  });
}

/** Waits until the process's stdout and stderr have drained: the last step before exiting. */
export async function drainProcessOutputs(): Promise<void> {
  await Promise.all([drained(process.stdout), drained(process.stderr)]);
}
