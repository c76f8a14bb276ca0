/**
 * "Did you mean" suggestions for names a person typed: mapping columns and custom fields, keys of
 * pipeline and mapping files, command-line options, author fields. One rule everywhere, so a typo
 * is caught the same way wherever it is made.
 */

/** Levenshtein distance, for "did you mean" suggestions. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = prev[j]!;
      prev[j] = Math.min(above + 1, prev[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return prev[b.length]!;
}

/** The candidate closest to `wanted` (case-insensitive), when it is close enough to be a likely typo. */
export function closestMatch(wanted: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const w = wanted.toLowerCase();
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  if (best === undefined) return undefined;
  const limit = Math.max(2, Math.floor(Math.max(w.length, best.length) / 3));
  if (bestDistance <= limit) return best;
  // A shortened name ("Expertise" for "Expertise level", "duplicates" for "duplicate_client_ids")
  // is a likely slip too.
  if (w.length < 4) return undefined;
  const stem = w.length >= 5 && w.endsWith('s') ? w.slice(0, -1) : w;
  return candidates.find((c) => c.toLowerCase().includes(w)) ?? candidates.find((c) => c.toLowerCase().includes(stem));
}
