/**
 * Waits until a condition holds, polling it, for state a test cannot await directly (a child's
 * output, a server's request log). Bounded: past `timeoutMs` it fails naming what it waited for.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitForOptions {
  /** What is awaited, for the failure message. */
  what: string;
  /** @default 5000 */
  timeoutMs?: number;
  /** @default 10 */
  everyMs?: number;
}

export async function waitFor<T>(condition: () => T | Promise<T>, { what, timeoutMs = 5000, everyMs = 10 }: WaitForOptions): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() >= deadline) throw new Error(`waited ${timeoutMs} ms for ${what}, in vain`);
    await sleep(everyMs);
  }
}
