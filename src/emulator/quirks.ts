/**
 * Inconvenient behaviours a real service may show and the emulator, by default, does not.
 * Each is off by default; tests turn one on (option `quirks` of `startEmulator`, `--quirk` of
 * `rostersync emulator`, or `POST /_emulator/quirks`) to prove rostersync copes with it.
 *
 * Kept apart from runtime.ts (rate limit, faults) so each concern stays in one place; the settings
 * hang off the runtime through a WeakMap, so nothing else needs to carry them.
 */
import { z } from 'zod';
import type { EmulatorRuntime } from './runtime.js';
import type { Reply } from './reply.js';

export const ERROR_SHAPES = ['emulator', 'detail', 'field-errors', 'html'] as const;
export type ErrorShape = (typeof ERROR_SHAPES)[number];

export interface Quirks {
  /**
   * client_ids whose record writes (full POST, partial POST, DELETE) answer 200 `{"ok": false}`
   * and change nothing; `"*"` matches every client_id. @default []
   */
  okFalse: string[];
  /**
   * Order of multi_option values in GET answers: `as-sent` (as written) or `service` (the reverse
   * of the field's option list, newest option first, as a database ordering by id descending
   * would give; never simply sorted). @default 'as-sent'
   */
  optionOrder: 'as-sent' | 'service';
  /**
   * Body of error answers: `emulator` (`{"ok": false, "error": {code, message}}`), `detail`
   * (`{"detail": message}`), `field-errors` (`{"<field>": [message]}`, `non_field_errors` when no
   * field applies) or `html` (an HTML error page, same status). @default 'emulator'
   */
  errorShape: ErrorShape;
  /** Status of a successful group creation. @default 200 */
  groupCreatedStatus: 200 | 201;
  /** A path without its trailing slash answers 301 to the slashed path (instead of 404). @default false */
  slashRedirect: boolean;
  /**
   * The custom-fields listing adds an author_from_group field of a kind the spec does not list
   * (`rich_text`). Writes to it are refused as an unknown field; a fixture may also declare fields
   * of any kind, whose values are then not checked. @default false
   */
  unknownKindField: boolean;
  /**
   * Record paths whose client_id a strict server would not route answer 404: an encoded "/" or "\\",
   * control characters, more than 255 characters (`client/path-rules.ts`). @default false
   */
  strictClientIds: boolean;
  /**
   * Error answers and `{"ok": false}` answers quote the request's X-ApiKey, URL-encoded and
   * upper-cased, as the debug page of a misconfigured service might. @default false
   */
  echoKey: boolean;
}

export const DEFAULT_QUIRKS: Quirks = {
  okFalse: [],
  optionOrder: 'as-sent',
  errorShape: 'emulator',
  groupCreatedStatus: 200,
  slashRedirect: false,
  unknownKindField: false,
  strictClientIds: false,
  echoKey: false,
};

/** Body of `POST /_emulator/quirks` and the `quirks` option: every key optional. */
export const quirksPatchSchema = z.strictObject({
  okFalse: z.array(z.string()).optional(),
  optionOrder: z.enum(['as-sent', 'service']).optional(),
  errorShape: z.enum(ERROR_SHAPES).optional(),
  groupCreatedStatus: z.union([z.literal(200), z.literal(201)]).optional(),
  slashRedirect: z.boolean().optional(),
  unknownKindField: z.boolean().optional(),
  strictClientIds: z.boolean().optional(),
  echoKey: z.boolean().optional(),
});
export type QuirksPatch = z.infer<typeof quirksPatchSchema>;

const byRuntime = new WeakMap<EmulatorRuntime, Quirks>();

export function quirksOf(runtime: EmulatorRuntime): Quirks {
  let quirks = byRuntime.get(runtime);
  if (!quirks) {
    quirks = { ...DEFAULT_QUIRKS, okFalse: [] };
    byRuntime.set(runtime, quirks);
  }
  return quirks;
}

export function updateQuirks(runtime: EmulatorRuntime, patch: QuirksPatch): Quirks {
  const quirks = quirksOf(runtime);
  for (const [key, value] of Object.entries(patch) as Array<[keyof Quirks, Quirks[keyof Quirks] | undefined]>) {
    if (value !== undefined) Object.assign(quirks, { [key]: value });
  }
  return { ...quirks, okFalse: [...quirks.okFalse] };
}

/** Whether a record write for this client_id answers `{"ok": false}`. */
export function refusesWrite(runtime: EmulatorRuntime, clientId: string): boolean {
  const { okFalse } = quirksOf(runtime);
  return okFalse.includes('*') || okFalse.includes(clientId);
}

/** The key as the echoKey quirk quotes it: changed, so only a redaction of its other forms hides it. */
export function echoedKey(header: string | string[] | undefined): string {
  const key = Array.isArray(header) ? (header[0] ?? '') : (header ?? '');
  return encodeURIComponent(key).toUpperCase();
}

/** Quirk echoKey on an error answer: its message ends with the request's key (see `echoedKey`). */
export function withEchoedKey(reply: Reply, header: string | string[] | undefined): Reply {
  const body = reply.body as { error?: { code?: string; message?: unknown } } | undefined;
  if (reply.status < 400 || typeof body?.error?.message !== 'string') return reply;
  return { ...reply, body: { ...body, error: { ...body.error, message: `${body.error.message} (request key: ${echoedKey(header)})` } } };
}

/** The api_id of the field `unknownKindField` adds. */
export const UNKNOWN_KIND_FIELD = {
  api_id: '00000000-0000-4000-8000-0000000000ff',
  data_kind: 'rich_text',
  name: 'Notes (rich text)',
  description: 'A field of a kind the spec does not list (emulator quirk unknownKindField)',
} as const;

/**
 * Re-shapes an error answer (the emulator's `{"ok": false, "error": {code, message}}`) per the
 * `errorShape` quirk. Other answers pass unchanged.
 */
export function shapeErrorReply(reply: Reply, shape: ErrorShape): Reply {
  if (shape === 'emulator' || reply.status < 400 || reply.raw !== undefined) return reply;
  const error = (reply.body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (typeof error?.message !== 'string') return reply;
  const message = error.message;
  const base = reply.headers ? { status: reply.status, headers: reply.headers } : { status: reply.status };
  switch (shape) {
    case 'detail':
      return { ...base, body: { detail: message } };
    case 'field-errors': {
      // Messages of the emulator name a field first ("name: ...", `field "name" is required`).
      const field = /^field "([^"]+)"/.exec(message)?.[1] ?? /^([a-z_][\w.]*): /i.exec(message)?.[1] ?? 'non_field_errors';
      return { ...base, body: { [field]: [message] } };
    }
    case 'html':
      return { ...base, raw: htmlErrorPage(reply.status, message), contentType: 'text/html; charset=utf-8' };
  }
}

function htmlErrorPage(status: number, message: string): string {
  const text = message.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Error ${status}</title>
<style>body{font-family:sans-serif}</style></head>
<body><h1>Error ${status}</h1><p>${text}</p><hr><address>service</address></body></html>
`;
}
