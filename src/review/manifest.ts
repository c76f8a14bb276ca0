/** `review.json` at the review artifact's root: which plans it holds, for which commit. */
import { z } from 'zod';

export const reviewManifestSchema = z.strictObject({
  kind: z.literal('rostersync-review'),
  headSha: z.string(),
  pullRequest: z.number().int(),
  pipelines: z.array(z.strictObject({ name: z.string(), file: z.string(), plan: z.string().nullable(), exitCode: z.number().int() })),
});
export type ReviewManifest = z.infer<typeof reviewManifestSchema>;
