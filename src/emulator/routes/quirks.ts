/** `GET` / `POST /_emulator/quirks`: read or change the inconvenient behaviours of quirks.ts. */
import type { Route } from '../router.js';
import { badRequest, json } from '../reply.js';
import { quirksOf, quirksPatchSchema, updateQuirks } from '../quirks.js';

export const routes: Route[] = [
  {
    method: 'GET',
    pattern: '/_emulator/quirks',
    auth: 'none',
    handle: ({ runtime }) => json(quirksOf(runtime)),
  },
  {
    method: 'POST',
    pattern: '/_emulator/quirks',
    auth: 'none',
    handle(ctx) {
      const parsed = quirksPatchSchema.safeParse(ctx.jsonObject());
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw badRequest('validation_error', `${issue.path.join('.') || '(body)'}: ${issue.message}`);
      }
      return json(updateQuirks(ctx.runtime, parsed.data));
    },
  },
];
