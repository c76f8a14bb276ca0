/**
 * What a client_id must be to travel in a URL path (docs/service-contract.md, calls 1–4: `/author-from-group/{group_id}/{client_id}/`).
 * The client percent-encodes every id, but proxies and web frameworks in front of a service decode
 * `%2F` into a path separator, resolve `.` and `..` away and refuse control characters, and the
 * service keeps ids of a bounded length. Such an id would fail at every write, every night; mapping
 * rejects its row instead (`validate` names it).
 */

/**
 * Longest client_id accepted. The spec names no limit; 255 is the common column size of web
 * frameworks (a Django CharField's usual max_length), and the emulator's `strictClientIds` quirk
 * enforces the same.
 */
export const MAX_CLIENT_ID_LENGTH = 255;

/** Why `id` cannot be a client_id in a URL path, or undefined when it can. */
export function clientIdPathProblem(id: string): string | undefined {
  if (id === '.' || id === '..') return `"${id}" is resolved away in a URL path`;
  if (id.includes('/')) return 'contains "/", which servers and proxies read as a path separator even when encoded';
  if (id.includes('\\')) return 'contains "\\", which some servers read as a path separator';
  const control = /[\u0000-\u001f\u007f-\u009f]/.exec(id);
  if (control) return `contains the control character U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  // Counted in characters as the service would see them after decoding (code points).
  const length = [...id].length;
  if (length > MAX_CLIENT_ID_LENGTH) return `is ${length} characters long; the service accepts at most ${MAX_CLIENT_ID_LENGTH}`;
  return undefined;
}
