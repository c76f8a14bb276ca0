/**
 * What an error answer says, for a person (pure). The spec shows no error body (§ Errors 3), so
 * every common shape is read; see `describeErrorBody`.
 */

const EXCERPT_LENGTH = 200;

/** Text flattened to one line and cut to 200 characters, for messages. */
export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_LENGTH ? `${flat.slice(0, EXCERPT_LENGTH)}…` : flat;
}

/**
 * What an error answer says, for a person. The spec shows no error body (§ Errors 3), so every
 * common shape is read: the emulator's `{"ok": false, "error": {"code", "message"}}`,
 * `{"detail": ...}`, `{"error": "..."}`, field errors `{"name": ["This field is required."]}` (also
 * under `errors`), and HTML error pages (their title and visible text, not the markup).
 */
export function describeErrorBody(text: string, contentType: string, isJson: boolean): { message?: string; code?: string } {
  if (text.trim() === '') return {};
  if (!isJson) {
    if (/html/i.test(contentType) || /^\s*<(!doctype|html)/i.test(text)) {
      const page = htmlText(text);
      return page === "" ? {} : { message: `HTML page (${contentType || "no content type"}): ${page}` };
    }
    return { message: `non-JSON answer (${contentType || 'no content type'}): ${text}` };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { message: `invalid JSON: ${text}` };
  }
  if (typeof body === 'string') return { message: body };
  if (Array.isArray(body)) return { message: messagesOf(body) };
  if (typeof body !== 'object' || body === null) return {};
  const record = body as Record<string, unknown>;
  const inner = typeof record.error === 'object' && record.error !== null && !Array.isArray(record.error) ? (record.error as Record<string, unknown>) : record;
  const code = [inner.code, record.code].find((v): v is string => typeof v === 'string');
  const withCode = (message: string | undefined): { message?: string; code?: string } => ({
    ...(message !== undefined && message !== '' ? { message } : {}),
    ...(code !== undefined ? { code } : {}),
  });
  for (const candidate of [inner.message, inner.detail, record.detail, record.message, record.error, record.errors]) {
    if (candidate === undefined || candidate === null) continue;
    const message = messagesOf(candidate);
    if (message !== '') return withCode(message);
  }
  // Field errors: every key except the envelope's own holds a message or a list of them.
  const fields = Object.entries(record)
    .filter(([key]) => !['ok', 'code', 'status', 'error'].includes(key))
    .map(([key, value]) => {
      const message = messagesOf(value);
      return message === '' ? '' : key === 'non_field_errors' || key === '__all__' ? message : `${key}: ${message}`;
    })
    .filter((line) => line !== '');
  return withCode(fields.length ? fields.join('; ') : undefined);
}

/** Flattens a message, a list of messages or an object of field messages into one line. */
function messagesOf(value: unknown, depth = 0): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (depth > 3 || value === null || typeof value !== 'object') return '';
  if (Array.isArray(value)) return value.map((item) => messagesOf(item, depth + 1)).filter(Boolean).join('; ');
  const record = value as Record<string, unknown>;
  for (const key of ['message', 'msg', 'detail']) if (typeof record[key] === 'string') return record[key];
  return Object.entries(record)
    .map(([key, item]) => {
      const message = messagesOf(item, depth + 1);
      return message === '' ? '' : `${key}: ${message}`;
    })
    .filter(Boolean)
    .join('; ');
}

/** The readable text of an HTML page: its title, then its body text without tags, scripts or styles. */
function htmlText(html: string): string {
  const sample = html.slice(0, 64 * 1024);
  const decode = (s: string): string =>
    s
      .replace(/<[^>]*>/g, ' ')
      .replace(/&nbsp;/gi, ' ')
      .replace(/&lt;/gi, '<')
      .replace(/&gt;/gi, '>')
      .replace(/&quot;/gi, '"')
      .replace(/&#39;|&apos;/gi, "'")
      .replace(/&amp;/gi, '&')
      .replace(/\s+/g, ' ')
      .trim();
  const title = decode(/<title[^>]*>([\s\S]*?)<\/title>/i.exec(sample)?.[1] ?? '');
  const bodyMatch = /<body[^>]*>([\s\S]*?)(<\/body>|$)/i.exec(sample);
  const body = decode((bodyMatch?.[1] ?? sample).replace(/<(script|style|head)[^>]*>[\s\S]*?<\/\1>/gi, ' '));
  if (title === '') return body;
  const rest = body.startsWith(title) ? body.slice(title.length).trim() : body;
  return rest === '' ? title : `${title} — ${rest}`;
}
