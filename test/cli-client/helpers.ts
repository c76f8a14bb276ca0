import { Writable } from 'node:stream';
import { main } from '../../src/cli/main.js';

export function sink() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

/** Runs the CLI in-process and captures its output. */
export async function run(argv: string[], env: NodeJS.ProcessEnv, cwd = process.cwd()) {
  const stdout = sink();
  const stderr = sink();
  const code = await main(argv, { stdout: stdout.stream, stderr: stderr.stream, env, cwd });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}
