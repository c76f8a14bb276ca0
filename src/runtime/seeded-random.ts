/**
 * A seeded PRNG (mulberry32): small, fast, and the same seed gives the same sequence. Shared by the
 * emulator's fault dice, the benchmark and sample generators, the crash campaign and the fixture
 * generator. Not for anything secret.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
