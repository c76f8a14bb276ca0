/**
 * Escaping for the HTML pages. Every string that did not come from this codebase (roster cells,
 * service errors, file names, pipeline names) goes through `escapeHtml` before it touches markup.
 */

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * A relative link from a page to a file, as an escaped attribute value. Each segment is
 * percent-encoded, so a directory named `javascript:alert(1)` becomes `javascript%3Aalert(1)`,
 * a path, never a scheme; `..` segments are kept (they stay relative).
 */
export function relativeHref(segments: readonly string[]): string {
  const encoded = segments.filter((s) => s !== '' && s !== '.').map((s) => (s === '..' ? s : encodeURIComponent(s)));
  return escapeHtml(encoded.length > 0 ? `./${encoded.join('/')}` : './');
}

/** `<time>` with the UTC instant in the text and the title; the page script swaps the text to local time. */
export function timeHtml(iso: string): string {
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return escapeHtml(iso);
  const utc = `${when.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  return `<time datetime="${escapeHtml(when.toISOString())}" title="${utc}">${utc}</time>`;
}

/** A run's outcome as the coloured badge every page shows, coloured by its code and saying it in words (format.ts `outcomeWords`). */
export function outcomeBadgeHtml(outcome: string, words: string = outcome.replace('_', ' ')): string {
  return `<span class="badge ${escapeHtml(outcome)}">${escapeHtml(words)}</span>`;
}
