/**
 * A real rostersync process the campaign can SIGKILL: `WarmChild` forks sync-child.mjs, which
 * loads the CLI and waits; `run()` starts the command and `kill()` sends SIGKILL.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./sync-child.mjs', import.meta.url));

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export class WarmChild {
  private readonly child: ChildProcess;
  readonly ready: Promise<void>;
  /** Resolves when the process has exited and been reaped (so its pid no longer exists). */
  readonly exited: Promise<ChildExit>;
  private out = '';
  private err = '';

  constructor() {
    this.child = fork(CHILD, [], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], cwd: process.cwd(), env: { ...process.env, NO_COLOR: '1' } });
    this.child.stdout!.on('data', (chunk: Buffer) => (this.out += chunk.toString()));
    this.child.stderr!.on('data', (chunk: Buffer) => (this.err += chunk.toString()));
    this.ready = new Promise((resolve, reject) => {
      this.child.once('message', () => resolve());
      this.child.once('exit', (code) => reject(new Error(`sync child exited (${code}) before it was ready: ${this.err}`)));
    });
    // A spare child killed before it was used is not an error; `run()` still sees the rejection.
    this.ready.catch(() => {});
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => resolve({ code, signal, stdout: this.out, stderr: this.err }));
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Starts `rostersync <argv>` in the child's already-loaded CLI. */
  async run(argv: string[], cwd: string, env: Record<string, string>): Promise<void> {
    await this.ready;
    this.child.send({ argv, cwd, env });
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/** Keeps one child loaded ahead, so a trial never waits for tsx to start. */
export class ChildPool {
  private next: WarmChild | undefined;

  take(): WarmChild {
    const child = this.next ?? new WarmChild();
    this.next = new WarmChild();
    return child;
  }

  async close(): Promise<void> {
    const child = this.next;
    this.next = undefined;
    if (child) {
      child.kill();
      await child.exited;
    }
  }
}
