/**
 * The emulator for a test file: started on 127.0.0.1, port 0 (a free port), in-process.
 *
 *   const emu = useEmulator();              // starts in beforeAll, closes in afterAll
 *   it('...', async () => { await fetch(emu().url) });
 */
import { afterAll, beforeAll } from 'vitest';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '../../src/emulator/server.js';

/** Starts an emulator on a free loopback port; the caller closes it. */
export function emulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  return startEmulator({ port: 0, ...options });
}

/** One emulator for the calling test file; the getter throws if read before beforeAll ran. */
export function useEmulator(options: EmulatorOptions = {}): () => RunningEmulator {
  let running: RunningEmulator | undefined;
  beforeAll(async () => {
    running = await emulator(options);
  });
  afterAll(async () => {
    await running?.close();
  });
  return () => {
    if (!running) throw new Error('useEmulator(): the emulator is read before beforeAll started it');
    return running;
  };
}
