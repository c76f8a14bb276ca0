/**
 * Per-organization manuscript state of the emulator, kept as a `World.orgExtension` so
 * `/_emulator/reset` drops it: stored manuscripts (upsert by origin_id, spec "States and
 * transitions" rules 1–2), marked referees, and webhook targets. Folders live in the world
 * (`World.folder`), which creates them on demand.
 */
import type { Candidate } from '../../client/schemas.js';
import type { OrgState, World } from '../world.js';

export interface ManuscriptAuthor {
  name: string | null;
  affiliation: string | null;
  orcid: string | null;
  email: string | null;
}

export interface StoredManuscript {
  id: number;
  originId: string;
  folderId: number;
  folderName: string;
  title: string;
  abstract: string;
  authorsCount: number;
  /** Authors sent as `authorK_*` form fields. */
  formAuthors: ManuscriptAuthor[];
  /** Authors found in the parsed source file's header (lines with an email or ORCID). */
  parsedAuthors: ManuscriptAuthor[];
  sourceFile: string | null;
  text: string;
  references: string[];
  /** Every candidate of the last upload after boost but before filters and settings, by author id (used by marking). */
  ranked: Map<number, Candidate>;
}

/** A referee mark. Score and concepts are frozen at the first marking (docs/service-contract.md, The webhook). */
export interface MarkState {
  marked: boolean;
  markedBy: string;
  frozenScore: number;
  frozenConcepts: string[];
  /** The candidate as first marked, used if a later upload no longer ranks the author. */
  snapshot: Candidate;
}

export interface WebhookTarget {
  url: string;
  apiKey: string;
}

export class ManuscriptsState {
  readonly manuscripts = new Map<string, StoredManuscript>();
  readonly manuscriptsById = new Map<number, StoredManuscript>();
  /** manuscript id → author id → mark. */
  readonly marks = new Map<number, Map<number, MarkState>>();
  /** The fixture's `webhooks` plus any added at run time through `POST /_emulator/webhooks`. */
  readonly webhooks: WebhookTarget[];

  constructor(org: OrgState) {
    this.webhooks = org.fixture.webhooks.map((hook) => ({ url: hook.url, apiKey: hook.api_key }));
  }

  /** Stores a manuscript: a known origin_id keeps its manuscript_id and is updated (and moved). */
  upsert(world: World, org: OrgState, fields: Omit<StoredManuscript, 'id'>): { manuscript: StoredManuscript; created: boolean } {
    const existing = this.manuscripts.get(fields.originId);
    const manuscript: StoredManuscript = { ...fields, id: existing?.id ?? world.nextId('manuscript') };
    this.manuscripts.set(manuscript.originId, manuscript);
    this.manuscriptsById.set(manuscript.id, manuscript);
    // Mirrored into the world's map, which `/_emulator/state` counts.
    org.manuscripts.set(manuscript.originId, manuscript);
    return { manuscript, created: existing === undefined };
  }

  marksOf(manuscriptId: number): Map<number, MarkState> {
    let marks = this.marks.get(manuscriptId);
    if (!marks) {
      marks = new Map();
      this.marks.set(manuscriptId, marks);
    }
    return marks;
  }
}

/** The manuscripts state of an org, created on first use. */
export function manuscriptsOf(world: World, org: OrgState): ManuscriptsState {
  return world.orgExtension(org, 'manuscripts', (o) => new ManuscriptsState(o));
}
