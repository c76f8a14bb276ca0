/**
 * A loaded machine, played on purpose: with PACING_STALL_MS=<ms> set, the process that imports
 * this module blocks its event loop for a random 0–<ms> ms at random moments (every 0–400 ms,
 * 200 ms on average), as a busy core, a garbage collection or another tenant does. The pacing
 * bench imports it into its own process and preloads it (`node --import`) into the emulator's,
 * so traces can show what the limiter does when timers fire late and answers come in bunches.
 * Without the variable it does nothing. Plain JavaScript, so the emulator's `node` preloads it
 * before tsx is registered. The stalls come from a fixed seed: two runs play the same load.
 */
const maxStallMs = Number(process.env.PACING_STALL_MS ?? 0);
if (maxStallMs > 0) {
  let seed = 0x2545f491;
  const random = () => {
    // xorshift32: enough for timings, and the same sequence on every run.
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const stallLater = () => {
    setTimeout(() => {
      const until = performance.now() + random() * maxStallMs;
      while (performance.now() < until) {
        // Busy: the event loop does nothing else meanwhile.
      }
      stallLater();
    }, random() * 400).unref();
  };
  stallLater();
}
