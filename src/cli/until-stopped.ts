/** Long-running commands (`emulator`, `webhook serve`) wait here until they are told to stop. */

/** Resolves on the injected abort signal, or on SIGINT/SIGTERM when running as a process. */
export function untilStopped(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolvePromise) => {
    if (signal) {
      if (signal.aborted) resolvePromise();
      else signal.addEventListener('abort', () => resolvePromise(), { once: true });
      return;
    }
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolvePromise();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
