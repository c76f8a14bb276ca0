/**
 * A small multipart/form-data parser (RFC 7578) for the emulator's manuscript upload
 * (docs/service-contract.md, call 6). It works on the whole buffered body, which the emulator caps in size, and keeps
 * file parts as raw bytes. No dependency: the format is simple enough and fully tested.
 */

export interface MultipartFile {
  /** The form field name (e.g. `source_file`). */
  field: string;
  filename: string;
  contentType: string | null;
  data: Buffer;
}

export interface MultipartForm {
  /** Text fields; a repeated field keeps every value in order. */
  fields: Map<string, string[]>;
  files: MultipartFile[];
}

export class MultipartError extends Error {
  override name = 'MultipartError';
}

/** Reads the boundary from a `Content-Type: multipart/form-data; boundary=...` header. */
export function boundaryOf(contentType: string | undefined): string | null {
  if (!contentType || !/^multipart\/form-data\b/i.test(contentType.trim())) return null;
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match ? (match[1] ?? match[2] ?? null) : null;
}

/** Parses a multipart body; throws `MultipartError` with a precise reason when it is malformed. */
export function parseMultipart(body: Buffer, boundary: string): MultipartForm {
  const delimiter = Buffer.from(`--${boundary}`);
  const form: MultipartForm = { fields: new Map(), files: [] };
  let position = body.indexOf(delimiter);
  if (position < 0) throw new MultipartError('multipart body does not contain its boundary');
  for (;;) {
    position += delimiter.length;
    // `--` after a delimiter closes the body.
    if (body[position] === 0x2d && body[position + 1] === 0x2d) return form;
    if (body[position] === 0x0d && body[position + 1] === 0x0a) position += 2;
    else throw new MultipartError('multipart delimiter is not followed by CRLF');
    const headerEnd = body.indexOf('\r\n\r\n', position);
    if (headerEnd < 0) throw new MultipartError('multipart part has no end of headers');
    const headers = parseHeaders(body.subarray(position, headerEnd).toString('utf8'));
    const contentStart = headerEnd + 4;
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), contentStart);
    if (next < 0) throw new MultipartError('multipart body ends without a closing boundary');
    const content = body.subarray(contentStart, next);
    addPart(form, headers, content);
    position = next + 2;
  }
}

function parseHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

function addPart(form: MultipartForm, headers: Map<string, string>, content: Buffer): void {
  const disposition = headers.get('content-disposition');
  if (!disposition || !/^form-data\b/i.test(disposition)) {
    throw new MultipartError('multipart part lacks `Content-Disposition: form-data`');
  }
  const name = dispositionParam(disposition, 'name');
  if (name === null) throw new MultipartError('multipart part has no field name');
  const filename = dispositionParam(disposition, 'filename');
  if (filename !== null) {
    form.files.push({ field: name, filename, contentType: headers.get('content-type') ?? null, data: Buffer.from(content) });
    return;
  }
  const values = form.fields.get(name) ?? [];
  values.push(content.toString('utf8'));
  form.fields.set(name, values);
}

function dispositionParam(disposition: string, param: string): string | null {
  // `filename*=UTF-8''...` (RFC 5987) wins over the plain form when both are present.
  if (param === 'filename') {
    const extended = /;\s*filename\*=(?:UTF-8|utf-8)''([^;]+)/.exec(disposition);
    if (extended?.[1]) return decodeURIComponent(extended[1]);
  }
  const pattern = new RegExp(`;\\s*${param}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]+))`, 'i');
  const match = pattern.exec(disposition);
  if (!match) return null;
  if (match[1] !== undefined) return match[1].replace(/\\(.)/g, '$1').replace(/%22/g, '"');
  return match[2] ?? null;
}
