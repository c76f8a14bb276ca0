/**
 * Redaction of secrets in any text that may reach a person: error messages, logs, reports.
 *
 * A service or proxy can echo the API key back changed: percent-encoded in a URL or a form body
 * (`a%2Fb`, `a+b`), or upper- or lower-cased (`X-APIKEY: ABC…` in a debug page). Each secret is
 * therefore matched in all of those forms, case-insensitively.
 */

const REDACTED = '[redacted]';

/** The forms a secret can be echoed in, longest first so an encoded form wins over a prefix of it. */
function secretForms(secret: string): string[] {
  const component = encodeURIComponent(secret);
  const forms = new Set([secret, component, component.replace(/%20/g, '+'), encodeURI(secret)]);
  return [...forms].filter((form) => form.length > 0).sort((a, b) => b.length - a.length);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const patternCache = new Map<string, RegExp>();

/** One case-insensitive pattern matching every form of every secret. */
function patternFor(secrets: readonly string[]): RegExp | undefined {
  const usable = secrets.filter((s) => s.length > 0);
  if (usable.length === 0) return undefined;
  const cacheKey = usable.join('\u0000');
  let pattern = patternCache.get(cacheKey);
  if (!pattern) {
    const alternatives = [...new Set(usable.flatMap(secretForms))].sort((a, b) => b.length - a.length).map(escapeRegExp);
    pattern = new RegExp(alternatives.join('|'), 'gi');
    // A long-running process sees few distinct keys; keep the cache from growing without bound anyway.
    if (patternCache.size > 32) patternCache.clear();
    patternCache.set(cacheKey, pattern);
  }
  return pattern;
}

/** Replaces every occurrence of each secret, in any of its echoed forms, with `[redacted]`. */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  const pattern = patternFor(secrets.filter((s): s is string => typeof s === 'string'));
  if (!pattern || text.length === 0) return text;
  pattern.lastIndex = 0;
  return text.replace(pattern, REDACTED);
}
