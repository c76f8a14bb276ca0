/**
 * Per-organization manuscript state of the emulator: folders, stored manuscripts (upsert by
 * origin_id, spec "States and transitions" rules 1–2), marked referees, and webhook targets.
 */
import type { Candidate } from '../../client/schemas.js';
import type { FixtureFolder, FixtureOrg } from '../fixture.js';

export interface ManuscriptAuthor {
  name: string | null;
  affiliation: string | null;
  orcid: string | null;
  email: string | null;
}

export interface FolderState {
  id: number;
  name: string;
  journalId: number | null;
  refereeFinder: FixtureFolder['referee_finder'] | null;
}

export interface StoredManuscript {
  id: number;
  originId: string;
  folderId: number;
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
  /** Every candidate of the last upload before filters and settings, by author id (used by marking). */
  ranked: Map<number, Candidate>;
}

/** A referee mark. Score and concepts are frozen at the first marking (spec § Events). */
export interface MarkState {
  marked: boolean;
  markedBy: string;
  frozenScore: number;
  frozenConcepts: string[];
}

export interface WebhookTarget {
  url: string;
  apiKey: string;
}

export class ManuscriptsState {
  readonly folders: FolderState[] = [];
  readonly manuscripts = new Map<string, StoredManuscript>();
  readonly manuscriptsById = new Map<number, StoredManuscript>();
  /** manuscript id → author id → mark. */
  readonly marks = new Map<number, Map<number, MarkState>>();
  readonly webhooks: WebhookTarget[];
  private nextFolderId = 1;
  private nextManuscriptId: number;

  constructor(org: FixtureOrg) {
    for (const folder of org.folders) {
      this.folders.push({
        id: this.nextFolderId++,
        name: folder.name,
        journalId: folder.journal_id ?? null,
        refereeFinder: folder.referee_finder ?? null,
      });
    }
    this.webhooks = org.webhooks.map((hook) => ({ url: hook.url, apiKey: hook.api_key }));
    // Distinct id ranges per org keep manuscript ids unique across the emulator.
    this.nextManuscriptId = org.id * 100_000 + 1;
  }

  folderByName(name: string): FolderState | undefined {
    return this.folders.find((folder) => folder.name === name);
  }

  folderById(id: number): FolderState | undefined {
    return this.folders.find((folder) => folder.id === id);
  }

  /** Spec § Manuscript: "A folder is created automatically when it does not exist." */
  ensureFolder(name: string): FolderState {
    const existing = this.folderByName(name);
    if (existing) return existing;
    const folder: FolderState = { id: this.nextFolderId++, name, journalId: null, refereeFinder: null };
    this.folders.push(folder);
    return folder;
  }

  /** Stores a manuscript: a known origin_id keeps its manuscript_id and is updated (and moved). */
  upsert(fields: Omit<StoredManuscript, 'id'>): { manuscript: StoredManuscript; created: boolean } {
    const existing = this.manuscripts.get(fields.originId);
    const manuscript: StoredManuscript = { ...fields, id: existing?.id ?? this.nextManuscriptId++ };
    this.manuscripts.set(manuscript.originId, manuscript);
    this.manuscriptsById.set(manuscript.id, manuscript);
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
