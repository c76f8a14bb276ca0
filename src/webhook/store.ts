/**
 * The receiver's store of referee selections: per manuscript, the full set of marked referees
 * from the latest applied `mark_as_proposal_referee` event (docs/service-contract.md, The webhook: "The payload lists the
 * marked referees after the action").
 *
 * One JSON file, rewritten atomically (temp file + rename, mode 0600: it holds names and emails)
 * after every applied event. `order` is the way to order events (design brief), so an event whose
 * order is not above the last applied one for its manuscript is ignored: duplicates and late
 * retries are harmless.
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { webhookCandidateSchema, webhookPayloadSchema, type WebhookEnvelope } from '../client/schemas.js';
import { UserFacingError } from '../errors/user-facing-error.js';

export const STORE_VERSION = 1;

export const storedSelectionSchema = z.object({
  manuscript_id: z.number().int(),
  origin_id: z.string().nullable(),
  /** `order` of the event this selection comes from. */
  order: z.number().int(),
  timestamp: z.number().int(),
  /** When the receiver applied it (ISO 8601). */
  received_at: z.string(),
  payload_version: z.number().int(),
  authors_groups_settings: webhookPayloadSchema.shape.authors_groups_settings,
  referees: z.array(webhookCandidateSchema),
});
export type StoredSelection = z.infer<typeof storedSelectionSchema>;

export const storeFileSchema = z.object({
  version: z.literal(STORE_VERSION),
  /** Keyed by manuscript_id (origin_id is nullable in the payload). */
  manuscripts: z.record(z.string(), storedSelectionSchema),
});
export type StoreFile = z.infer<typeof storeFileSchema>;

const emptyStore = (): StoreFile => ({ version: STORE_VERSION, manuscripts: {} });

function parseStore(text: string, path: string): StoreFile {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new UserFacingError(`webhook store ${path} is not valid JSON: ${(error as Error).message}`, {
      hint: 'restore it from a backup or move it away to start an empty store',
    });
  }
  const parsed = storeFileSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UserFacingError(`webhook store ${path} is not a rostersync webhook store: ${issue.path.join('.') || '(root)'}: ${issue.message}`, {
      hint: 'point --store at the file `rostersync webhook serve` writes',
    });
  }
  return parsed.data;
}

/** Reads a store file; a missing file is an empty store. */
export function readStoreFile(path: string): StoreFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return emptyStore();
    throw new UserFacingError(`cannot read webhook store ${path}: ${(error as Error).message}`);
  }
  return parseStore(text, path);
}

/** Selections sorted by manuscript id, optionally only one origin_id. */
export function listSelections(store: StoreFile, originId?: string): StoredSelection[] {
  return Object.values(store.manuscripts)
    .filter((s) => originId === undefined || s.origin_id === originId)
    .sort((a, b) => a.manuscript_id - b.manuscript_id);
}

export type ApplyResult = 'applied' | 'stale';

export class RefereeStore {
  private data: StoreFile;
  /** Applies run one after another, so two events never interleave their writes. */
  private queue: Promise<unknown> = Promise.resolve();
  private tempCounter = 0;

  private constructor(
    readonly path: string,
    data: StoreFile,
    private readonly now: () => Date,
  ) {
    this.data = data;
  }

  static async open(path: string, options: { now?: () => Date } = {}): Promise<RefereeStore> {
    let data = emptyStore();
    try {
      data = parseStore(await readFile(path, 'utf8'), path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    return new RefereeStore(path, data, options.now ?? (() => new Date()));
  }

  snapshot(): StoreFile {
    return structuredClone(this.data);
  }

  /** Applies an event unless a later (or the same) order was applied for its manuscript. */
  apply(envelope: WebhookEnvelope): Promise<ApplyResult> {
    const run = this.queue.then(() => this.applyNow(envelope));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async applyNow(envelope: WebhookEnvelope): Promise<ApplyResult> {
    const key = String(envelope.payload.manuscript_id);
    const current = this.data.manuscripts[key];
    if (current && envelope.order <= current.order) return 'stale';
    const next: StoreFile = {
      ...this.data,
      manuscripts: {
        ...this.data.manuscripts,
        [key]: {
          manuscript_id: envelope.payload.manuscript_id,
          origin_id: envelope.payload.origin_id,
          order: envelope.order,
          timestamp: envelope.timestamp,
          received_at: this.now().toISOString(),
          payload_version: envelope.payload.version,
          authors_groups_settings: envelope.payload.authors_groups_settings,
          referees: envelope.payload.candidates,
        },
      },
    };
    await this.write(next);
    this.data = next; // only once it is durable: a failed write leaves memory and disk agreeing
    return 'applied';
  }

  private async write(data: StoreFile): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    const temp = `${this.path}.${process.pid}.${++this.tempCounter}.tmp`;
    await writeFile(temp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    await chmod(temp, 0o600);
    await rename(temp, this.path);
  }
}
