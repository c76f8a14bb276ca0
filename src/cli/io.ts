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
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(), ...(signal ? { signal } : {}) };
}
