/**
 * Shared test support: the emulator's demo key, an output sink, and the in-process CLI runner
 * (the real `main` with injected streams, environment and working directory).
 */
import { Writable } from 'node:stream';
import { main } from '../../src/cli/main.js';

/** The API key of the emulator's default organization (src/emulator/default-fixture.yaml). */
export const DEMO_API_KEY = 'demo-key-0123456789';

/** A writable stream that keeps what is written, for a command's stdout or stderr. */
export function outputSink(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  /** The whole environment the command sees (nothing is inherited from the test process). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  signal?: AbortSignal;
}

/** Runs the CLI in-process and captures its output and exit code. */
export async function runCli(argv: string[], options: RunCliOptions = {}): Promise<CliRun> {
  const stdout = outputSink();
  const stderr = outputSink();
  const code = await main(argv, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    // Messages are read as a person at a terminal reads them; the JSON lines written off a
    // terminal are tested on their own (test/first-hour/stderr-format.test.ts).
    env: { ROSTERSYNC_LOG_FORMAT: 'human', ...options.env },
    cwd: options.cwd ?? process.cwd(),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** The environment of a command that talks to a running emulator with the demo key. */
export function emulatorEnv(emulator: { url: string }, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { SERVICE_BASE_URL: emulator.url, SERVICE_API_KEY: DEMO_API_KEY, ...extra };
}
